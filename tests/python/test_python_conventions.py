"""The Python package's conventions (docs/python.md): h5fz.Filter as an
h5py FilterRefBase (compression= and **kwargs, hashable), Filter back from a
dataset and from cd_values, get_config()'s modes and chains, and the
xarray recipes (both engines, re-saving an opened dataset, a file whose
encoding carries shuffle=True).

Runs with this process's h5py (Debian's 3.7) against the package the CMake
build lays out in <build>/python; the PyPI h5py wheel runs the ported
suites (tests/python/ported, test_ported_suites.py). Every round trip is
checked element by element against its bound."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

_PKG = pathlib.Path(os.environ["H5FZ_BUILD_DIR"]) / "python"
if not (_PKG / "h5fz" / "libh5fz_py.so").is_file():
    pytest.skip("the build has no Python package (%s; H5FZ_PYTHON_PACKAGE=OFF?)" % _PKG, allow_module_level=True)
sys.path.insert(0, str(_PKG))
import h5fz  # noqa: E402

SPECS = [dict(abs=1e-3), dict(rel=1e-4), dict(pw_rel=1e-2), dict(lossless=True),
         dict(abs=0.25, chain="lorenzo_nd zigzag bitshuffle rze"),
         dict(rel=1e-3, chain="delta zigzag bitpack", subchunk=8192)]


def _field(shape=(6, 45, 60), dtype="f4", seed=0):
    g = np.indices(shape).astype(np.float64)
    a = 280 + 10 * np.sin(0.11 * g[2]) * np.cos(0.07 * g[1]) + 0.5 * g[0]
    return (a + np.random.default_rng(seed).normal(0, 0.05, shape)).astype(dtype)


def _check(filt, orig, dec, what):
    """Every element within the Filter's bound (lossless: equal bits)."""
    mode, bound = filt.mode, filt.bound
    if mode == "lossless":
        assert np.array_equal(orig.view("u%d" % orig.itemsize), np.asarray(dec).view("u%d" % orig.itemsize)), what
    elif mode == "abs":
        lib.check_bound(orig, dec, bound, what)
    elif mode == "rel":  # per chunk; the whole range bounds every chunk's
        lib.check_bound(orig, dec, bound * float(orig.max() - orig.min()), what)
    else:
        err = np.abs(orig.astype(np.float64) - np.asarray(dec, np.float64))
        assert (err <= bound * np.abs(orig.astype(np.float64))).all(), "%s: pointwise bound broken" % what


def _pipeline(d):
    plist = d.id.get_create_plist()
    return [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]


@pytest.mark.parametrize("kwargs", SPECS, ids=lambda k: " ".join("%s=%s" % i for i in k.items()))
def test_filter_as_compression_and_as_kwargs(tmp_path, kwargs):
    """Both of hdf5plugin's forms: compression=Filter(...) (h5py's
    FilterRefBase path, once 'unhashable type') and **Filter(...)."""
    a = _field()
    filt = h5fz.Filter(**kwargs)
    assert isinstance(filt, h5py.filters.FilterRefBase)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d1 = f.create_dataset("as_compression", data=a, chunks=(3, 45, 60), compression=filt)
        d2 = f.create_dataset("as_kwargs", data=a, chunks=(3, 45, 60), **filt)
        for d in (d1, d2):
            assert _pipeline(d) == [h5fz.FILTER_ID], d.name
            mask, chunk = d.id.read_direct_chunk((0, 0, 0))
            assert mask == 0
            _check(filt, a, d[...], "%s %s" % (filt.spec, d.name))
        assert h5fz.Filter.from_dataset(d1) == h5fz.Filter.from_dataset(d2) == filt


def test_filter_is_hashable_and_equal_by_words():
    a, b = h5fz.Filter(abs=1e-3), h5fz.Filter("abs=0.001 delta zigzag bitshuffle rze")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != h5fz.Filter(abs=2e-3) and a != h5fz.Filter(rel=1e-3)
    assert dict(a) == {"compression": h5fz.FILTER_ID, "compression_opts": a.cd_values, "shuffle": False}
    assert a.filter_id == h5fz.FILTER_ID and a.filter_options == a.cd_values


