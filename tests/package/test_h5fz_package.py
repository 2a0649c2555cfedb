"""The installed h5fz Python package (run by run_package_tests.py in a venv
where `pip install .` put it; HDF5_PLUGIN_PATH is not set).

Every check is on every element: the bound of each mode, chunk bytes equal
between h5fz.write and the filter path, values equal between h5fz.read and
h5py's read."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import h5fz

SRC = pathlib.Path(os.environ["H5FZ_SOURCE_DIR"])
BIN = os.environ["H5FZ_BIN"]
DATA = pathlib.Path(os.environ.get("H5FZ_DATA_DIR", SRC.parent / "shared" / "data"))
EMBEDDED = SRC / "tests" / "data" / "mitgcm_deep_convection_theta_float32_50x100x100.f32"
VENV = os.environ.get("H5FZ_PACKAGE_VENV", "?")


def embedded():
    return np.fromfile(EMBEDDED, "<f4").reshape(50, 100, 100)


def shared(name, dtype, shape):
    path = DATA / name
    if not path.is_file():
        pytest.skip("%s is not in %s" % (name, DATA))
    return np.fromfile(path, dtype).reshape(shape)


def cli_cd_values(spec):
    p = subprocess.run([BIN, "cd-values", "--json", "--", spec], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def chunks_of(dset):
    """{chunk offset: (filter mask, bytes)} of every stored chunk."""
    out = {}
    for i in range(dset.id.get_num_chunks()):
        off = dset.id.get_chunk_info(i).chunk_offset
        out[off] = dset.id.read_direct_chunk(off)
    return out


def check_bound(orig, back, mode, bound, chunks=None, fill=None):
    """Every element of back within the promise of mode for orig."""
    assert back.shape == orig.shape and back.dtype == orig.dtype
    o, b = orig.astype(np.float64), back.astype(np.float64)
    special = ~np.isfinite(o)
    assert np.array_equal(np.isnan(o), np.isnan(b)), "NaN positions changed"
    assert np.array_equal(o[special & ~np.isnan(o)], b[special & ~np.isnan(o)]), "Inf changed"
    err = np.where(special, 0.0, np.abs(o - b))
    if mode == "lossless":
        assert np.array_equal(orig.view(np.uint8), back.view(np.uint8))
    elif mode == "abs":
        assert err.max() <= bound, "max error %g > abs bound %g" % (err.max(), bound)
    elif mode == "pw_rel":
        assert np.all(err <= bound * np.abs(o)), "pw_rel bound broken"
        assert np.array_equal(np.signbit(o[o == 0]), np.signbit(b[o == 0]))
    elif mode == "rel":  # per chunk: bound x range of its finite, non-fill values
        grid = [range(0, n, c) for n, c in zip(orig.shape, chunks)]
        for start in np.array(np.meshgrid(*grid, indexing="ij")).reshape(len(chunks), -1).T:
            sl = tuple(slice(s, s + c) for s, c in zip(start, chunks))
            v = o[sl][np.isfinite(o[sl])]
            if fill is not None:
                v = v[v != fill]
            rng = float(v.max() - v.min()) if v.size else 0.0
            assert err[sl].max() <= bound * rng, "rel bound broken in chunk at %s" % (tuple(start),)
    else:
        raise AssertionError(mode)


# ---- import, registration, configuration ------------------------------------------

def test_import_registers_the_filter():
    assert "HDF5_PLUGIN_PATH" not in os.environ
    assert h5fz.FILTER_ID == int(os.environ.get("H5FZ_FILTER_ID", "32770"))
    assert h5py.h5z.filter_avail(h5fz.FILTER_ID)
    cfg = h5fz.get_config()
    assert cfg["registered"] is True and cfg["registration_error"] is None
    assert h5fz.__version__ == os.environ["H5FZ_EXPECT_VERSION"] == cfg["version"]
    assert pathlib.Path(h5fz.PLUGIN_PATH, "libh5fz.so").is_file()
    assert cfg["plugin"] == os.path.join(h5fz.PLUGIN_PATH, "libh5fz.so")
    # bound to the libhdf5 h5py loaded: the one in this process's maps
    with open("/proc/self/maps") as m:
        maps = m.read()
    assert cfg["libhdf5"] in maps and "libhdf5" in os.path.basename(cfg["libhdf5"])
    assert cfg["hdf5_version"] == h5py.version.hdf5_version
    assert cfg["executor"] in ("cpu", "gpu") and cfg["kernel_class"]
    print("%s: h5py %s, HDF5 %s, %s, executor %s" % (VENV, h5py.version.version, cfg["hdf5_version"],
                                                     cfg["libhdf5"], cfg["executor"]))


def test_config_threads_follow_the_affinity_mask():
    """get_config()["threads"] is the CPU executor's count, the one `h5fz
    plan` prints: under `taskset -c 0` one (the online count said 2 or
    more), H5FZ_THREADS still over the mask."""
    import shutil
    cfg = h5fz.get_config()
    assert isinstance(cfg["threads"], int) and 1 <= cfg["threads"] <= 64, cfg
    plan = json.loads(subprocess.run([BIN, "plan", "--json"], capture_output=True, text=True, check=True).stdout)
    assert cfg["threads"] == plan["host_threads"], (cfg["threads"], plan["host_threads_from"])
    if not shutil.which("taskset"):
        pytest.skip("taskset (util-linux) is not installed")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one online CPU: a one-CPU mask limits nothing here")
    code = "import h5fz; print(h5fz.get_config()['threads'])"
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_THREADS"}
    one = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    assert one.stdout.strip() == "1", one.stdout + one.stderr
    env["H5FZ_THREADS"] = "3"
    three = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, check=True)
    assert three.stdout.strip() == "3", three.stdout + three.stderr


def test_rel_above_one_warns_and_keeps_its_bound(tmp_path):
    """rel= above 1 (errors beyond 100 % of the range) is kept, as SZ3
    keeps it, but said: by Filter (UserWarning, the C text the CLI
    prints) and by the filter's set_local on stderr (docs/spec.md)."""
    with pytest.warns(UserWarning, match=r"rel=2 allows errors of up to 200 % .*did you mean rel=0.02"):
        f = h5fz.Filter(rel=2)
    cli = subprocess.run([BIN, "cd-values", "rel=2"], capture_output=True, text=True)
    assert cli.returncode == 0 and "warning: rel=2 allows errors of up to 200 %" in cli.stderr, cli.stderr
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h5fz.Filter(rel=1)  # 100 %: the edge, not beyond it
        h5fz.Filter(rel=0.5)
    code = textwrap.dedent("""
        import sys, warnings, h5py, numpy as np, h5fz
        warnings.simplefilter("ignore")
        a = np.sin(np.arange(20000) / 50).astype("f4")
        with h5py.File(sys.argv[1], "w") as f:
            f.create_dataset("x", data=a, chunks=(5000,), **h5fz.Filter(rel=2))
        with h5py.File(sys.argv[1], "r") as f:
            b = f["x"][...]
        for k in range(4):  # every element within 2 x its chunk's range
            s = slice(5000 * k, 5000 * (k + 1))
            assert np.all(np.abs(b[s].astype("f8") - a[s]) <= 2 * (a[s].max() - a[s].min())), k
        """)
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.h5")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("h5fz: warning: rel=2 allows errors") == 1, p.stderr
    with pytest.warns(UserWarning):  # the same spec as text: the same words, the same warning
        assert f.cd_values == h5fz.Filter("rel=2").cd_values


def test_plugin_path_serves_other_programs(tmp_path):
    """PLUGIN_PATH as HDF5_PLUGIN_PATH for a program that does not import
    h5fz (the h5fz CLI's verify, linked to the system libhdf5)."""
    a = embedded()
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=a, chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
    np.asarray(a).tofile(tmp_path / "a.f32")
    subprocess.run([BIN, "from-raw", tmp_path / "a.f32", tmp_path / "o.h5", "--shape", "50x100x100", "--chunk",
                    "10x100x100", "--dataset", "t"], check=True, capture_output=True)
    p = subprocess.run([BIN, "verify", tmp_path / "o.h5", path, "--abs", "1e-3", "--require-filter"],
                       capture_output=True, text=True, env=dict(os.environ, HDF5_PLUGIN_PATH=h5fz.PLUGIN_PATH))
    assert p.returncode == 0, p.stdout + p.stderr


# ---- Filter: the CLI's cd_values, from the C parser --------------------------------

MODES = [
    ({"abs": 1e-3}, "abs=0.001"),
    ({"rel": 1e-4}, "rel=0.0001"),
    ({"pw_rel": 1e-3}, "pw_rel=0.001"),
    ({"lossless": True}, "lossless"),
    ({"abs": 0.25, "chain": "lorenzo_nd zigzag bitshuffle rze"}, "abs=0.25 lorenzo_nd zigzag bitshuffle rze"),
    ({"abs": 1e-2, "chain": ["delta", "zigzag", "bitpack"]}, "abs=0.01 delta zigzag bitpack"),
    ({"rel": 1e-3, "chain": "lorenzo zigzag bitshuffle rze", "subchunk": 8192},
     "rel=0.001 lorenzo zigzag bitshuffle rze subchunk=8192"),
    ({"abs": 1.0 / 3.0}, "abs=%r" % (1.0 / 3.0)),
    ({}, ""),
]


@pytest.mark.parametrize("kwargs,spec", MODES, ids=[s or "defaults" for _, s in MODES])
def test_filter_gives_the_cli_cd_values(kwargs, spec):
    f = h5fz.Filter(**kwargs)
    want = cli_cd_values(spec) if spec else cli_cd_values(" ")
    assert f["compression"] == f.filter_id == want["filter_id"] == h5fz.FILTER_ID
    assert list(f["compression_opts"]) == want["cd_values"]
    assert f.spec == want["spec"]
    assert dict(f) == {"compression": h5fz.FILTER_ID, "compression_opts": tuple(want["cd_values"]), "shuffle": False}
    assert h5fz.Filter(f.spec).cd_values == f.cd_values  # the canonical text parses back to the same words


@pytest.mark.parametrize("spec", ["abs=0", "abs=-1e-3", "rel=nan", "pw_rel=1.5", "abs=1e-3 bogus",
                                  "abs=1e-3 bitshuffle delta rze", "abs=1e-3 subchunk=100", "abs=1e-3 rze rze"])
def test_bad_spec_raises_value_error_with_the_c_message(spec):
    p = subprocess.run([BIN, "cd-values", "--", spec], capture_output=True, text=True)
    assert p.returncode != 0
    c_message = p.stderr.split(": ", 2)[-1].strip()  # after 'h5fz cd-values: invalid spec "...": '
    with pytest.raises(ValueError) as e:
        h5fz.Filter(spec)
    assert c_message and c_message in str(e.value), (c_message, str(e.value))


def test_bad_filter_arguments():
    with pytest.raises(ValueError, match="one of"):
        h5fz.Filter(abs=1e-3, rel=1e-3)
    with pytest.raises(TypeError):
        h5fz.Filter(abs="1e-3")
    with pytest.raises(TypeError):
        h5fz.Filter("abs=1e-3", rel=1e-3)
    with pytest.raises(ValueError, match="error bound 0"):
        h5fz.Filter(abs=0)
    with pytest.raises(ValueError, match="fill="):
        h5fz.Filter("abs=1e-3 fill=-999")
    # the C parser would stop at a NUL and drop the rest (a fresh tester)
    with pytest.raises(ValueError, match="NUL"):
        h5fz.Filter(abs=1e-3, chain="delta zigzag bitshuffle rze\x00 lossless")
    with pytest.raises(ValueError, match="NUL"):
        h5fz.Filter("abs=1e-3\x00 rel=1")
    with pytest.raises(TypeError, match="chain="):
        h5fz.Filter(abs=1e-3, chain=5)
    assert h5fz.Filter(abs=1e-3, chain=["delta", "zigzag", "bitpack"]).cd_values == \
        h5fz.Filter(abs=1e-3, chain="delta zigzag bitpack").cd_values


def test_filter_modes_come_from_the_c_mode_table():
    """h5fz.MODES is the C library's mode table (h5fzpy_mode_at), and
    Filter's mode keywords are its names: no list of Python's own."""
    assert [name for name, _ in h5fz.MODES][:4] == ["abs", "rel", "pw_rel", "lossless"]
    for name, takes_bound in h5fz.MODES:
        f = h5fz.Filter(**{name: 0.5 if takes_bound else True})
        assert f.spec.split()[0] == (name + "=0.5" if takes_bound else name)
        assert f.cd_values == h5fz.Filter(f.spec).cd_values
    with pytest.raises(TypeError, match="unknown keyword absolute="):
        h5fz.Filter(absolute=1e-3)
    with pytest.raises(TypeError, match="True or False"):
        h5fz.Filter(lossless="yes")
    # None, and False for lossless, mean "not given", as the keywords' defaults did
    assert h5fz.Filter(abs=None).cd_values == h5fz.Filter(lossless=False).cd_values == h5fz.Filter().cd_values
    assert h5fz.Filter("abs=1e-3", rel=None).cd_values == h5fz.Filter(abs=1e-3).cd_values


# ---- the filter path through h5py, per mode -----------------------------------------

ROUND = [("abs", 1e-3, {"abs": 1e-3}), ("rel", 1e-3, {"rel": 1e-3}), ("pw_rel", 1e-3, {"pw_rel": 1e-3}),
         ("lossless", 0, {"lossless": True}),
         ("abs", 1e-3, {"abs": 1e-3, "chain": "lorenzo_nd zigzag bitshuffle rze"}),
         ("abs", 1e-3, {"abs": 1e-3, "chain": "delta zigzag bitpack"})]


@pytest.mark.parametrize("mode,bound,kwargs", ROUND, ids=[str(k) for _, _, k in ROUND])
def test_h5py_roundtrip_within_the_bound(tmp_path, mode, bound, kwargs):
    a = embedded()
    chunks = (12, 100, 100)  # 50 planes: an edge chunk
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("t", data=a, chunks=chunks, **h5fz.Filter(**kwargs))
        assert d.id.get_storage_size() < a.nbytes
    with h5py.File(tmp_path / "f.h5", "r") as f:
        d = f["t"]
        back = d[...]
        mask, raw = d.id.read_direct_chunk((0, 0, 0))
        assert mask == 0 and len(raw) < 12 * 100 * 100 * 4
        check_bound(a, back, mode, bound, chunks)
        assert np.array_equal(h5fz.read(d), back)


# ---- the fast path: the filter's chunks, byte for byte -------------------------------

def fast_cases():
    yield "embedded-abs", embedded, (12, 100, 100), {"abs": 1e-3}, None
    yield "embedded-rel-fill", embedded, (16, 64, 48), {"rel": 1e-3}, -999.0
    yield "embedded-pw_rel", embedded, (8, 100, 100), {"pw_rel": 1e-3}, None
    yield "embedded-lossless", embedded, (10, 50, 100), {"lossless": True}, None
    yield "embedded-lorenzo_nd", embedded, (12, 100, 100), {"abs": 1e-3, "chain": "lorenzo_nd zigzag bitshuffle rze"}, None
    yield "embedded-bitpack", embedded, (7, 33, 100), {"abs": 1e-3, "chain": "delta zigzag bitpack"}, None
    yield "siconc-nan", lambda: shared("canesm5_siconc_float32_12x291x360.f32", "<f4", (12, 291, 360)), \
        (4, 291, 360), {"abs": 0.05}, None
    yield "fizhi-f64", lambda: shared("mitgcm_fizhi_theta_cs32_float64_40x32x192.f64", "<f8", (40, 32, 192)), \
        (16, 32, 192), {"rel": 1e-4}, None
    yield "goes-1d", lambda: shared("goes15_xrs_long_flux_float32_42177.f32", "<f4", (42177,)), \
        (5000,), {"pw_rel": 1e-3}, None
    yield "glosea4-4d", lambda: shared("glosea4_surface_temperature_float32_13x6x145x192.f32", "<f4",
                                       (13, 6, 145, 192)), (2, 6, 145, 192), {"abs": 1e-2}, None
    yield "msg-fill", lambda: shared("msg_toa_brightness_temperature_float32_160x256.f32", "<f4", (160, 256)), \
        (64, 100), {"rel": 1e-3}, -1073741824.0


FAST = list(fast_cases())


@pytest.mark.parametrize("name,load,chunks,kwargs,fill", FAST, ids=[c[0] for c in FAST])
def test_fast_write_equals_the_filter_chunk_for_chunk(tmp_path, name, load, chunks, kwargs, fill):
    a = load()
    extra = {} if fill is None else {"fillvalue": fill}
    with h5py.File(tmp_path / "f.h5", "w") as f:
        via_filter = f.create_dataset("filter", data=a, chunks=chunks, **extra, **h5fz.Filter(**kwargs))
        fast = f.create_dataset("fast", shape=a.shape, dtype=a.dtype, chunks=chunks, **extra,
                                **h5fz.Filter(**kwargs))
        report = h5fz.write(fast, a)
        want, got = chunks_of(via_filter), chunks_of(fast)
        assert len(want) == report["chunks"] == len(got) > 0
        assert sorted(got) == sorted(want)
        for off in want:
            assert got[off] == want[off], "chunk %s differs" % (off,)
        assert report["stored_bytes"] == sum(len(c[1]) for c in got.values())
        assert not report["merged"] and report["kernel_class"]
        by_h5py, by_fast = fast[...], h5fz.read(fast)
        assert np.array_equal(by_fast.view(np.uint8), by_h5py.view(np.uint8))
        assert np.array_equal(h5fz.read(via_filter).view(np.uint8), by_h5py.view(np.uint8))
    mode = next(iter(kwargs)) if "lossless" not in kwargs else "lossless"
    bound = kwargs.get(mode, 0)
    if mode == "abs" and "chain" not in kwargs:
        check_bound(a, by_fast, mode, bound)
    else:
        check_bound(a, by_fast, mode, bound, chunks, fill)


def test_fast_read_into_out_and_missing_chunks(tmp_path):
    a = embedded()
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("t", shape=a.shape, dtype="f4", chunks=(10, 100, 100), fillvalue=-5.0,
                             **h5fz.Filter(abs=1e-3))
        d[10:20] = a[10:20]  # one chunk through the filter; the others never written
        out = np.empty(a.shape, "f4")
        assert h5fz.read(d, out=out) is out
        assert np.array_equal(out, d[...])
        assert np.all(out[:10] == -5.0) and np.all(out[20:] == -5.0)
        check_bound(a[10:20], out[10:20], "abs", 1e-3)
        with pytest.raises(ValueError):
            h5fz.read(d, out=np.empty((50, 100, 99), "f4"))


def test_options_win_over_the_environment(tmp_path):
    """h5fz.Options(device="cpu", threads=1, quiet=True) for one call while
    the environment says H5FZ_DEVICE=gpu, strict: that call runs the CPU
    executor; a call without options keeps the environment's (no GPU here:
    it fails; with one: it runs there). The variables are a process's
    defaults, read once per process at its first h5fz call, so they are set
    when the process starts (a second one: this one's settings are read),
    and a change of os.environ after that is not seen: H5FZ_DEVICE=cpu set
    later still leaves a call without options on the strict GPU."""
    a = embedded()
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        # made here, without the variables: the filter's set_local reads them (it has no options)
        for name in ("t", "u"):
            f.create_dataset(name, shape=a.shape, dtype="f4", chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
    code = textwrap.dedent("""
        import json, os, sys
        import h5py, numpy as np
        import h5fz
        a = np.fromfile(sys.argv[1], "<f4").reshape(50, 100, 100)
        out = {}
        with h5py.File(sys.argv[2], "r+") as f:
            d, e = f["t"], f["u"]
            opts = h5fz.Options(device="cpu", threads=1, quiet=True)
            out["repr"] = repr(opts)
            rep = h5fz.write(d, a, options=opts)
            out["with_options"] = [rep["on_gpu"], rep["kernel_class"]]
            np.save(sys.argv[3], h5fz.read(d, options=opts))
            for when in ("environment", "after_setenv"):
                try:
                    out[when] = ["ran", h5fz.write(e, a)["on_gpu"]]
                except RuntimeError as err:
                    out[when] = ["failed", str(err)]
                os.environ["H5FZ_DEVICE"] = "cpu"  # read once per process: not seen by the next call
        print(json.dumps(out))
    """)
    env = dict(os.environ, H5FZ_DEVICE="gpu", H5FZ_DEVICE_STRICT="1", H5FZ_THREADS="3")
    back = tmp_path / "back.npy"
    p = subprocess.run([sys.executable, "-c", code, str(EMBEDDED), str(path), str(back)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert "device='cpu'" in out["repr"]
    assert out["with_options"] == [False, "cpu"], out
    check_bound(a, np.load(back), "abs", 1e-3)
    for when in ("environment", "after_setenv"):
        how, what = out[when]
        if how == "failed":
            assert "gpu" in what.lower() or "cuda" in what.lower(), out
        else:
            assert what is True, out
    assert out["environment"][0] == out["after_setenv"][0], out


def test_options_refuse_what_they_cannot_mean():
    for kwargs in ({"device": "tpu"}, {"threads": 2000}, {"threads": -3}, {"gpu_ordinal": 1024},
                   {"threads": 1.5}, {"cache_dir": "x" * 1024}, {"quiet": "no"}, {"strict": 2},
                   {"cache_dir": "a\0b"}, {"cache_dir": 5}):
        with pytest.raises(ValueError):
            h5fz.Options(**kwargs)
    with pytest.raises(TypeError):
        h5fz.write(None, np.zeros(3, "f4"), options="cpu")
    # checked once, so never changed after: a field set later would reach the C library unchecked
    o = h5fz.Options(device="cpu", quiet=1, cache_dir=b"/tmp/h5fz-x")
    with pytest.raises(AttributeError):
        o.threads = -1
    assert o == h5fz.Options(device="CPU", quiet=True, cache_dir="/tmp/h5fz-x") and o.cache_dir == "/tmp/h5fz-x"
    assert h5fz.Options(cache_dir="/tmp/\udcff").cache_dir == "/tmp/\udcff"  # a non-UTF-8 name, as os.fsdecode gives it


def test_start_appends_time_steps_as_the_filter_does(tmp_path):
    """One time step at a time into 12-step chunks: every write but the
    first of a chunk merges with its stored chunk, as HDF5 does through the
    filter when the chunk does not stay in the cache (rdcc_nbytes=0)."""
    a = embedded()
    chunks = (12, 100, 100)
    with h5py.File(tmp_path / "f.h5", "w", rdcc_nbytes=0) as f:
        ref = f.create_dataset("filter", shape=(0, 100, 100), maxshape=(None, 100, 100), dtype="f4",
                               chunks=chunks, **h5fz.Filter(abs=1e-3))
        fast = f.create_dataset("fast", shape=(0, 100, 100), maxshape=(None, 100, 100), dtype="f4",
                                chunks=chunks, **h5fz.Filter(abs=1e-3))
        merged = 0
        for t in range(a.shape[0]):
            ref.resize(t + 1, axis=0)
            ref[t] = a[t]
            fast.resize(t + 1, axis=0)
            merged += h5fz.write(fast, a[t], start=(t, 0, 0))["merged"]
        assert merged > 0
        want, got = chunks_of(ref), chunks_of(fast)
        assert sorted(got) == sorted(want)
        for off in want:
            assert got[off] == want[off], "chunk %s differs" % (off,)
        check_bound(a, h5fz.read(fast), "abs", 1e-3)
        # an aligned slab of whole chunks goes straight through
        rep = h5fz.write(fast, a[12:36], start=(12, 0, 0))
        assert not rep["merged"] and rep["chunks"] == 2
        check_bound(a, fast[...], "abs", 1e-3)


def test_write_refuses_what_it_cannot_store(tmp_path):
    a = embedded()
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("t", shape=a.shape, dtype="f4", chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
        with pytest.raises(ValueError, match="shape"):
            h5fz.write(d, a[:10])
        with pytest.raises(ValueError, match="resize"):
            h5fz.write(d, a[:10], start=(45, 0, 0))
        with pytest.raises(TypeError):
            h5fz.write(d, np.array(["x"] * a.size).reshape(a.shape))
        plain = f.create_dataset("plain", data=a, chunks=(10, 100, 100), compression="gzip")
        with pytest.raises(ValueError, match="pipeline"):
            h5fz.write(plain, a)
        ints = f.create_dataset("ints", shape=(10,), dtype="i4", chunks=(5,))
        with pytest.raises(TypeError):
            h5fz.write(ints, np.zeros(10, "i4"))
        contiguous = f.create_dataset("contiguous", shape=(10,), dtype="f4")
        with pytest.raises(ValueError):
            h5fz.read(contiguous)


def test_a_corrupt_chunk_fails_the_read(tmp_path):
    a = embedded()
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("t", shape=a.shape, dtype="f4", chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
        h5fz.write(d, a)
        mask, raw = d.id.read_direct_chunk((20, 0, 0))
        bad = bytearray(raw)
        bad[len(bad) // 2] ^= 0x40
        d.id.write_direct_chunk((20, 0, 0), bytes(bad), 0)
        with pytest.raises(RuntimeError, match="CRC-32"):
            h5fz.read(d)


# ---- a new process: read, append, resize after `import h5fz` -------------------------

FRESH = textwrap.dedent("""
    import sys
    import numpy as np
    import h5py
    {imports}
    path, abs_bound = sys.argv[1], 1e-3
    a = np.fromfile(sys.argv[2], "<f4").reshape(50, 100, 100)
    with h5py.File(path, "r+") as f:
        d = f["t"]
        d.resize(50, axis=0)  # before anything has loaded the filter
        d[20:50] = a[20:50]
    with h5py.File(path, "r") as f:
        err = np.abs(f["t"][...] - a).max()
        assert err <= abs_bound, err
        assert f["t"].id.get_storage_size() < a.nbytes
    print("fresh-ok", err)
""")


def test_append_and_resize_in_a_fresh_process(tmp_path):
    """A new process appends (resize, then a write of new chunks) with
    `import h5fz`, or with HDF5_PLUGIN_PATH alone: the installed
    h5fz-autoload.pth loads the plugin right after `import h5py` (HDF5 does
    not load plugins where it checks a mandatory filter before a write or
    an extend). With neither, HDF5 refuses ("not registered") and the file
    keeps its 20 steps, every chunk filtered."""
    a = embedded()
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    for case in ("plugin-path-only", "import-h5fz", "neither"):
        path = tmp_path / (case + ".h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("t", data=a[:20], maxshape=(None, 100, 100), chunks=(10, 100, 100),
                             **h5fz.Filter(abs=1e-3))
        imports = "import h5fz" if case == "import-h5fz" else ""
        run_env = dict(env, HDF5_PLUGIN_PATH=h5fz.PLUGIN_PATH) if case == "plugin-path-only" else env
        p = subprocess.run([sys.executable, "-c", FRESH.format(imports=imports), path, EMBEDDED],
                           capture_output=True, text=True, env=run_env)
        if case == "neither":
            assert p.returncode != 0 and "not registered" in p.stderr, p.stdout + p.stderr
            with h5py.File(path, "r") as f:
                check_bound(a[:20], f["t"][:20], "abs", 1e-3)
                assert all(mask == 0 for mask, _ in chunks_of(f["t"]).values())
                h5fz.read(f["t"])  # every stored chunk is an h5fz container of this dataset
        else:
            assert p.returncode == 0 and "fresh-ok" in p.stdout, case + ": " + p.stdout + p.stderr
            with h5py.File(path, "r") as f:
                assert all(mask == 0 for mask, _ in chunks_of(f["t"]).values())
                check_bound(a, h5fz.read(f["t"]), "abs", 1e-3)


def test_autoload_hook_is_installed_and_inert_without_the_path():
    """pip put h5fz-autoload.pth and _h5fz_autoload.py into site-packages;
    without HDF5_PLUGIN_PATH the hook imports nothing (h5py stays unloaded
    at start, and h5fz after `import h5py`)."""
    import site
    dirs = site.getsitepackages()
    assert any(os.path.isfile(os.path.join(d, "h5fz-autoload.pth")) for d in dirs), dirs
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    code = ("import sys; print('h5py' in sys.modules, 'h5fz' in sys.modules); import h5py; "
            "print('h5fz' in sys.modules, any(type(f).__name__ == '_AfterH5py' for f in sys.meta_path))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.split() == ["False"] * 4, p.stdout + p.stderr


# ---- xarray / h5netcdf -------------------------------------------------------------------

def test_xarray_to_netcdf_with_an_h5fz_encoding(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    a = embedded()
    ds = xr.Dataset({"t": (("z", "y", "x"), a)}, coords={"z": np.arange(50.0)})
    path = tmp_path / "x.nc"
    ds.to_netcdf(path, engine="h5netcdf", encoding={"t": h5fz.Filter(abs=1e-3)})
    path2 = tmp_path / "x2.nc"
    ds.to_netcdf(path2, engine="h5netcdf",
                 encoding={"t": {**h5fz.Filter(rel=1e-4), "chunksizes": (10, 100, 100)}})
    with xr.open_dataset(path, engine="h5netcdf") as back:
        check_bound(a, back["t"].values, "abs", 1e-3)
    with xr.open_dataset(path2, engine="h5netcdf") as back:
        check_bound(a, back["t"].values, "rel", 1e-4, (10, 100, 100), fill=np.nan)
    for p in (path, path2):
        with h5py.File(p, "r") as f:
            d = f["t"]
            plist = d.id.get_create_plist()
            assert [plist.get_filter(i)[0] for i in range(plist.get_nfilters())] == [h5fz.FILTER_ID]
            assert d.id.get_storage_size() < a.nbytes



class FakeGpuArray:
    """An object claiming GPU memory at an address nothing may read."""

    def __init__(self, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0xdead0000, False),
                                         "version": 3, "strides": strides, "stream": None}


def test_gpu_arrays_without_a_gpu_fail_cleanly(tmp_path):
    """Without a usable GPU a GPU array is refused with the reason, never
    read as host memory (the address above would crash the process)."""
    if h5fz.get_config()["gpu_present"]:
        pytest.skip("a GPU is present")
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("t", shape=(20, 30), dtype="f4", chunks=(10, 30), **h5fz.Filter(abs=1e-3))
        with pytest.raises(RuntimeError, match="GPU|device|CUDA|cuda"):
            h5fz.write(d, FakeGpuArray((20, 30)))
        with pytest.raises(RuntimeError, match="GPU|device|CUDA|cuda"):
            h5fz.read(d, out=FakeGpuArray((20, 30)))
        with pytest.raises(TypeError):
            h5fz.write(d, FakeGpuArray((20, 30), "<f8"))
        with pytest.raises(ValueError, match="contiguous"):
            h5fz.write(d, FakeGpuArray((20, 30), strides=(4, 80)))
        assert d.id.get_num_chunks() == 0

# ---- GPU arrays (CuPy), where there is a GPU --------------------------------------------

def test_cupy_arrays_write_and_read_the_same_chunks(tmp_path):
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        pytest.skip("CuPy sees no GPU: %s" % e)
    if h5fz.get_config()["executor"] != "gpu":
        pytest.skip("the h5fz executor is the CPU here: %s" % h5fz.get_config())
    a = embedded()
    with h5py.File(tmp_path / "f.h5", "w") as f:
        ref = f.create_dataset("filter", data=a, chunks=(12, 100, 100), **h5fz.Filter(abs=1e-3))
        d = f.create_dataset("gpu", shape=a.shape, dtype="f4", chunks=(12, 100, 100), **h5fz.Filter(abs=1e-3))
        report = h5fz.write(d, cp.asarray(a))
        assert report["on_gpu"]
        want, got = chunks_of(ref), chunks_of(d)
        assert sorted(got) == sorted(want) and all(got[k] == want[k] for k in want)
        out = cp.zeros(a.shape, "f4")
        assert h5fz.read(d, out=out) is out
        assert np.array_equal(cp.asnumpy(out), d[...])
        check_bound(a, cp.asnumpy(out), "abs", 1e-3)
        # a part of a chunk from GPU memory merges through the host
        rep = h5fz.write(d, cp.asarray(a[5]), start=(5, 0, 0))
        assert rep["merged"]
        check_bound(a, d[...], "abs", 1e-3)
        with pytest.raises(TypeError):
            h5fz.write(d, cp.asarray(a, dtype="f8"))
        with pytest.raises(ValueError, match="contiguous"):
            h5fz.write(d, cp.asarray(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(0, 2, 1))



def test_torch_cuda_tensors_write_the_same_chunks(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or h5fz.get_config()["executor"] != "gpu":
        pytest.skip("no CUDA device for PyTorch, or the h5fz executor is the CPU")
    a = embedded()
    with h5py.File(tmp_path / "f.h5", "w") as f:
        ref = f.create_dataset("filter", data=a, chunks=(12, 100, 100), **h5fz.Filter(pw_rel=1e-3))
        d = f.create_dataset("torch", shape=a.shape, dtype="f4", chunks=(12, 100, 100), **h5fz.Filter(pw_rel=1e-3))
        assert h5fz.write(d, torch.from_numpy(a).cuda())["on_gpu"]
        want, got = chunks_of(ref), chunks_of(d)
        assert sorted(got) == sorted(want) and all(got[k] == want[k] for k in want)
        out = torch.zeros(a.shape, dtype=torch.float32, device="cuda")
        h5fz.read(d, out=out)
        torch.cuda.synchronize()
        assert np.array_equal(out.cpu().numpy(), d[...])

# ---- the README's Python examples, as written ----------------------------------------------

def readme_block(name):
    import re
    text = (SRC / "README.md").read_text()
    m = re.search(r"<!-- tested by tests/package/test_h5fz_package\.py: %s -->\n```python\n(.*?)```"
                  % re.escape(name), text, re.S)
    assert m, "README.md has no block marked %r" % name
    return m.group(1)


def test_readme_python_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = np.resize(embedded(), (32, 256, 256))  # real values, in the example's chunk shape
    exec(compile(readme_block("python_example"), "README.md:python_example", "exec"), {"a": a})
    with h5py.File("out.h5", "r") as f:
        check_bound(a, f["t"][...], "abs", 1e-3)
        assert f["t"].id.get_storage_size() < a.nbytes
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    ds = xr.Dataset({"t": (("z", "y", "x"), a)})
    exec(compile(readme_block("xarray_example"), "README.md:xarray_example", "exec"), {"ds": ds, "h5fz": h5fz})
    with xr.open_dataset("out.nc", engine="h5netcdf") as back:
        check_bound(a, back["t"].values, "abs", 1e-3)


def test_big_endian_dataset_filter_path_and_fast_path_refusal(tmp_path):
    """A big-endian (">f4") dataset with the package's filter: h5py's own
    write and read go through the filter (every chunk filtered, within the
    bound); the fast path refuses it with the reason instead of writing
    chunks of the wrong byte order."""
    a = embedded()
    with h5py.File(tmp_path / "be.h5", "w") as f:
        d = f.create_dataset("t", shape=a.shape, dtype=">f4", chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
        d[...] = a
        masks = {d.id.get_chunk_info(i).filter_mask for i in range(d.id.get_num_chunks())}
        assert masks == {0}, masks
        assert np.abs(d[...].astype(np.float64) - a).max() <= 1e-3
        with pytest.raises(TypeError, match="little-endian"):
            h5fz.write(d, a)
        with pytest.raises(TypeError, match="little-endian"):
            h5fz.read(d)
