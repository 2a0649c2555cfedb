"""netCDF without fill values, with Debian's real clients (docs/netcdf.md):
nccopy (which always writes NOFILL), ncgen (_NoFill = "true"), ncdump and
NCO's ncks. In every mode a variable with _FillValue = -999 and 30 %
missing values comes back with every missing value exactly -999 (ncdump
prints them as "_", netCDF4-python masks them), no other value turned
into -999, and every other element within the bound (REL: of its chunk's
non-missing values). A refused spec says why on stderr when the variable
is defined.

Needs netcdf-bin, nco and python3-netcdf4 (.ci/run installs them); each
test says which one it misses and is skipped without it."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import h5fz_testlib as lib

MISSING = -999.0
CHUNK = (2, 45, 60)
MODES = ["abs=1e-2", "rel=1e-3", "pw_rel=1e-3", "lossless"]


def _need_tool(name, package):
    if shutil.which(name) is None:
        pytest.skip("%s not found: install Debian's %s for the netCDF NOFILL tests" % (name, package))


def _netcdf4():
    try:
        import netCDF4
    except ImportError:
        pytest.skip("Python module netCDF4 not found: install Debian's python3-netcdf4")
    return netCDF4


def _field():
    g = np.indices((6, 45, 60)).astype(np.float64)
    t = 280 + 10 * np.sin(0.11 * g[2]) * np.cos(0.07 * g[1]) + 0.5 * g[0]
    t = (t + np.random.default_rng(5).normal(0, 0.05, t.shape)).astype("f4")
    t[np.random.default_rng(6).random(t.shape) < 0.3] = MISSING
    return t


@pytest.fixture
def source(tmp_path):
    """A netCDF-4 file with t(time, lat, lon), _FillValue -999, 30 % missing."""
    netCDF4 = _netcdf4()
    t = _field()
    path = tmp_path / "in.nc"
    with netCDF4.Dataset(path, "w") as d:
        for name, n in zip(("time", "lat", "lon"), t.shape):
            d.createDimension(name, None if name == "time" else n)
        v = d.createVariable("t", "f4", ("time", "lat", "lon"), chunksizes=CHUNK, fill_value=np.float32(MISSING))
        v.set_auto_mask(False)
        v[:] = t
    return path, t


def _words(spec):
    cd, _ = lib.cd_values(spec)
    return ",".join(map(str, cd))


def _read(path):
    netCDF4 = _netcdf4()
    with netCDF4.Dataset(path) as d:
        v = d["t"]
        masked = int(np.ma.count_masked(v[:]))  # netCDF4-python's mask by _FillValue
        v.set_auto_mask(False)
        return v[:], masked


def _check(spec, t, y, masked, what):
    """Missing values exact, none made, every other element in the bound."""
    miss = t == MISSING
    assert np.array_equal(y[miss], t[miss]), "%s: %d missing values not exactly -999" % (
        what, int(np.sum(y[miss] != MISSING)))
    assert not np.any(y[~miss] == MISSING), "%s: real values read back as -999" % what
    assert masked == int(miss.sum()), "%s: netCDF4 masks %d values, want %d" % (what, masked, miss.sum())
    mode, _, bound = spec.partition("=")
    a, b = t.astype(np.float64), y.astype(np.float64)
    if mode == "lossless":
        assert np.array_equal(a, b), what
    elif mode == "pw_rel":
        assert np.all(np.abs(a - b)[~miss] <= float(bound) * np.abs(a[~miss])), what
    elif mode == "abs":
        lib.check_bound(a[~miss], b[~miss], float(bound), what)
    else:  # REL: each chunk's own non-missing range
        for z in range(0, t.shape[0], CHUNK[0]):
            ca, cb, cm = a[z:z + CHUNK[0]], b[z:z + CHUNK[0]], ~miss[z:z + CHUNK[0]]
            lib.check_bound(ca[cm], cb[cm], float(bound) * float(np.ptp(ca[cm])), "%s chunk %d" % (what, z))


def _ncdump_missing(path):
    """How many values ncdump prints as "_" (equal to _FillValue)."""
    p = subprocess.run(["ncdump", "-v", "t", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    body = p.stdout[p.stdout.index(" t =") + 4:p.stdout.rindex(";")]
    return sum(1 for w in body.replace(",", " ").replace(";", " ").split() if w == "_")


@pytest.mark.parametrize("spec", MODES)
def test_nccopy_every_mode_keeps_missing_values(source, tmp_path, spec):
    _need_tool("nccopy", "netcdf-bin")
    _need_tool("ncdump", "netcdf-bin")
    src, t = source
    out = tmp_path / "out.nc"
    f = "t,%d,%s" % (lib.FILTER_ID, _words(spec + " missing=-999"))
    p = subprocess.run(["nccopy", "-4", "-F", f, str(src), str(out)], capture_output=True, text=True)
    assert p.returncode == 0, "nccopy -F %s: %s%s" % (f, p.stdout, p.stderr)
    y, masked = _read(out)
    _check(spec, t, y, masked, "nccopy " + spec)
    assert _ncdump_missing(out) == int(np.sum(t == MISSING))
    p = subprocess.run(["ncdump", "-hs", str(out)], capture_output=True, text=True)
    assert re.search(r't:_Filter = "%d,' % lib.FILTER_ID, p.stdout) and "_NoFill" in p.stdout, p.stdout


def test_nccopy_rel_without_missing_is_accepted(source, tmp_path):
    """The issue's command (default REL words, nccopy's NOFILL) failed with
    "NetCDF: HDF error"; now it compresses within the bound."""
    _need_tool("nccopy", "netcdf-bin")
    src, t = source
    out = tmp_path / "rel.nc"
    f = "t,%d,%s" % (lib.FILTER_ID, _words("rel=1e-4"))
    p = subprocess.run(["nccopy", "-4", "-F", f, str(src), str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    y, _ = _read(out)
    for z in range(0, t.shape[0], CHUNK[0]):  # the range counts -999 without missing=
        a = t[z:z + CHUNK[0]].astype(np.float64)
        lib.check_bound(a, y[z:z + CHUNK[0]], 1e-4 * float(np.ptp(a)), "rel=1e-4 chunk %d" % z)


def _cdl(path, t, filt, nofill=True, fill=MISSING):
    values = ", ".join("_" if v == MISSING else repr(float(v)) for v in t.reshape(-1))
    text = ("netcdf g {\ndimensions:\n time = UNLIMITED ;\n lat = %d ;\n lon = %d ;\nvariables:\n"
            " float t(time, lat, lon) ;\n  t:_FillValue = %rf ;\n  t:_ChunkSizes = %d, %d, %d ;\n"
            '  t:_Filter = "%s" ;\n%s'
            "data:\n t = %s ;\n}\n" % (t.shape[1], t.shape[2], fill, *CHUNK, filt,
                                        '  t:_NoFill = "true" ;\n' if nofill else "", values))
    path.write_text(text)
    return path


@pytest.mark.parametrize("spec", MODES)
def test_ncgen_nofill_every_mode(tmp_path, spec):
    _need_tool("ncgen", "netcdf-bin")
    _need_tool("ncdump", "netcdf-bin")
    t = _field()
    cdl = _cdl(tmp_path / "g.cdl", t, "%d,%s" % (lib.FILTER_ID, _words(spec + " missing=-999")))
    out = tmp_path / "g.nc"
    p = subprocess.run(["ncgen", "-4", "-o", str(out), str(cdl)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    y, masked = _read(out)
    _check(spec, t, y, masked, "ncgen " + spec)
    assert _ncdump_missing(out) == int(np.sum(t == MISSING))
    with __import__("h5py").File(out, "r") as f:
        assert lib.filter_ids(f["t"]) == [lib.FILTER_ID]


def test_refusal_is_said_when_the_variable_is_defined(tmp_path):
    """netCDF prints no HDF5 error stack: set_local's reason goes to stderr,
    once, and the refusal comes at nc_enddef (dataset creation), not at a
    write. Two refusals: a bad word, and missing= beside another fill
    value (ncgen without _NoFill gives HDF5 the fill value -999)."""
    _need_tool("ncgen", "netcdf-bin")
    t = _field()
    for filt, why in [("%d,7" % lib.FILTER_ID, "neither the version word"),
                      ("%d,%s" % (lib.FILTER_ID, _words("abs=1e-2 missing=5")),
                       "missing=5 differs from the dataset's fill value -999")]:
        cdl = _cdl(tmp_path / "bad.cdl", t, filt, nofill=False)
        p = subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "bad.nc"), str(cdl)], capture_output=True,
                           text=True)
        assert p.returncode != 0
        lines = [x for x in p.stderr.splitlines() if x.startswith("h5fz: ")]
        assert len(lines) == 1 and why in lines[0], p.stderr
        q = subprocess.run(["ncgen", "-4", "-o", str(tmp_path / "bad.nc"), str(cdl)], capture_output=True,
                           text=True, env={**__import__("os").environ, "H5FZ_QUIET": "1"})
        assert q.returncode != 0 and "h5fz: " not in q.stderr, q.stderr


@pytest.mark.parametrize("word,spec", [("200103", "rel=0.001"), ("100102", "abs=0.01"), ("400000", "lossless")])
def test_ncks_one_word_spec(source, tmp_path, word, spec):
    """NCO 5.1.4's --cmp hands the filter only its last word: the one-word
    form M SSS EE (mode, bound digits, exponent) is what it can carry."""
    _need_tool("ncks", "nco")
    src, t = source
    out = tmp_path / "nco.nc"
    p = subprocess.run(["ncks", "-O", "-4", "--cmp=%d,%s" % (lib.FILTER_ID, word), str(src), str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "WARNING" not in p.stdout, p.stdout + p.stderr
    info = lib.cli("inspect", out, "/t").stdout
    assert "spec: %s quant delta zigzag bitshuffle rze" % spec in info, info
    y, _ = _read(out)
    miss = t == MISSING
    if spec == "lossless":
        assert np.array_equal(y, t)
    elif spec.startswith("abs"):
        lib.check_bound(t[~miss], y[~miss], 0.01, "ncks " + word)
    else:  # NCO writes HDF5's fill value as netCDF's default, so -999 counts in REL's range
        for z in range(0, t.shape[0], CHUNK[0]):
            a = t[z:z + CHUNK[0]].astype(np.float64)
            lib.check_bound(a, y[z:z + CHUNK[0]], 1e-3 * float(np.ptp(a)), "ncks chunk %d" % z)


def test_ncks_bad_word_says_why(source, tmp_path):
    _need_tool("ncks", "nco")
    src, _ = source
    p = subprocess.run(["ncks", "-O", "-4", "--cmp=%d,1,0,0" % lib.FILTER_ID, str(src), str(tmp_path / "x.nc")],
                       capture_output=True, text=True)
    # NCO hands over the last word, 0: neither a version nor a one-word spec
    assert "h5fz: invalid cd_values: a single cd_values word 0" in p.stderr, p.stdout + p.stderr


def test_h5fz_compress_takes_the_fill_value_attribute(source, tmp_path):
    """A NOFILL file (nccopy -4) has no HDF5 fill value: h5fz compress reads
    _FillValue itself and keeps -999 exact (missing=)."""
    _need_tool("nccopy", "netcdf-bin")
    _need_tool("ncdump", "netcdf-bin")
    src, t = source
    nofill = tmp_path / "nofill.nc"
    assert subprocess.run(["nccopy", "-4", str(src), str(nofill)]).returncode == 0
    out = tmp_path / "c.nc"
    lib.cli("compress", nofill, out, "rel=1e-3")
    assert "missing=-999" in lib.cli("inspect", out, "/t").stdout
    y, masked = _read(out)
    _check("rel=1e-3", t, y, masked, "h5fz compress")
    assert _ncdump_missing(out) == int(np.sum(t == MISSING))


def test_docs_words_are_what_they_say(tmp_path):
    """docs/netcdf.md: the ncgen example's words are `h5fz cd-values`'s for
    its spec, and each row of the one-word table is the spec it names (an
    h5py dataset made with that one word, as set_local stores it)."""
    import h5py
    doc = (lib.REPO / "docs" / "netcdf.md").read_text()
    words = re.search(r't:_Filter = "%d,([0-9,]+)"' % lib.FILTER_ID, doc).group(1)
    assert words == _words("rel=1e-3 missing=-999")
    rows = re.findall(r"^\| `(\d+)` \| `([^`]+)`", doc, re.M)
    assert len(rows) == 7, rows
    for word, spec in rows:
        path = tmp_path / ("w%s.h5" % word)
        with h5py.File(path, "w") as f:
            f.create_dataset("d", data=np.ones((4, 64), "f4"), chunks=(4, 64), compression=lib.FILTER_ID,
                             compression_opts=(int(word),))
        info = lib.cli("inspect", path, "/d").stdout
        want = lib.cli("cd-values", spec).stdout.splitlines()[0].split(None, 1)[1]
        assert "spec: %s dtype=f32" % want in info, (word, spec, info)