@pytest.mark.parametrize("kwargs", SPECS, ids=lambda k: " ".join("%s=%s" % i for i in k.items()))
def test_filter_from_dataset_and_from_cd_values(tmp_path, kwargs):
    """The Filter a dataset was made with comes back from its pipeline
    (user words plus set_local's dataset part, all of them) and from the
    words alone, in keyword form: Filter(**f.get_config()) == f."""
    filt = h5fz.Filter(**kwargs)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("t", data=_field(dtype="f8"), chunks=(2, 45, 60), fillvalue=-1.0, **filt)
        back = h5fz.Filter.from_dataset(d)
        stored = d.id.get_create_plist().get_filter(0)[2]
    assert back == filt and back.spec == filt.spec
    assert len(stored) > len(filt.cd_values)  # set_local's words were there, and are left out
    assert h5fz.Filter.from_cd_values(filt.cd_values) == filt
    config = filt.get_config()
    assert h5fz.Filter(**config) == filt
    mode = [k for k in ("abs", "rel", "pw_rel", "lossless") if k in kwargs][0]
    assert config[mode] == kwargs[mode] and filt.mode == mode
    assert config["chain"] == kwargs.get("chain", "delta zigzag bitshuffle rze")
    assert config["subchunk"] == kwargs.get("subchunk", 16384)


def test_filter_from_words_of_the_cli_and_bad_words():
    """Words as `h5fz cd-values` prints them (and the short legacy form
    UD=32770,0,0: the defaults); words that are not h5fz's get the C
    decoder's message; non-words a TypeError."""
    cd, _ud = lib.cd_values("pw_rel=1e-3 lorenzo_nd zigzag bitpack")
    assert h5fz.Filter.from_cd_values(cd).spec == "pw_rel=0.001 quant lorenzo_nd zigzag bitpack"
    assert h5fz.Filter.from_cd_values([]) == h5fz.Filter()
    with pytest.raises(ValueError, match="version word is 7"):
        h5fz.Filter.from_cd_values([7, 0])
    with pytest.raises(ValueError, match="not a valid h5fz spec"):
        h5fz.Filter.from_cd_values([1, 0, 0, 0, 16384, 2, 1, 99])
    for bad in ("1 0", [1, -1], [1, 2 ** 32], [1.5]):
        with pytest.raises(TypeError):
            h5fz.Filter.from_cd_values(bad)


