"""`h5fz compress IN OUT SPEC`: the whole file copied, float datasets
compressed within the bound, everything else unchanged, and every refusal
and misuse a clear error that leaves no OUT behind (docs/cli.md)."""
import json
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib


def _h5dump(*args):
    if shutil.which("h5dump") is None:  # the GPU machine has no HDF5 tools; Debian's hdf5-tools has it
        pytest.skip("h5dump (Debian: hdf5-tools) not found")
    p = subprocess.run(["h5dump", *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # the file name line, and object addresses inside references (a copy
    # has its objects elsewhere; the names after them must agree)
    text = p.stdout.split("\n", 1)[1]
    return re.sub(r"DATASET \d+ ", "DATASET @ ", text)


def _smooth(shape, seed=0):
    g = np.indices(shape).astype(np.float64)
    return np.sin(g.sum(axis=0) * 0.05) * 10 + np.random.default_rng(seed).normal(0, 0.01, shape)


@pytest.fixture
def mixed(tmp_path):
    """A file of every kind of object: float datasets (chunked with gzip,
    contiguous, with NaN/Inf and a fill value, in a subgroup), int, string,
    compound and big-endian int datasets, attributes of every kind on the
    root, a group and a compressed dataset, a soft link, a second hard link,
    an external link and a committed datatype."""
    path = tmp_path / "mixed.h5"
    with h5py.File(path, "w", track_order=True) as f:
        f.attrs["title"] = "mixed"
        f.attrs["vlen_strings"] = np.array(["a", "bc", "def"], dtype=h5py.string_dtype())
        f.attrs["be_ints"] = np.arange(4, dtype=">i4")
        f.attrs["pair"] = np.array([(1, 2.5)], dtype=[("i", "<i2"), ("x", "<f8")])
        t = f.create_dataset("temperature", data=_smooth((20, 30, 40)).astype("f4"),
                             chunks=(5, 30, 40), compression="gzip")
        t.attrs["units"] = "K"
        t.attrs["valid_range"] = np.array([-50.0, 50.0], dtype="f4")
        g = f.create_group("sub", track_order=True)
        g.attrs["note"] = np.bytes_("fixed-length")
        a = _smooth((64, 50), 1)
        a[3, 4] = np.nan
        a[5, 6] = np.inf
        a[7, 8] = -np.inf
        a[10:12, :] = -999.0
        g.create_dataset("pressure", data=a, fillvalue=-999.0)       # contiguous float64
        g.create_dataset("counts", data=np.arange(600, dtype="<i4").reshape(20, 30),
                         chunks=(10, 30))
        g.create_dataset("be_counts", data=np.arange(50, dtype=">i8"))
        g.create_dataset("names", data=np.array(["x", "yy", "zzz"], dtype=h5py.string_dtype()))
        g.create_dataset("fixed_names", data=np.array([b"ab", b"cd"], dtype="S2"))
        rec = np.array([(1, 2.0, b"r1"), (2, 3.5, b"r2")],
                       dtype=[("id", "<i4"), ("value", "<f8"), ("tag", "S2")])
        g.create_dataset("records", data=rec)
        f.create_dataset("scalar_float", data=np.float32(3.5))
        f.create_dataset("one_float", data=np.array([1.25], dtype="f8"))
        f["sub/alias"] = h5py.SoftLink("/temperature")
        f["hard_again"] = g["counts"]
        f["outside"] = h5py.ExternalLink("elsewhere.h5", "/x")
        f["kind"] = np.dtype([("a", "<i4"), ("b", "<f4")])
        f.create_dataset("typed", data=np.zeros(3, dtype=[("a", "<i4"), ("b", "<f4")]),
                         dtype=f["kind"])
    return path


NON_FLOAT = ["/sub/counts", "/sub/be_counts", "/sub/names", "/sub/fixed_names", "/sub/records",
             "/typed", "/scalar_float", "/one_float"]


def test_everything_preserved_floats_within_bound(mixed, tmp_path):
    out = tmp_path / "out.h5"
    p = lib.cli("compress", mixed, out, "abs=1e-3")
    assert re.search(r"^/temperature: float32 20x30x40  compressed  ratio [\d.]+  max_err [\d.e-]+  "
                     r"bound 0.001  ok$", p.stdout, re.M), p.stdout
    assert re.search(r"^/sub/pressure: float64 64x50  compressed .* ok$", p.stdout, re.M)
    assert re.search(r"^/sub/counts: int32 20x30  copied unchanged \(not floating point\)$",
                     p.stdout, re.M), p.stdout
    assert re.search(r"^/one_float: .* copied unchanged \(fewer than 2 elements\)$", p.stdout, re.M)
    with h5py.File(mixed, "r") as a, h5py.File(out, "r") as b:
        for name in ["temperature", "sub/pressure"]:
            d = b[name]
            assert lib.filter_ids(d) == [lib.FILTER_ID], name  # gzip replaced by h5fz
            assert d.id.get_storage_size() < d.size * d.dtype.itemsize
            lib.check_bound(a[name][...], d[...], 1e-3, name)
        p_in, p_out = a["sub/pressure"][...], b["sub/pressure"][...]
        assert np.array_equal(p_out[10:12], p_in[10:12])          # the fill value, exactly
        assert b["sub/pressure"].fillvalue == -999.0
        assert b["temperature"].chunks == (5, 30, 40)
        assert b["sub/pressure"].chunks is not None                # contiguous -> chunked
        assert b["sub/alias"].name == "/sub/alias" and np.array_equal(b["sub/alias"][...],
                                                                      b["temperature"][...])
        assert b.get("sub/alias", getlink=True).path == "/temperature"
        el = b.get("outside", getlink=True)
        assert (el.filename, el.path) == ("elsewhere.h5", "/x")
        assert b["hard_again"].id == b["sub/counts"].id             # one object, two names
        assert isinstance(b["kind"], h5py.Datatype)
        assert list(b.keys()) == list(a.keys())                     # creation order kept
        assert list(b.attrs.keys()) == list(a.attrs.keys())
        for name in NON_FLOAT:
            assert b[name].dtype == a[name].dtype
            assert lib.filter_ids(b[name]) == lib.filter_ids(a[name]), name
    # h5dump of the non-float parts is identical, and of every attribute
    for name in NON_FLOAT:
        assert _h5dump("-d", name, out) == _h5dump("-d", name, mixed), name
    assert _h5dump("-A", out) == _h5dump("-A", mixed)
    # and h5fz verify agrees, with the filter required
    lib.cli("verify", mixed, out, "--abs", "1e-3", "--require-filter",
            "--dataset", "/temperature", "--dataset", "/sub/pressure")


def test_json_report(mixed, tmp_path):
    out = tmp_path / "out.h5"
    j = json.loads(lib.cli("compress", mixed, out, "rel=1e-4", "--json").stdout)
    assert j["ok"] and j["spec"].startswith("rel=0.0001") and j["filter_id"] == lib.FILTER_ID
    rows = {d["path"]: d for d in j["datasets"]}
    t = rows["/temperature"]
    assert t["action"] == "compressed" and t["ok"] and t["unfiltered_chunks"] == 0
    assert t["chunks"] == 4 and t["max_error"] <= t["bound"] and t["ratio"] > 1
    assert rows["/sub/records"]["action"] == "copied"
    assert "not floating point" in rows["/sub/records"]["reason"]
    assert j["output_bytes"] == os.path.getsize(out)


def test_json_is_valid_utf8_for_names_that_are_not(tmp_path):
    """HDF5 names are any bytes: a dataset named in Latin-1 (b't\\xe9mp')
    made compress, verify and inspect --json print invalid UTF-8. Each such
    byte is now \\ufffd, well-formed UTF-8 ('caf\u00e9') passes through, and
    every output decodes strictly and parses."""
    src, out = tmp_path / "names.h5", tmp_path / "out.h5"
    x = np.linspace(0, 1, 400, dtype=np.float32).reshape(20, 20)
    with h5py.File(src, "w") as f:
        f.create_dataset(b"t\xe9mp", data=x, chunks=(10, 20))
        f.create_dataset("caf\u00e9".encode(), data=x, chunks=(10, 20))
        f.create_dataset(b"cut\xe2\x82", data=x, chunks=(10, 20))  # a 3-byte sequence cut short

    def run_json(*args):
        p = subprocess.run([lib.BIN, *map(str, args), "--json"], capture_output=True)
        assert p.returncode == 0, p.stdout + p.stderr
        return json.loads(p.stdout.decode("utf-8"))  # strict: invalid UTF-8 raises

    want = {"/t\ufffdmp", "/caf\u00e9", "/cut\ufffd\ufffd"}
    j = run_json("compress", src, out, "abs=1e-3")
    assert {d["path"] for d in j["datasets"]} == want, j
    j = run_json("verify", src, out, "--abs", "1e-3")
    assert {d["dataset"] for d in j["datasets"]} == want, j
    j = run_json("inspect", out)
    assert {d["dataset"] for d in j["datasets"]} == want, j


def test_only_and_exclude(mixed, tmp_path):
    out = tmp_path / "only.h5"
    j = json.loads(lib.cli("compress", mixed, out, "abs=1e-2", "--only", "/sub", "--json").stdout)
    rows = {d["path"]: d for d in j["datasets"]}
    assert rows["/sub/pressure"]["action"] == "compressed"
    assert rows["/temperature"]["action"] == "copied"
    assert rows["/temperature"]["reason"] == "not named by --only"
    with h5py.File(mixed, "r") as a, h5py.File(out, "r") as b:
        assert np.array_equal(a["temperature"][...], b["temperature"][...])
        assert lib.filter_ids(b["temperature"]) == lib.filter_ids(a["temperature"])  # gzip kept
    out2 = tmp_path / "excl.h5"
    j = json.loads(lib.cli("compress", mixed, out2, "abs=1e-2", "--exclude", "/sub/pressure",
                           "--json").stdout)
    rows = {d["path"]: d for d in j["datasets"]}
    assert rows["/sub/pressure"]["action"] == "copied"
    assert rows["/sub/pressure"]["reason"].startswith("excluded")
    assert rows["/temperature"]["action"] == "compressed"
    p = lib.cli("compress", mixed, tmp_path / "x.h5", "abs=1", "--only", "sub", check=False)
    assert p.returncode == 2 and "absolute path" in p.stderr


def test_refused_dataset_is_an_error_naming_it(tmp_path):
    src = tmp_path / "half.h5"
    with h5py.File(src, "w") as f:
        f["ok"] = np.linspace(0, 1, 1000).astype("f4")
        f["half"] = np.linspace(0, 1, 1000).astype("f2")   # float16: h5fz takes float32/64
    out = tmp_path / "out.h5"
    p = lib.cli("compress", src, out, "abs=1e-3", check=False)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "/half" in p.stderr and "refused" in p.stderr and "--skip-refused" in p.stderr
    assert "h5fz:" in p.stderr  # the filter's own reason
    assert not out.exists() and not list(tmp_path.glob("out.h5.h5fz-tmp-*"))
    # --json: the failure is a JSON object on stdout too (a script reads stdout), the reason on stderr as well
    p = lib.cli("compress", "--json", src, out, "abs=1e-3", check=False)
    assert p.returncode == 2, p.stdout + p.stderr
    j = json.loads(p.stdout)
    assert j["ok"] is False and j["input"] == str(src) and "/half" in j["error"] and "/half" in p.stderr, p.stdout
    assert not out.exists()
    # ... and so is every failure after --json is read: a bad spec, a missing input, a missing argument
    for args, what in [((src, out, "abs=1e-3 ratoi"), "ratoi"), ((tmp_path / "nope.h5", out, "abs=1e-3"), "nope.h5"),
                       ((src,), "need IN.h5")]:
        p = lib.cli("compress", "--json", *args, check=False)
        assert p.returncode == 2, p.stdout + p.stderr
        j = json.loads(p.stdout)
        assert j["ok"] is False and what in j["error"] and what in p.stderr, (args, p.stdout, p.stderr)
    p = lib.cli("compress", src, out, "abs=1e-3", "--skip-refused")
    assert re.search(r"^/half: float16 1000  copied unchanged \(REFUSED by the filter", p.stdout,
                     re.M), p.stdout
    with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
        assert np.array_equal(a["half"][...], b["half"][...])
        assert lib.filter_ids(b["ok"]) == [lib.FILTER_ID]


def test_bad_device_setting_refused_before_any_dataset(mixed, tmp_path):
    """A mistyped H5FZ_DEVICE is the command's error, said once, before any
    dataset: not a refusal of each dataset that --skip-refused would turn
    into an unchanged copy (exit 0) (fresh tester)."""
    out = tmp_path / "out.h5"
    env = dict(os.environ, H5FZ_DEVICE="gpus")
    p = subprocess.run([lib.BIN, "compress", str(mixed), str(out), "abs=1e-3", "--skip-refused"], env=env,
                       capture_output=True, text=True)
    assert p.returncode == 2, p.stdout + p.stderr
    assert 'h5fz compress: device setting: H5FZ_DEVICE="gpus": want auto, gpu or cpu' in p.stderr, p.stderr
    assert "copied unchanged" not in p.stdout and not out.exists()


def test_big_endian_float_compressed_never_raw(tmp_path):
    """A big-endian float dataset is compressed in its byte order (the filter
    takes both orders, docs/filter.md): every chunk filtered, within the
    bound; never stored raw silently."""
    src = tmp_path / "be.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("be", data=(np.arange(1200).reshape(30, 40) * 0.01).astype(">f8"),
                         chunks=(10, 40))
    out = tmp_path / "out.h5"
    p = lib.cli("compress", src, out, "abs=1e-3", check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
        d = b["be"]
        assert d.dtype == np.dtype(">f8") and lib.filter_ids(d) == [lib.FILTER_ID]
        assert {d.id.get_chunk_info(i).filter_mask for i in range(d.id.get_num_chunks())} == {0}
        lib.check_bound(a["be"][...], d[...], 1e-3, "big-endian")


def test_existing_out_needs_force(mixed, tmp_path):
    out = tmp_path / "out.h5"
    out.write_bytes(b"precious")
    p = lib.cli("compress", mixed, out, "abs=1e-3", check=False)
    assert p.returncode == 2 and "exists" in p.stderr and "--force" in p.stderr
    assert out.read_bytes() == b"precious"
    lib.cli("compress", mixed, out, "abs=1e-3", "--force")
    with h5py.File(out, "r") as b:
        assert "temperature" in b


def test_never_overwrites_its_input(mixed, tmp_path):
    before = mixed.read_bytes()
    for same in [mixed, tmp_path / "." / "mixed.h5"]:
        p = lib.cli("compress", mixed, same, "abs=1e-3", "--force", check=False)
        assert p.returncode == 2 and "same file" in p.stderr and "never overwrites" in p.stderr
    link = tmp_path / "link.h5"
    link.symlink_to(mixed)
    p = lib.cli("compress", mixed, link, "abs=1e-3", "--force", check=False)
    assert p.returncode == 2 and "same file" in p.stderr
    assert mixed.read_bytes() == before


def test_corrupt_input_is_a_clear_error_and_leaves_no_out(mixed, tmp_path):
    out = tmp_path / "out.h5"
    not_hdf5 = tmp_path / "text.h5"
    not_hdf5.write_text("not an HDF5 file\n" * 100)
    p = lib.cli("compress", not_hdf5, out, "abs=1e-3", check=False)
    assert p.returncode == 2 and "cannot open" in p.stderr and str(not_hdf5) in p.stderr
    assert not out.exists()
    # a file whose chunk bytes are damaged: the read fails mid-copy
    bad = tmp_path / "bad.h5"
    shutil.copy(mixed, bad)
    with h5py.File(bad, "r") as f:
        off = f["temperature"].id.get_chunk_info(1).byte_offset
    with open(bad, "r+b") as fh:
        fh.seek(off + 10)
        fh.write(b"\xff" * 64)
    p = lib.cli("compress", bad, out, "abs=1e-3", check=False)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "/temperature" in p.stderr and "cannot read" in p.stderr, p.stderr
    assert not out.exists() and not list(tmp_path.glob("out.h5.h5fz-tmp-*"))
    # a truncated file
    cut = tmp_path / "cut.h5"
    cut.write_bytes(mixed.read_bytes()[:3000])
    p = lib.cli("compress", cut, out, "abs=1e-3", check=False)
    assert p.returncode == 2 and str(cut) in p.stderr
    assert not out.exists()


def test_usage_errors(mixed, tmp_path):
    p = lib.cli("compress", mixed, tmp_path / "o.h5", check=False)
    assert p.returncode == 2 and "SPEC" in p.stderr
    p = lib.cli("compress", mixed, tmp_path / "o.h5", "abs=-1", check=False)
    assert p.returncode == 2 and "invalid spec" in p.stderr
    p = lib.cli("compress", tmp_path / "missing.h5", tmp_path / "o.h5", "abs=1", check=False)
    assert p.returncode == 2 and "missing.h5" in p.stderr
    assert not (tmp_path / "o.h5").exists()
    assert "usage: h5fz compress" in lib.cli("compress", "--help").stdout


def test_every_mode_checked(mixed, tmp_path):
    for spec, verify in [("pw_rel=1e-3", ["--pw-rel", "1e-3"]), ("lossless", ["--lossless"]),
                         ("abs=1e-2 lorenzo_nd zigzag bitshuffle rze", ["--abs", "1e-2"])]:
        out = tmp_path / "m.h5"
        j = json.loads(lib.cli("compress", mixed, out, spec, "--json", "--force").stdout)
        assert j["ok"], spec
        lib.cli("verify", mixed, out, *verify, "--dataset", "/temperature",
                "--dataset", "/sub/pressure", "--require-filter")


def test_progress_bar_only_on_a_terminal(mixed, tmp_path):
    import pty
    master, slave = pty.openpty()
    out = tmp_path / "tty.h5"
    p = subprocess.run([lib.BIN, "compress", str(mixed), str(out), "abs=1e-3"], stdout=subprocess.PIPE,
                       stderr=slave, text=True)
    os.close(slave)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    assert p.returncode == 0
    assert b"\r" in drawn and re.search(rb"\[#+\.*\] +\d+% ", drawn), drawn[:200]
    assert "\r" not in p.stdout and "[#" not in p.stdout
    # not a terminal: nothing drawn
    q = lib.cli("compress", mixed, tmp_path / "pipe.h5", "abs=1e-3")
    assert q.stderr == ""


def test_extendable_datasets_are_compressed_even_when_empty(tmp_path):
    """An empty or one-row dataset that can grow (the start of a time series)
    gets h5fz, so rows appended later are compressed, not stored raw (a fresh
    tester found them raw); a fixed one-element dataset stays unchanged."""
    src, out = tmp_path / "e.h5", tmp_path / "o.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("empty", shape=(0,), maxshape=(None,), dtype="f4", chunks=(1000,))
        f.create_dataset("one", data=np.ones((1, 64)), maxshape=(None, 64), chunks=(4, 64))
        f.create_dataset("tiny", data=np.float32([3.5]))
    p = lib.cli("compress", src, out, "abs=1e-3")
    assert re.search(r"^/empty: float32 0 +compressed", p.stdout, re.M), p.stdout
    assert re.search(r"^/one: float64 1x64 +compressed", p.stdout, re.M), p.stdout
    assert "/tiny: float32 1  copied unchanged (fewer than 2 elements)" in p.stdout, p.stdout
    code = ("import h5py, numpy as np, sys\n"
            "h5py.h5z.filter_avail(%d)\n"
            "with h5py.File(sys.argv[1], 'r+') as f:\n"
            "    d = f['empty']; d.resize((3000,)); d[:] = np.sin(np.arange(3000) / 9).astype('f4')\n"
            % lib.FILTER_ID)
    subprocess.run([sys.executable, "-c", code, str(out)],
                   check=True)
    with h5py.File(out, "r") as f:
        d = f["empty"]
        assert lib.filter_ids(d) == [lib.FILTER_ID]
        assert all(d.id.get_chunk_info(k).filter_mask == 0 for k in range(d.id.get_num_chunks()))
        assert np.abs(d[...].astype("f8") - np.sin(np.arange(3000) / 9).astype("f4")).max() <= 1e-3


def test_exclude_naming_nothing_is_an_error(mixed, tmp_path):
    """A mistyped --exclude would compress what the user meant to keep exact."""
    p = lib.cli("compress", mixed, tmp_path / "o.h5", "abs=1e-3", "--exclude", "/tempp", check=False)
    assert p.returncode == 2 and "--exclude /tempp: no such object" in p.stderr, p.stderr
    assert not (tmp_path / "o.h5").exists()


def test_output_mode_follows_the_umask(mixed, tmp_path):
    """OUT is made under a temporary name (mkstemp: 0600); it must end with
    the mode a new file gets under the umask, as from-raw's output does."""
    import stat
    out = tmp_path / "o.h5"
    p = subprocess.run([lib.BIN, "compress", str(mixed), str(out), "abs=1e-3"], capture_output=True, text=True,
                       preexec_fn=lambda: os.umask(0o022))
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o644, oct(out.stat().st_mode)


def test_only_naming_nothing_is_an_error(mixed, tmp_path):
    """A mistyped --only would compress nothing and report success."""
    for bad in ("/nope", "/sub/nope", "/temperature/below_a_dataset"):
        p = lib.cli("compress", mixed, tmp_path / "o.h5", "abs=1e-3", "--only", bad, check=False)
        assert p.returncode == 2 and ("--only %s: no such object" % bad) in p.stderr, p.stderr
        assert "HDF5-DIAG" not in p.stderr
        assert not (tmp_path / "o.h5").exists()


def test_verify_require_filter_accepts_what_compress_leaves_unfiltered(tmp_path):
    """verify --require-filter follows compress's one rule (cli/cli_space.h):
    a scalar, a null dataspace and a fixed one-element float dataset are
    copied unchanged, so verify must not call the copy a failure (a tester
    found it did for the one-element one); a null dataspace is named
    "null", not "scalar"; a one-element dataset that can grow is compressed
    and still required."""
    src, out = tmp_path / "s.h5", tmp_path / "o.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("big", data=np.sin(np.arange(4000) / 7).astype("f4"))
        f.create_dataset("tiny", data=np.float32([3.5]))
        f.create_dataset("scalar", data=np.float64(2.5))
        f.create_dataset("nothing", data=h5py.Empty("f4"))
        f.create_dataset("grows", data=np.float32([1.0]), maxshape=(None,), chunks=(16,))
    p = lib.cli("compress", src, out, "abs=1e-3")
    assert "/nothing: float32 null  copied unchanged (null dataspace (no elements))" in p.stdout, p.stdout
    assert "/scalar: float64 scalar  copied unchanged (scalar)" in p.stdout, p.stdout
    v = lib.cli("verify", src, out, "--abs", "1e-3", "--require-filter", check=False)
    assert v.returncode == 0, v.stdout + v.stderr
    rows = {line.split(":")[0]: line for line in v.stdout.splitlines() if line.startswith("/")}
    assert "float32 null " in rows["/nothing"] and "scalar" not in rows["/nothing"], rows["/nothing"]
    assert "none (fewer than 2 elements: h5fz compress leaves it unchanged" in rows["/tiny"], rows["/tiny"]
    assert "filter h5fz " in rows["/grows"] and rows["/grows"].endswith("ok"), rows["/grows"]
    j = json.loads(lib.cli("verify", src, out, "--abs", "1e-3", "--require-filter", "--json").stdout)
    ds = {d["dataset"]: d for d in j["datasets"]}
    assert ds["/nothing"]["shape"] == "null" and ds["/nothing"]["ok"]
    assert ds["/tiny"]["left_unfiltered"] == "fewer than 2 elements" and ds["/tiny"]["ok"]
    assert ds["/grows"]["left_unfiltered"] is None and ds["/grows"]["filter_applied"]
    # the rule is about what compress leaves alone: a growable one-element
    # dataset stored without the filter is still a failure
    with h5py.File(out, "a") as f:
        del f["grows"]
        f.create_dataset("grows", data=np.float32([1.0]), maxshape=(None,), chunks=(16,))
    v = lib.cli("verify", src, out, "--abs", "1e-3", "--require-filter", "--dataset", "/grows", check=False)
    assert v.returncode == 1 and "MISSING" in v.stdout, v.stdout
    # and inspect names the null dataspace too
    assert "shape null" in lib.cli("inspect", out, "/nothing").stdout


def _compress_in_its_temporary_file(tmp_path, seed, preexec_fn=None):
    """Start `h5fz compress` of 256 MiB of noise (so that the copy takes a
    while) and return (process, OUT, the temporary file's glob pattern)
    once OUT.h5fz-tmp-XXXXXX exists; skip if compress finished first."""
    import glob
    import time
    src, out = tmp_path / "big.h5", tmp_path / "out.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("noise", data=np.random.default_rng(seed).normal(0, 1, (128, 512, 512)).astype("f4"),
                         chunks=(8, 512, 512))
    p = subprocess.Popen([lib.BIN, "compress", str(src), str(out), "abs=1e-6"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
    pattern = str(out) + ".h5fz-tmp-*"
    deadline = time.time() + 60
    while not glob.glob(pattern) and p.poll() is None and time.time() < deadline:
        time.sleep(0.002)
    if p.poll() is not None:
        pytest.skip("compress finished before its temporary file was seen (rc %d)" % p.returncode)
    return p, out, pattern


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_compress_leaves_no_temporary_file(tmp_path, sig):
    """Ctrl-C (or SIGTERM) while compress writes OUT.h5fz-tmp-XXXXXX: the
    process ends by the signal, and neither the temporary file nor OUT stays."""
    import glob
    import signal
    import time
    p, out, pattern = _compress_in_its_temporary_file(tmp_path, 1)
    time.sleep(0.2)  # inside the copy
    p.send_signal(getattr(signal, sig))
    p.communicate(timeout=120)
    assert p.returncode == -getattr(signal, sig), p.returncode
    assert not glob.glob(pattern) and not out.exists(), os.listdir(tmp_path)


@pytest.mark.parametrize("walk", ["grid", "index"])  # the index walk is the one sparse datasets get
def test_damaged_chunk_index_is_refused(tmp_path, walk, monkeypatch):
    """An input whose chunk index lists a chunk outside its extent's grid
    (here the last chunk's B-tree key moved from plane 40 to 240): HDF5
    reads that chunk as the fill value without an error, so a copy would
    store zeros where the file has data and still pass its own check.
    compress must refuse it, name the reason, and leave no OUT."""
    import struct
    src, out = tmp_path / "damaged.h5", tmp_path / "out.h5"
    data = np.random.default_rng(0).normal(0, 1, (50, 100, 100)).astype("f4")
    with h5py.File(src, "w", libver="earliest") as f:  # a version-1 B-tree chunk index
        f.create_dataset("data", data=data, chunks=(10, 100, 100))
    raw = bytearray(src.read_bytes())
    moved, at = 0, raw.find(b"TREE")
    while at >= 0:
        if raw[at + 4] == 1:  # a node of raw data chunks: keys of size, mask, 4 offsets; 8-byte children
            for k in range(struct.unpack_from("<H", raw, at + 6)[0] + 1):
                key = at + 24 + k * 48
                if struct.unpack_from("<4Q", raw, key + 8) == (40, 0, 0, 0):
                    struct.pack_into("<Q", raw, key + 8, 240)
                    moved += 1
        at = raw.find(b"TREE", at + 4)
    assert moved == 1
    src.write_bytes(bytes(raw))
    monkeypatch.setenv("H5FZ_CHUNK_WALK", walk)
    with h5py.File(src) as f:  # what HDF5 makes of it: the chunk reads as zeros
        assert np.all(f["data"][40:] == 0) and np.array_equal(f["data"][:40], data[:40])
    p = lib.cli("compress", src, out, "abs=1e-3", check=False)
    assert p.returncode == 2 and "chunk index is damaged" in p.stderr, (walk, p.returncode, p.stderr)
    assert not out.exists() and not list(tmp_path.glob("out.h5.h5fz-tmp-*"))


def test_compress_keeps_an_inherited_ignored_sighup(tmp_path):
    """Under nohup (SIGHUP inherited as ignored) a hangup does not end
    compress: the temporary file's guard leaves ignored signals ignored."""
    import signal
    import time
    p, out, _ = _compress_in_its_temporary_file(tmp_path, 2,
                                                lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    time.sleep(0.05)  # the guard is set right after the temporary file is made
    p.send_signal(signal.SIGHUP)
    p.communicate(timeout=300)
    assert p.returncode == 0 and out.exists(), p.returncode