def test_filter_from_dataset_without_h5fz(tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("g", data=_field(), chunks=(3, 45, 60), compression="gzip")
        with pytest.raises(ValueError, match=r"no h5fz filter .* its filters: \[1\]"):
            h5fz.Filter.from_dataset(d)
        with pytest.raises(TypeError):
            h5fz.Filter.from_dataset(f)


def test_get_config_reads_the_codecs_settings():
    """get_config()'s device_setting and GPU ordinal are the codec's
    settings (fusion/h5fz_settings.c), read as the codec reads them: the
    device in any case, and a GPU ordinal that is no number ignored with
    the codec's one warning (get_config read it on its own before, and
    said nothing). A fresh process: the warning is once per process."""
    env = dict(os.environ, PYTHONPATH=str(_PKG), H5FZ_DEVICE="Cpu", H5FZ_GPU_ORDINAL="first")
    env.pop("H5FZ_QUIET", None)
    code = "import json, h5fz; c = h5fz.get_config(); print(json.dumps([c['device_setting'], c['executor']]))"
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == ["Cpu", "cpu"], p.stdout
    assert p.stderr.count("h5fz: ignoring H5FZ_GPU_ORDINAL=first") == 1, p.stderr


def test_get_config_lists_modes_and_chains():
    """modes and chains come from the C library's tables: the same as the
    CLI's `h5fz ops`, and each mode name is a Filter keyword; the keys that
    were there stay."""
    cfg = h5fz.get_config()
    for key in ("version", "filter_id", "plugin", "plugin_path", "library", "libhdf5", "hdf5_version",
                "h5py_version", "registered", "registration_error", "device_setting", "gpu_present",
                "executor", "kernel_class"):
        assert key in cfg, key
    assert [m["name"] for m in cfg["modes"]] == ["abs", "rel", "pw_rel", "lossless"]
    assert [m["id"] for m in cfg["modes"]] == [0, 1, 2, 3]
    for m in cfg["modes"]:
        f = h5fz.Filter(**{m["name"]: True if m["name"] == "lossless" else 1e-3})
        assert f.mode == m["name"] and f.cd_values[1] == m["id"]  # word 1 of the user part: the mode
    cli = lib.cli("ops").stdout.splitlines()
    rows = [line.split(None, 3) for line in cli[1:] if line.strip() and line.split()[0].isdigit()]
    assert [(int(r[0]), r[1], r[2], r[3]) for r in rows] == \
        [(o["id"], o["name"], o["kind"], o["summary"]) for o in cfg["chains"]["ops"]]
    default = [line for line in cli if line.startswith("default chain")][0].split(": ", 1)[1]
    assert "quant " + cfg["chains"]["default"] == default
    # every transform and coder the table lists is one the parser takes
    # (in some short chain: coders differ in the stream they need)
    for op in cfg["chains"]["ops"]:
        tries = {"map": [], "transform": ["%s rze", "%s bitshuffle rze", "%s zigzag bitpack"],
                 "coder": ["bitshuffle %s", "zigzag %s", "%s"]}[op["kind"]]
        accepted = []
        for chain in tries:
            try:
                accepted.append(h5fz.Filter(abs=1e-3, chain=chain % op["name"]).chain)
            except ValueError:
                pass
        assert accepted or op["kind"] == "map", "no chain with %s is accepted" % op["name"]


# ---- xarray ------------------------------------------------------------------

def _xr():
    try:
        import xarray
        import h5netcdf  # noqa: F401
    except ImportError as e:
        pytest.skip("xarray or h5netcdf missing (%s): install Debian's python3-xarray python3-h5netcdf" % e)
    return xarray


def _dataset(xr):
    t = _field()
    return xr.Dataset({"t": (("time", "lat", "lon"), t, {"units": "K"})},
                      coords={"time": np.arange(t.shape[0]) * 6.0, "lat": np.linspace(-89.5, 89.5, t.shape[1]),
                              "lon": np.linspace(0, 354, t.shape[2])}), t


def _stored(path, name="t"):
    with h5py.File(path, "r") as f:
        d = f[name]
        return _pipeline(d), d.chunks, (h5fz.Filter.from_dataset(d) if h5fz.FILTER_ID in _pipeline(d) else None)


def test_xarray_h5netcdf_write_and_resave_keep_the_filter(tmp_path):
    """Write with an h5fz encoding; open (both engines) and re-save with
    h5fz.netcdf_encoding(ds): the filter, its words and the chunks carry
    over, coordinates stay exact. Without it xarray forgets the filter
    (Debian's xarray) or names it "unknown" (h5py 3.16), so the recipe
    names it."""
    xr = _xr()
    ds, t = _dataset(xr)
    filt = h5fz.Filter(abs=1e-3)
    first = tmp_path / "first.nc"
    ds.to_netcdf(first, engine="h5netcdf", encoding={"t": {**filt, "chunksizes": (2, 45, 60)}})
    assert _stored(first) == ([h5fz.FILTER_ID], (2, 45, 60), filt)
    for engine in ("h5netcdf", "netcdf4"):
        if engine == "netcdf4":
            pytest.importorskip("netCDF4", reason="netCDF4 missing: install Debian's python3-netcdf4")
        again = tmp_path / ("again_%s.nc" % engine)
        with xr.open_dataset(first, engine=engine) as opened:
            enc = h5fz.netcdf_encoding(opened)
            assert list(enc) == ["t"], enc  # only what the file stores with h5fz
            opened.to_netcdf(again, engine="h5netcdf", encoding=enc)
        assert _stored(again) == ([h5fz.FILTER_ID], (2, 45, 60), filt), engine
        with xr.open_dataset(again, engine="h5netcdf") as back:
            lib.check_bound(t, back["t"].values, 1e-3, "re-saved after opening with %s" % engine)
            assert np.array_equal(back["lat"].values, ds["lat"].values)


def test_xarray_switches_a_shuffled_gzip_file_to_h5fz(tmp_path):
    """A netCDF file compressed as netCDF does it (zlib with shuffle): its
    encoding carries shuffle=True, which h5fz refuses before it. Updating
    the encoding with a Filter works (its mapping says shuffle=False), as
    does netcdf_encoding(ds, filter=...); without shuffle=False the error
    names the shuffle filter."""
    xr = _xr()
    ds, t = _dataset(xr)
    gz = tmp_path / "gzip.nc"
    ds.to_netcdf(gz, engine="h5netcdf", encoding={"t": {"zlib": True, "complevel": 4, "shuffle": True}})
    filt = h5fz.Filter(abs=1e-3)
    with xr.open_dataset(gz, engine="h5netcdf") as opened:
        assert opened["t"].encoding["shuffle"] is True
        with pytest.raises(ValueError, match="shuffle"):
            opened.to_netcdf(tmp_path / "refused.nc", engine="h5netcdf",
                             encoding={"t": {"compression": h5fz.FILTER_ID, "compression_opts": filt.cd_values,
                                             "shuffle": True}})
        opened["t"].encoding.update(filt)  # the carried encoding, updated in place
        opened.to_netcdf(tmp_path / "updated.nc", engine="h5netcdf")
        opened.to_netcdf(tmp_path / "switched.nc", engine="h5netcdf",
                         encoding=h5fz.netcdf_encoding(opened, filter=filt))
    for name in ("updated.nc", "switched.nc"):
        pipe, _chunks, stored = _stored(tmp_path / name)
        assert pipe == [h5fz.FILTER_ID] and stored == filt, name
        with xr.open_dataset(tmp_path / name, engine="h5netcdf") as back:
            lib.check_bound(t, back["t"].values, 1e-3, name)
            for c in ("time", "lat", "lon"):  # coordinates are not data variables: not given the filter
                assert np.array_equal(back[c].values, ds[c].values)
        assert _stored(tmp_path / name, "lat")[0] != [h5fz.FILTER_ID]


def test_xarray_netcdf4_engine_then_nccopy(tmp_path):
    """The netcdf4 engine has no key for a plugin filter (it refuses
    compression_opts); its recipe: write, then nccopy -F with the Filter's
    words and h5fz.PLUGIN_PATH. Both engines read the result."""
    xr = _xr()
    pytest.importorskip("netCDF4", reason="netCDF4 missing: install Debian's python3-netcdf4")
    if shutil.which("nccopy") is None:
        pytest.skip("nccopy not found: install Debian's netcdf-bin")
    ds, t = _dataset(xr)
    filt = h5fz.Filter(abs=1e-3)
    with pytest.raises(ValueError, match="compression_opts"):
        ds.to_netcdf(tmp_path / "no.nc", engine="netcdf4", encoding={"t": filt})
    plain, out = tmp_path / "plain.nc", tmp_path / "h5fz.nc"
    ds.to_netcdf(plain, engine="netcdf4", encoding={"t": {"chunksizes": (2, 45, 60)}})
    env = dict(os.environ, HDF5_PLUGIN_PATH=h5fz.PLUGIN_PATH)
    words = ",".join(str(w) for w in (h5fz.FILTER_ID,) + filt.cd_values)
    p = subprocess.run(["nccopy", "-F", "t,%s" % words, str(plain), str(out)], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stderr
    assert _stored(out) == ([h5fz.FILTER_ID], (2, 45, 60), filt)
    for engine in ("h5netcdf", "netcdf4"):
        with xr.open_dataset(out, engine=engine) as back:
            lib.check_bound(t, back["t"].values, 1e-3, "nccopy -F, read with %s" % engine)
