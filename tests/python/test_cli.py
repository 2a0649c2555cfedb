"""The h5fz command-line tool: help, cd-values forms, from-raw, verify's
verdicts (it must catch a broken bound) and inspect."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

COMMANDS = ["cd-values", "from-raw", "verify", "inspect", "plan", "codegen", "ops", "version"]


def test_top_level_help():
    out = lib.cli("--help").stdout
    for c in COMMANDS:
        assert c in out
    assert lib.cli(check=False).returncode == 2
    p = lib.cli("no-such-command", check=False)
    assert p.returncode == 2 and "unknown command" in p.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_subcommand_help(command):
    p = lib.cli(command, "--help", check=False)
    assert p.returncode == 0, p.stderr
    assert (p.stdout + p.stderr).strip()


def test_cd_values_forms():
    bound = 0.0123
    out = lib.cli("cd-values", "abs=%r" % bound).stdout
    ud = re.search(r"UD=(\d+),0,(\d+)((?:,\d+)*)", out)
    assert ud, out
    assert int(ud.group(1)) == lib.FILTER_ID
    words = [w for w in ud.group(3).split(",") if w]
    assert len(words) == int(ud.group(2)) <= 20
    # A leading 0 would make h5repack read the value as octal.
    assert all(w == "0" or not w.startswith("0") for w in words)
    cd = [int(w) for w in words]
    # The bound travels as two words, low 32 bits first.
    lo, hi = struct.unpack("<II", struct.pack("<d", bound))
    assert any(cd[i:i + 2] == [lo, hi] for i in range(len(cd) - 1)), (cd, lo, hi)
    assert "compression=%d, compression_opts=(" % lib.FILTER_ID in out
    assert "cd_values[%d] = {%s}" % (len(cd), ", ".join(words)) in out
    assert re.search(r"^spec: +abs=", out, re.M), out


def test_cd_values_json_and_ud_agree():
    j = json.loads(lib.cli("cd-values", "--json", "abs=1e-3").stdout)
    ud = lib.cli("cd-values", "--ud", "abs=1e-3").stdout.strip()
    assert ud == j["ud"] == "UD=%d,0,%d,%s" % (lib.FILTER_ID, len(j["cd_values"]),
                                               ",".join(map(str, j["cd_values"])))
    # The canonical text parses back to the same words.
    again = json.loads(lib.cli("cd-values", "--json", j["spec"]).stdout)
    assert again["cd_values"] == j["cd_values"]


def test_cd_values_spec_words_may_be_separate_arguments():
    a = lib.cli("cd-values", "--ud", "abs=1e-3 delta zigzag bitshuffle rze").stdout
    b = lib.cli("cd-values", "--ud", "abs=1e-3", "delta", "zigzag", "bitshuffle", "rze").stdout
    assert a == b


def test_cd_values_needs_a_spec():
    p = lib.cli("cd-values", check=False)
    assert p.returncode == 2 and "missing SPEC" in p.stderr


@pytest.mark.parametrize("bad", ["abs=", "abs=-1", "abs=nan", "abs=1e-3 nosuchop",
                                 "abs=1e-3 rze delta"])
def test_cd_values_rejects_bad_specs(bad):
    p = lib.cli("cd-values", bad, check=False)
    assert p.returncode == 2, (bad, p.stdout)
    assert p.stderr.strip()


@pytest.mark.parametrize("spec,says", [("abs=1e-3 rel=1e-3", "'rel=1e-3': the error bound is given twice"),
                                        ("lossless abs=1e-3", "'abs=1e-3': lossless was given already"),
                                        ("abs=1e-3 lossless", "'lossless': an error bound is given already"),
                                        ("lossless lossless", "'lossless': given twice")])
def test_cd_values_names_two_bounds(spec, says):
    p = lib.cli("cd-values", spec, check=False)
    assert p.returncode == 2 and says in p.stderr, (spec, p.stderr)


def _small_raw(tmp_path, dtype="f4"):
    data = lib.embedded_field().load()[:5, :30, :40].astype(dtype)
    path = tmp_path / ("small.f32" if dtype == "f4" else "small.f64")
    data.tofile(path)
    return data, path


def test_from_raw_writes_chunked_dataset(tmp_path):
    data, raw = _small_raw(tmp_path)
    out = tmp_path / "o.h5"
    p = lib.cli("from-raw", raw, out, "--shape", "5x30x40", "--chunk", "2x30x40",
                "--dataset", "/g/field")
    assert "with edge chunks" in p.stdout
    with h5py.File(out, "r") as f:
        d = f["g/field"]
        assert d.chunks == (2, 30, 40) and d.dtype == np.float32
        assert np.array_equal(d[...], data)


def test_from_raw_warns_about_tiny_chunks(tmp_path):
    # a 1x1x40 chunk is 160 bytes: the container's overhead dominates
    data, raw = _small_raw(tmp_path)
    p = lib.cli("from-raw", raw, tmp_path / "t.h5", "--shape", "5x30x40", "--chunk", "1x1x40")
    assert "warning: chunks of 160 bytes are small" in p.stderr, p.stderr
    p = lib.cli("from-raw", raw, tmp_path / "u.h5", "--shape", "5x30x40", "--chunk", "2x30x40")
    assert "warning" not in p.stderr, p.stderr
    p = lib.cli("from-raw", raw, tmp_path / "v.h5", "--shape", "5x30x40", "--chunk-bytes", "100")
    assert "warning: chunks of " in p.stderr, p.stderr  # chosen by size, too
    p = lib.cli("from-raw", raw, tmp_path / "v.h5", "--shape", "5x30x40", "--chunk", "1x1x40", check=False)
    assert p.returncode == 2 and "warning" not in p.stderr, p.stderr  # a refused run: only the error


@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_from_raw_spec_fill_sets_the_datasets_fill_value(tmp_path, dtype):
    """fill=V in --spec becomes the dataset's fill value (the user cd_values
    do not carry it), so values equal to it come back exactly (a tester found
    it accepted, echoed and then ignored)."""
    data, raw = _small_raw(tmp_path, dtype)
    fill = data.dtype.type(-999.123)
    data.reshape(-1)[::7] = fill
    data.tofile(raw)
    out = tmp_path / "f.h5"
    lib.cli("from-raw", raw, out, "--shape", "5x30x40", "--chunk", "2x30x40", "--spec", "abs=1e-2 fill=-999.123")
    with h5py.File(out, "r") as f:
        d = f["data"]
        assert d.dtype.type(d.fillvalue) == fill
        got = d[...]
    m = data == fill
    assert m.sum() > 0 and np.array_equal(got[m].view("u%d" % got.itemsize), data[m].view("u%d" % data.itemsize))
    assert np.abs(got[~m].astype(np.float64) - data[~m]).max() <= 1e-2


def test_cd_values_says_fill_is_not_carried():
    p = lib.cli("cd-values", "abs=1e-3 fill=-999")
    assert "fill= is not carried" in p.stderr
    assert "fill= is not carried" not in lib.cli("cd-values", "abs=1e-3").stderr


def test_from_raw_float64_and_default_chunks(tmp_path):
    data, raw = _small_raw(tmp_path, "f8")
    out = tmp_path / "o.h5"
    lib.cli("from-raw", raw, out, "--shape", "5x30x40", "--chunk-bytes", "20000")
    with h5py.File(out, "r") as f:
        d = f["data"]
        assert d.dtype == np.float64 and d.chunks is not None
        assert np.prod(d.chunks) * 8 <= 20000
        assert np.array_equal(d[...], data)


@pytest.mark.parametrize("args", [
    ["--shape", "5x30x41"],           # size mismatch
    ["--shape", "5x30x0"],            # zero extent
    ["--shape", "5x-30x40"],          # sign
    ["--shape", "5x30x40", "--chunk", "2x30"],      # rank mismatch
    ["--shape", "5x30x40", "--chunk", "6x30x40"],   # chunk larger than the data
    ["--shape", "5x30x40", "--chunk-bytes", "99999999999999999999"],  # past size_t (was 1x1x1 chunks)
    [],                               # no shape
])
def test_from_raw_rejects_bad_input(tmp_path, args):
    _, raw = _small_raw(tmp_path)
    p = lib.cli("from-raw", raw, tmp_path / "o.h5", *args, check=False)
    assert p.returncode == 2 and p.stderr.strip(), (args, p.stdout, p.stderr)


def test_from_raw_refuses_what_is_not_a_file(tmp_path):
    # a directory was reported as 9223372036854775807 bytes; a FIFO blocked forever
    (tmp_path / "adir.f32").mkdir()
    os.mkfifo(tmp_path / "fifo.f32")
    for name, kind in (("adir.f32", "a directory"), ("fifo.f32", "a FIFO")):
        p = lib.cli("from-raw", tmp_path / name, tmp_path / "o.h5", "--shape", "4", check=False, timeout=30)
        assert p.returncode == 2 and "not a regular file" in p.stderr and kind in p.stderr, p.stderr


def test_from_raw_bad_spec_comes_before_the_small_chunk_warning(tmp_path):
    # the warning is for runs whose arguments are accepted
    _, raw = _small_raw(tmp_path)
    p = lib.cli("from-raw", raw, tmp_path / "o.h5", "--shape", "5x30x40", "--chunk", "1x2x2",
                "--spec", "abs=-1", check=False)
    assert p.returncode == 2 and "invalid --spec" in p.stderr and "warning" not in p.stderr, p.stderr


def test_from_raw_missing_file(tmp_path):
    p = lib.cli("from-raw", tmp_path / "nope.f32", tmp_path / "o.h5", "--shape", "4",
                check=False)
    assert p.returncode == 2 and "cannot open" in p.stderr and "No such file" in p.stderr


@pytest.fixture
def compressed_pair(tmp_path):
    """An original and its compressed copy written by `from-raw --spec`."""
    data, raw = _small_raw(tmp_path)
    bound = 1e-3
    orig, comp = tmp_path / "orig.h5", tmp_path / "comp.h5"
    lib.cli("from-raw", raw, orig, "--shape", "5x30x40", "--chunk", "2x30x40")
    lib.cli("from-raw", raw, comp, "--shape", "5x30x40", "--chunk", "2x30x40", "--spec",
            lib.spec_abs(bound))
    return data, orig, comp, bound


def test_verify_passes_and_reports(compressed_pair):
    data, orig, comp, bound = compressed_pair
    p = lib.cli("verify", orig, comp, "--abs", repr(bound), "--require-filter", "--json")
    j = json.loads(p.stdout)
    assert j["ok"] and len(j["datasets"]) == 1
    d = j["datasets"][0]
    assert d["dataset"] == "/data" and d["filter_found"] and d["nan_match"] and d["inf_match"]
    assert 0 <= d["max_abs_error"] <= bound and d["ratio"] > 1
    text = lib.cli("verify", orig, comp, "--abs", repr(bound)).stdout
    assert "/data" in text and "ok" in text and "psnr" in text


@pytest.mark.parametrize("what", ["missing", "folder", "fifo", "not_hdf5"])
def test_inspect_and_verify_name_a_bad_input_in_one_line(compressed_pair, tmp_path, what):
    """A missing file, a folder, a FIFO or a file that is not HDF5 given to
    inspect or verify: one line naming the path and what is wrong (it was
    HDF5's whole stack, "errno = 2, ..., tent_flags = 0; ...", and a FIFO
    would make HDF5 wait for a writer), exit 2."""
    _, orig, _, _ = compressed_pair
    bad = tmp_path / ("nope.h5" if what == "missing" else what)
    want = {"missing": "cannot open %s: No such file or directory" % bad,
            "folder": "%s is not a regular file (a directory)" % bad,
            "fifo": "%s is not a regular file (a FIFO)" % bad,
            "not_hdf5": "%s is not an HDF5 file (no HDF5 signature)" % bad}[what]
    if what == "folder":
        bad.mkdir()
    elif what == "fifo":
        os.mkfifo(bad)
    elif what == "not_hdf5":
        bad.write_bytes(b"plain text, no superblock\n" * 40)
    for args in (["inspect", bad], ["inspect", bad, "--json"], ["verify", bad, orig, "--abs", "1"],
                 ["verify", orig, bad, "--lossless"]):
        p = lib.cli(*args, check=False, timeout=60)
        assert p.returncode == 2 and p.stdout == "", (args, p.stdout, p.stderr)
        assert p.stderr == "h5fz %s: %s\n" % (args[0], want), (args, p.stderr)


def test_an_unreadable_input_is_named_as_such(compressed_pair):
    """A file this user may not read (mode 000): "cannot open PATH:
    Permission denied", exit 2, for inspect, verify and compress (it was
    "cannot open PATH as an HDF5 file (damaged?)" with HDF5's reasons, and
    "(not HDF5, or damaged)" from compress). As root, whom no mode stops,
    the CLI runs as nobody (setpriv)."""
    _, orig, _, _ = compressed_pair
    as_user = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("root, and no setpriv to run the CLI as another user")
        as_user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = subprocess.run(as_user + [lib.BIN, "--version"], capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip("the CLI cannot run as nobody here: %s" % probe.stderr.strip())
    folder = tempfile.mkdtemp(prefix="h5fz-unreadable-")
    try:
        os.chmod(folder, 0o777)  # nobody may look inside (and compress may write there)
        bad = os.path.join(folder, "locked.h5")
        shutil.copy(orig, bad)
        os.chmod(bad, 0)
        for args in (["inspect", bad], ["inspect", bad, "--json"], ["verify", bad, bad, "--lossless"],
                     ["compress", bad, os.path.join(folder, "out.h5"), "abs=1e-3"]):
            p = subprocess.run(as_user + [lib.BIN, *args], capture_output=True, text=True, timeout=60)
            assert p.returncode == 2 and p.stdout == "", (args, p.stdout, p.stderr)
            assert p.stderr == "h5fz %s: cannot open %s: Permission denied\n" % (args[0], bad), (args, p.stderr)
        assert sorted(os.listdir(folder)) == ["locked.h5"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_compress_into_a_folder_is_refused_before_any_work(compressed_pair, tmp_path):
    """OUT an existing folder: refused at once, --force or not (it asked
    for --force and then failed at the final rename, after compressing and
    checking everything); nothing is written into the folder."""
    _, orig, _, _ = compressed_pair
    folder = tmp_path / "outdir"
    folder.mkdir()
    for force in ([], ["--force"]):
        p = lib.cli("compress", orig, folder, "abs=1e-3", *force, check=False)
        assert p.returncode == 2 and p.stdout == "", (force, p.stdout, p.stderr)
        assert p.stderr == "h5fz compress: %s is a directory, not a file: give OUT.h5 as a file name\n" % folder
    assert folder.is_dir() and not list(folder.iterdir())
    assert not [n for n in os.listdir(tmp_path) if "h5fz-tmp" in n]


def test_plan_reports_the_host_threads():
    """`h5fz plan` ends with the CPU executor's thread count and where it
    came from: under `taskset -c 0` one CPU (the online count started 2
    workers there), H5FZ_THREADS over it; JSON too."""
    if not shutil.which("taskset"):
        pytest.skip("taskset (util-linux) is not installed")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one online CPU: a one-CPU mask limits nothing here")
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_THREADS"}
    text = subprocess.run(["taskset", "-c", "0", lib.BIN, "plan"], capture_output=True, text=True, env=env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[-1].startswith("threads    1 on the host (1 CPU in the affinity mask of "), text.stdout
    j = json.loads(subprocess.run(["taskset", "-c", "0", lib.BIN, "plan", "--json"], capture_output=True,
                                  text=True, env=env, check=True).stdout)
    assert j["host_threads"] == 1 and "1 CPU in the affinity mask" in j["host_threads_from"], j
    env["H5FZ_THREADS"] = "3"
    j = json.loads(subprocess.run(["taskset", "-c", "0", lib.BIN, "plan", "--json"], capture_output=True,
                                  text=True, env=env, check=True).stdout)
    assert j["host_threads"] == 3 and j["host_threads_from"] == "H5FZ_THREADS=3", j
    env.pop("H5FZ_THREADS")
    env["OMPI_COMM_WORLD_LOCAL_SIZE"] = str(os.cpu_count())
    j = json.loads(subprocess.run([lib.BIN, "plan", "--json"], capture_output=True, text=True, env=env,
                                  check=True).stdout)
    assert j["host_threads"] == 1 and "(OMPI_COMM_WORLD_LOCAL_SIZE)" in j["host_threads_from"], j


def test_verify_names_a_missing_plugin(compressed_pair, tmp_path):
    """Without the plugin on HDF5_PLUGIN_PATH verify says so in its own
    words (HDF5's stack only ends with "required filter is not registered")."""
    data, orig, comp, bound = compressed_pair
    env = dict(os.environ, HDF5_PLUGIN_PATH=str(tmp_path / "no-plugins-here"))
    p = subprocess.run([lib.BIN, "verify", str(orig), str(comp), "--abs", repr(bound)], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "the h5fz filter (id %d) is not available: set HDF5_PLUGIN_PATH" % lib.FILTER_ID in p.stdout + p.stderr


def test_verify_empty_dataset_has_no_ratio(tmp_path):
    """Nothing stored: no ratio (JSON null, "-" in the text), not 0.000."""
    path = tmp_path / "empty.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("e", shape=(0, 10), dtype="f4", chunks=(4, 10), maxshape=(None, 10))
    d = json.loads(lib.cli("verify", path, path, "--abs", "1e-3", "--json").stdout)["datasets"][0]
    assert d["ratio"] is None, d
    assert "ratio - (nothing stored)" in lib.cli("verify", path, path, "--abs", "1e-3").stdout


def test_verify_rel_bound(compressed_pair):
    data, orig, comp, bound = compressed_pair
    rng = float(data.max() - data.min())
    assert lib.cli("verify", orig, comp, "--rel", repr(bound / rng * 1.0001)).returncode == 0
    p = lib.cli("verify", orig, comp, "--rel", "1e-12", check=False)
    assert p.returncode == 1 and "FAIL" in p.stdout


def test_verify_psnr_of_huge_float64(tmp_path):
    """PSNR of float64 values near +-1e300 is finite (squares of the errors
    and of the range would overflow): 20 log10(range) - 10 log10(MSE),
    computed here in scaled units."""
    a = np.linspace(-1e300, 1e300, 1000)
    b = a * (1 + 1e-6)
    paths = []
    for name, values in [("a.h5", a), ("b.h5", b)]:
        with h5py.File(tmp_path / name, "w") as f:
            f.create_dataset("data", data=values)
        paths.append(tmp_path / name)
    p = lib.cli("verify", paths[0], paths[1], "--rel", "1e-5", "--json")
    d = json.loads(p.stdout)["datasets"][0]
    s = 1e300
    want = 20 * np.log10((a.max() - a.min()) / s) - 10 * np.log10(np.mean(((b - a) / s) ** 2))
    assert d["psnr_db"] is not None and abs(d["psnr_db"] - want) < 1e-6, (d["psnr_db"], want)


def test_verify_catches_broken_bound_nan_and_inf(tmp_path, compressed_pair):
    data, orig, comp, bound = compressed_pair
    for name, change in [("bound", lambda a: a.__setitem__((1, 2, 3), a[1, 2, 3] + 2 * bound)),
                         ("nan", lambda a: a.__setitem__((0, 0, 0), np.nan)),
                         ("inf", lambda a: a.__setitem__((4, 29, 39), np.inf))]:
        bad = data.copy()
        change(bad)
        path = tmp_path / ("bad_%s.h5" % name)
        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=bad)
        p = lib.cli("verify", orig, path, "--abs", repr(bound), check=False)
        assert p.returncode == 1, (name, p.stdout)
        p = lib.cli("verify", orig, path, "--abs", repr(bound), "--json", check=False)
        assert json.loads(p.stdout)["ok"] is False
    # Uncompressed copy: values fine, filter missing.
    p = lib.cli("verify", orig, orig, "--abs", "0", check=False)
    assert p.returncode == 0
    p = lib.cli("verify", orig, orig, "--abs", "0", "--require-filter", check=False)
    assert p.returncode == 1 and "MISSING" in p.stdout


def test_verify_usage_errors(compressed_pair, tmp_path):
    _, orig, comp, _ = compressed_pair
    assert lib.cli("verify", orig, comp, check=False).returncode == 2
    assert lib.cli("verify", orig, comp, "--abs", "1", "--rel", "1", check=False).returncode == 2
    # the same bound twice is refused, not the last one silently taken
    p = lib.cli("verify", orig, comp, "--abs", "1", "--abs", "1e-9", check=False)
    assert p.returncode == 2 and "once" in p.stderr, p.stderr
    assert lib.cli("verify", orig, tmp_path / "nope.h5", "--abs", "1",
                   check=False).returncode == 2
    p = lib.cli("verify", orig, comp, "--abs", "1", "--dataset", "/nope", check=False)
    assert p.returncode == 2 and "/nope" in p.stdout


def test_verify_names_a_non_numeric_dataset(tmp_path):
    # a compound or string dataset named with --dataset: said to be outside
    # what h5fz compresses, not "read failed" with HDF5's conversion stack
    for name in ("a.h5", "b.h5"):
        with h5py.File(tmp_path / name, "w") as f:
            f["c"] = np.zeros(10, dtype=[("a", "f4"), ("b", "i4")])
            f["s"] = np.array([b"abc", b"de"])
    p = lib.cli("verify", tmp_path / "a.h5", tmp_path / "b.h5", "--abs", "1e-3", "--dataset", "c",
                "--dataset", "s", check=False)
    assert p.returncode != 0
    assert "c: ERROR compound" in p.stdout and "s: ERROR string" in p.stdout, p.stdout
    assert "not compressed by h5fz" in p.stdout and "read failed" not in p.stdout


def test_verify_whole_file_names_what_it_skips(tmp_path):
    # verify without --dataset checks the floating-point datasets and says
    # which others it left out, instead of passing over them in silence
    data = np.linspace(0, 1, 4000, dtype="f4").reshape(40, 100)
    cd = lib.cd_values("abs=1e-3")[0]
    for name, comp in (("a.h5", None), ("b.h5", lib.FILTER_ID)):
        with h5py.File(tmp_path / name, "w") as f:
            kw = dict(compression=comp, compression_opts=tuple(cd)) if comp else {}
            f.create_dataset("x", data=data, chunks=(10, 100), **kw)
            f["grp/ints"] = np.arange(10, dtype="i4")
            f["s"] = np.array([b"abc", b"de"])
    p = lib.cli("verify", tmp_path / "a.h5", tmp_path / "b.h5", "--abs", "1e-3")
    assert "/x" in p.stdout and "skipped 2 datasets that are not floating point" in p.stdout, p.stdout
    assert "/grp/ints" in p.stdout.splitlines()[-1] and "/s" in p.stdout.splitlines()[-1], p.stdout
    j = json.loads(lib.cli("verify", tmp_path / "a.h5", tmp_path / "b.h5", "--abs", "1e-3", "--json").stdout)
    assert j["ok"] and j["skipped_not_float"] == ["/grp/ints", "/s"], j


def test_inspect_text_and_json(compressed_pair):
    data, orig, comp, bound = compressed_pair
    out = lib.cli("inspect", comp).stdout
    assert "cd_values" in out and "spec: abs=" in out and "total: 3 chunks" in out, out
    j = json.loads(lib.cli("inspect", comp, "/data", "--json").stdout)
    d = j["datasets"][0]
    assert d["filter_found"] and d["spec"].startswith("abs=")
    assert len(d["chunks"]) == 3
    assert [c["offset"] for c in d["chunks"]] == [[0, 0, 0], [2, 0, 0], [4, 0, 0]]
    for c in d["chunks"]:
        assert "error" not in c, c
        assert c["input_bytes"] == 2 * 30 * 40 * 4  # edge chunk arrives padded
        assert 0 < c["abs_bound"] <= bound
    assert d["totals"]["stored_bytes"] == sum(c["stored_bytes"] for c in d["chunks"])
    # The uncompressed original: no filter, chunks not containers.
    out = lib.cli("inspect", orig, "--summary").stdout
    assert "not in the pipeline" in out


# ---- tester reports: data safety, honest reports, argument handling -------

def test_from_raw_never_overwrites_its_input(tmp_path):
    _, raw = _small_raw(tmp_path)
    before = raw.read_bytes()
    link = tmp_path / "link.f32"
    link.symlink_to(raw)
    for out in [raw, link, tmp_path / "." / raw.name]:
        for extra in [[], ["--force"]]:
            p = lib.cli("from-raw", raw, out, "--shape", "5x30x40", *extra, check=False)
            assert p.returncode == 2 and "input" in p.stderr, (out, extra, p.stderr)
    assert raw.read_bytes() == before


def test_from_raw_needs_force_to_replace(tmp_path):
    _, raw = _small_raw(tmp_path)
    out = tmp_path / "o.h5"
    lib.cli("from-raw", raw, out, "--shape", "5x30x40", "--quiet")
    p = lib.cli("from-raw", raw, out, "--shape", "5x30x40", check=False)
    assert p.returncode == 2 and "--force" in p.stderr
    # a wrong shape is named first: --force would not have helped
    p = lib.cli("from-raw", raw, out, "--shape", "5x30x41", "--quiet", check=False)
    assert p.returncode == 2 and "bytes" in p.stderr and "--force" not in p.stderr, p.stderr
    lib.cli("from-raw", raw, out, "--shape", "5x30x40", "--quiet", "--force")


def test_from_raw_leaves_no_file_when_the_write_fails(tmp_path):
    """A write the filter refuses (here: H5FZ_DEVICE names no device) fails
    with the reason and removes the half-written output."""
    _, raw = _small_raw(tmp_path)
    out = tmp_path / "o.h5"
    p = subprocess.run([lib.BIN, "from-raw", str(raw), str(out), "--shape", "5x30x40", "--spec", "abs=1e-3"],
                       capture_output=True, text=True, env={**os.environ, "H5FZ_DEVICE": "banana"})
    assert p.returncode != 0 and 'H5FZ_DEVICE="banana"' in p.stderr, p.stderr
    assert not out.exists()


def _device_env(**settings):
    env = {k: v for k, v in os.environ.items() if k not in ("H5FZ_QUIET", "H5FZ_DEVICE", "H5FZ_DEVICE_STRICT")}
    return {**env, **settings}


@pytest.mark.parametrize("settings, reason", [
    ({"H5FZ_DEVICE": "gpux"}, 'H5FZ_DEVICE="gpux": want auto, gpu or cpu'),
    ({"H5FZ_DEVICE": "gpu"}, "H5FZ_DEVICE=gpu, but the GPU executor is not usable"),
    ({"H5FZ_DEVICE": "gpu", "H5FZ_DEVICE_STRICT": "1"}, "H5FZ_DEVICE=gpu, but the GPU executor is not usable"),
], ids=["gpux", "gpu", "gpu-strict"])
def test_from_raw_says_a_device_error_once(tmp_path, settings, reason):
    """A device setting the filter refuses at H5Dcreate is said once, on one
    line: the filter printed its own line too (HDF5's printing was off, so
    it took it that no one would say it), and from-raw's line ran on into
    HDF5's frames ("error during user callback; ...") until cut."""
    _, raw = _small_raw(tmp_path)
    p = subprocess.run([lib.BIN, "from-raw", str(raw), str(tmp_path / "o.h5"), "--shape", "5x30x40", "--spec",
                        "abs=1e-3"], capture_output=True, text=True, env=_device_env(**settings))
    if p.returncode == 0:  # H5FZ_DEVICE=gpu where a GPU is usable
        assert settings["H5FZ_DEVICE"] == "gpu" and "H5FZ_DEVICE" not in p.stderr, p.stderr
        return
    assert p.stderr.count(reason) == 1, p.stderr
    assert p.stderr.startswith("h5fz from-raw: cannot create dataset /data: h5fz: ") and p.stderr.count("\n") == 1, \
        p.stderr
    assert "user callback" not in p.stderr, p.stderr


def test_compress_says_a_refusal_once(tmp_path):
    """The same for h5fz compress: a chunk over the format's limit (a dataset
    never written, so the 2.4 GB chunk costs nothing) is said in compress's
    line only, not by the filter as well."""
    src = tmp_path / "big.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("big", shape=(10,), maxshape=(None,), chunks=(300000000,), dtype="f8")
    p = subprocess.run([lib.BIN, "compress", str(src), str(tmp_path / "o.h5"), "abs=1e-3"], capture_output=True,
                       text=True, env=_device_env())
    assert p.returncode != 0 and p.stderr.count("the limit of the h5fz format") == 1, p.stderr
    assert p.stderr.startswith("h5fz compress: "), p.stderr
    # the filter's whole reason, its advice after the "; " too
    assert "use smaller chunks" in p.stderr, p.stderr


def _mixed_file(path):
    a = np.sin(np.arange(5 * 30 * 40) / 50.0).astype("f4").reshape(5, 30, 40)
    with h5py.File(path, "w") as f:
        f.create_dataset("be", data=a.astype(">f4"), chunks=(2, 30, 40))
        f.create_dataset("le", data=a, chunks=(2, 30, 40))
        f.create_dataset("i32", data=np.arange(1200, dtype="i4").reshape(30, 40), chunks=(10, 40))
        f.create_dataset("scalar", data=np.float32(3.5))
    return a


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack not installed")
def _unfilter_chunks(path, name):
    """Store every chunk of path:name again as its raw values with filter
    mask 1, as HDF5 does when an optional filter skips a chunk: the
    pipeline lists h5fz, yet the data is raw."""
    with h5py.File(path, "a") as f:
        d = f[name]
        values = d[...]
        for i in range(d.id.get_num_chunks()):
            off = d.id.get_chunk_info(i).chunk_offset
            block = values[tuple(slice(o, o + c) for o, c in zip(off, d.chunks))]
            full = np.zeros(d.chunks, d.dtype)
            full[tuple(slice(0, n) for n in block.shape)] = block
            d.id.write_direct_chunk(off, full.tobytes(), 1)


def test_verify_require_filter_checks_every_chunk(tmp_path):
    """An optional filter that skipped the chunks is in the pipeline but
    compressed nothing: --require-filter must fail."""
    orig, comp = tmp_path / "mix.h5", tmp_path / "mixc.h5"
    _mixed_file(orig)
    ud = lib.cli("cd-values", "--ud", "abs=1e-3").stdout.strip()
    optional = re.sub(r"^UD=(\d+),0,", r"UD=\1,1,", ud)
    lib.h5repack(orig, comp, optional)
    _unfilter_chunks(comp, "be")
    p = lib.cli("verify", orig, comp, "--abs", "1e-3", "--dataset", "/be", "--require-filter",
                check=False)
    assert p.returncode == 1 and "unfiltered" in p.stdout and "FAIL" in p.stdout, p.stdout
    j = json.loads(lib.cli("verify", orig, comp, "--abs", "1e-3", "--json",
                           "--require-filter", check=False).stdout)
    ds = {d["dataset"]: d for d in j["datasets"]}
    assert ds["/be"]["filter_found"] and not ds["/be"]["filter_applied"]
    assert ds["/be"]["unfiltered_chunks"] == ds["/be"]["chunks"] == 3 and not ds["/be"]["ok"]
    assert ds["/le"]["filter_applied"] and ds["/le"]["ok"]
    # A scalar cannot be chunked, so cannot be compressed: said, not failed.
    assert ds["/scalar"]["scalar"] and ds["/scalar"]["ok"]
    p = lib.cli("verify", orig, comp, "--abs", "1e-3", "--dataset", "/scalar",
                "--require-filter")
    assert "not chunked, cannot be compressed" in p.stdout
    p = lib.cli("verify", orig, comp, "--abs", "1e-3", "--dataset", "/le", "--require-filter")
    assert p.returncode == 0
    out = lib.cli("inspect", comp, "/be").stdout
    assert "unfiltered chunks 3" in out


def test_integer_datasets_are_reported_as_such(tmp_path):
    path = tmp_path / "mix.h5"
    _mixed_file(path)
    out = lib.cli("inspect", path, "/i32").stdout
    assert "int32" in out and "not compressed by h5fz" in out, out
    assert "float" not in out.split("\n")[0] and "magic" not in out, out
    j = json.loads(lib.cli("inspect", path, "/i32", "--json").stdout)
    assert j["datasets"][0]["dtype"] == "int32"
    p = lib.cli("verify", path, path, "--abs", "0", "--dataset", "/i32")
    assert p.stdout.startswith("/i32: int32 30x40 "), p.stdout
    assert "not compressed by h5fz" in p.stdout
    out = lib.cli("inspect", path, "/scalar").stdout
    assert "not chunked, cannot be compressed" in out


def test_inspect_ratio_is_verify_ratio(compressed_pair):
    data, orig, comp, bound = compressed_pair
    v = json.loads(lib.cli("verify", orig, comp, "--abs", repr(bound), "--json").stdout)
    i = json.loads(lib.cli("inspect", comp, "--json").stdout)
    t = i["datasets"][0]
    assert t["ratio"] == pytest.approx(v["datasets"][0]["ratio"], rel=1e-5)
    assert t["dataset_bytes"] == data.nbytes
    # Edge-chunk padding makes the chunks' own ratio higher.
    assert t["totals"]["chunk_ratio"] > t["ratio"]
    out = lib.cli("inspect", comp).stdout
    assert "chunk ratio (padded chunk bytes / stored bytes)" in out
    total = re.search(r"total: .* ratio ([0-9.]+) \(dataset bytes", out)
    assert total and float(total.group(1)) == pytest.approx(v["datasets"][0]["ratio"], abs=1e-3)


def test_inspect_shows_each_chunks_chain(compressed_pair):
    _, _, comp, _ = compressed_pair
    out = lib.cli("inspect", comp).stdout
    assert out.count("chain quant delta zigzag bitshuffle rze") == 3, out
    j = json.loads(lib.cli("inspect", comp, "--json").stdout)
    for c in j["datasets"][0]["chunks"]:
        assert c["chain"] == ["quant", "delta", "zigzag", "bitshuffle", "rze"]


def test_errors_are_one_line(tmp_path):
    p = lib.cli("inspect", tmp_path / "nonexist.h5", check=False)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("h5fz inspect: "), repr(p.stderr)
    p = lib.cli("verify", tmp_path / "a.h5", tmp_path / "b.h5", "--abs", "1", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, repr(p.stderr)


def test_options_after_positional_arguments(compressed_pair):
    _, orig, comp, bound = compressed_pair
    a = lib.cli("cd-values", "abs=1e-3", "--ud").stdout
    assert a == lib.cli("cd-values", "--ud", "abs=1e-3").stdout and a.startswith("UD=")
    j = json.loads(lib.cli("cd-values", "abs=1e-3", "delta", "zigzag", "bitshuffle", "rze",
                           "--json").stdout)
    assert j["spec"].startswith("abs=")
    # "->" is a spec word, not an option.
    lib.cli("cd-values", "abs=1e-3", "->", "delta", "->", "zigzag", "->", "bitshuffle", "->",
            "rze", "--ud")
    for args in [("cd-values", "abs=1e-3", "--nope"), ("inspect", comp, "--nope"),
                 ("verify", orig, comp, "--abs", "1", "--nope"), ("codegen", "abs=1", "--nope")]:
        p = lib.cli(*args, check=False)
        assert p.returncode == 2 and "unknown option '--nope'" in p.stderr, (args, p.stderr)
    p = lib.cli("inspect", comp, "--summary")
    assert "total:" in p.stdout
    p = lib.cli("verify", orig, "--json", comp, "--abs", repr(bound))
    assert json.loads(p.stdout)["ok"]


def test_codegen_prints_the_kernel():
    out = lib.cli("codegen", "abs=1e-3").stdout
    assert "h5fz_encode" in out and "h5fz_rze_encode" in out and "h5fz_decode" in out
    assert "float32" in out
    assert "256 threads per block" in out  # the hopper class's tuning
    out64 = lib.cli("codegen", "abs=1e-3", "--dtype", "f64", "--threads", "512").stdout
    assert "float64" in out64 and "512 threads per block" in out64
    plain, padded = (lib.cli("codegen", "abs=1e-3", *extra).stdout for extra in ([], ["--padded-planes"]))
    smem = [int(re.search(r"dynamic shared memory (\d+) bytes", o).group(1)) for o in (plain, padded)]
    assert smem[1] - smem[0] > 16000 and "encode_padded_32" in padded and "encode_padded" not in plain, smem
    assert "encode_padded" not in lib.cli("codegen", "abs=1e-3 delta zigzag bitpack", "--padded-planes").stdout
    assert "float64" in lib.cli("codegen", "abs=1e-3 dtype=f64").stdout
    for bad in [["--threads", "33"], ["--dtype", "f16"], ["--dtype", "f32", "dtype=f64"]]:
        p = lib.cli("codegen", "abs=1e-3", *bad, check=False)
        assert p.returncode == 2 and p.stderr.strip(), bad
    assert lib.cli("codegen", check=False).returncode == 2


def test_ops_lists_the_op_table():
    out = lib.cli("ops").stdout
    for name in ["quant", "delta", "zigzag", "negabinary", "bitshuffle", "rze", "raw"]:
        assert re.search(r"^\d+ +%s +(map|transform|coder) " % name, out, re.M), (name, out)
    j = json.loads(lib.cli("ops", "--json").stdout)
    assert {"id": 30, "name": "rze"}.items() <= next(o for o in j if o["name"] == "rze").items()
    assert lib.cli("ops", "extra", check=False).returncode == 2


def test_ops_lists_the_named_chains_as_the_spec_parser_reads_them():
    """`h5fz ops` names each preset (`ratio`) with the chain it stands for and
    the default chain, from the library's tables: each listed chain, typed
    out, gives the same cd_values as its name (or as a bound alone)."""
    out = lib.cli("ops").stdout
    named = re.findall(r"^  (\w+) +(quant [a-z_ =0-9]+)$", out, re.M)
    assert ("ratio", "quant lorenzo_nd zigzag huffctx subchunk=65536") in named, out
    default = re.search(r'^default chain \(a bound alone, e\.g\. "abs=1e-3"\): (.+)$', out, re.M).group(1)
    assert default == "quant delta zigzag bitshuffle rze", out
    cd = lambda spec: lib.cli("cd-values", spec).stdout
    for name, chain in named:
        assert cd("abs=1e-3 " + name) == cd("abs=1e-3 " + chain), (name, chain)
    assert cd("abs=1e-3") == cd("abs=1e-3 " + default)


def test_version_takes_no_arguments():
    assert lib.cli("version").stdout.startswith("h5fz ")
    p = lib.cli("version", "extra", check=False)
    assert p.returncode == 2 and "extra" in p.stderr


def test_cd_values_empty_spec_means_defaults_with_a_note():
    p = lib.cli("cd-values", "--ud", "")
    assert p.stdout.strip() == lib.cli("cd-values", "--ud", "rel=1e-4").stdout.strip()
    assert "empty" in p.stderr and "defaults" in p.stderr


def test_byte_order_is_named(tmp_path):
    """A big-endian float32 dataset is not "float32": inspect and verify
    name the byte order (h5fz compresses it like a little-endian one)."""
    path = tmp_path / "mix.h5"
    _mixed_file(path)
    with h5py.File(path, "a") as f:
        f.create_dataset("be64", data=np.arange(6, dtype=">f8"), chunks=(3,))
        f.create_dataset("bei16", data=np.arange(6, dtype=">i2"), chunks=(3,))
    out = lib.cli("inspect", path, "/be").stdout
    assert out.startswith("/be: float32 big-endian, shape 5x30x40,"), out
    assert "little-endian float32/float64 only" not in out, out
    out = lib.cli("inspect", path, "/le").stdout
    assert out.startswith("/le: float32, shape") and "little-endian" not in out, out
    j = {d["dataset"]: d for d in json.loads(lib.cli("inspect", path, "--json").stdout)["datasets"]}
    assert j["/be"]["dtype"] == "float32 big-endian" and j["/be"]["byte_order"] == "big-endian"
    assert j["/be64"]["dtype"] == "float64 big-endian"
    assert j["/le"]["dtype"] == "float32" and j["/le"]["byte_order"] == "little-endian"
    j = json.loads(lib.cli("inspect", path, "/bei16", "--json").stdout)["datasets"][0]
    assert j["dtype"] == "int16 big-endian" and j["byte_order"] == "big-endian"
    p = lib.cli("verify", path, path, "--abs", "0", "--dataset", "/be")
    assert p.stdout.startswith("/be: float32 big-endian 5x30x40 "), p.stdout
    v = json.loads(lib.cli("verify", path, path, "--abs", "0", "--json").stdout)
    assert {d["dataset"]: d["dtype"] for d in v["datasets"]} == {
        "/be": "float32 big-endian", "/be64": "float64 big-endian", "/le": "float32",
        "/scalar": "float32"}


@pytest.mark.parametrize("ops,why", [("99", "needs a map"), ("10,30", "must start with a map"),
                                     ("1,30,30", "only the last op may be a coder")])
def test_plan_refuses_an_invalid_chain(ops, why):
    p = lib.cli("plan", "--ops", ops, check=False)
    assert p.returncode == 2 and "is not a valid chain" in p.stderr and why in p.stderr, p.stderr


def test_plan_bad_input_files_exit_2(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a registry\n")
    for opt in ("--registry", "--device"):
        p = lib.cli("plan", opt, bad, check=False)
        assert p.returncode == 2 and str(bad) in p.stderr, (opt, p.returncode, p.stderr)


def test_verify_notices_a_changed_type(tmp_path):
    """Values read as doubles hid a type change (a tester: a float32 dataset
    against an int32 one of the same values passed)."""
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    with h5py.File(a, "w") as f:
        f["x"] = np.arange(10, dtype="f4")
    with h5py.File(b, "w") as f:
        f["x"] = np.arange(10, dtype="i4")
    p = lib.cli("verify", a, b, "--abs", "0", check=False)
    assert p.returncode == 2 and "type float32 in the original, int32 in the compressed file" in p.stdout, p.stdout
    with h5py.File(b, "w") as f:
        f["x"] = np.arange(10, dtype="f4")
    assert lib.cli("verify", a, b, "--abs", "0").returncode == 0


@pytest.mark.parametrize("ops", ["1,,30", "1,10,11,13,30,", ",1,30", "1,x"])
def test_plan_refuses_empty_or_bad_op_items(ops):
    """An empty item was skipped ("1,,30" planned as "1,30"; a tester)."""
    p = lib.cli("plan", "--ops", ops, check=False)
    assert p.returncode == 2 and "bad --ops" in p.stderr, p.stderr


def test_rel_above_one_is_a_warning_not_an_error(tmp_path):
    """rel= above 1 lets any value come back as any other of its chunk:
    kept (SZ3 takes it) but said, by every command that takes a
    spec; rel=1 and below say nothing (docs/spec.md)."""
    p = lib.cli("cd-values", "rel=2")
    assert "h5fz cd-values: warning: rel=2 allows errors of up to 200 % of each chunk's value range" in p.stderr
    assert "did you mean rel=0.02, i.e. 2 %?" in p.stderr, p.stderr
    assert lib.cli("cd-values", "rel=1").stderr == ""
    src, out = tmp_path / "s.h5", tmp_path / "o.h5"
    a = np.sin(np.arange(8000) / 30).astype("f4")
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=a)
    p = lib.cli("compress", src, out, "rel=3")
    # said once, by the filter's set_local (the plugin under the CLI)
    assert p.stderr.count("h5fz: warning: rel=3 allows errors of up to 300 %") == 1, p.stderr
    with h5py.File(out, "r") as f:
        b = f["x"][...]
    assert np.all(np.abs(b.astype("f8") - a) <= 3 * (a.max() - a.min()))
    a.tofile(tmp_path / "a.f32")
    p = lib.cli("from-raw", tmp_path / "a.f32", tmp_path / "r.h5", "--shape", "8000", "--spec", "rel=1.5")
    assert p.stderr.count("h5fz: warning: rel=1.5 allows errors of up to 150 %") == 1, p.stderr


def test_plan_maps_library_errors_to_exit_codes(tmp_path):
    """`h5fz plan`: the planner's failures reach the user through the CLI's
    one mapping (cli/cli_status.c): a bad input file is 2 with the
    planner's own message, a chain no class can run is 1 (docs/cli.md)."""
    devices = os.path.join(os.path.dirname(__file__), "..", "..", "planner", "devices")
    cal = tmp_path / "cal.txt"
    cal.write_text("not a calibration line\n")
    p = lib.cli("plan", "--device", os.path.join(devices, "h200.txt"), "--calibration", cal, check=False)
    assert p.returncode == 2 and ("%s:1: expected 'device | class | key=value ...'" % cal) in p.stderr, p.stderr
    for missing in (tmp_path / "no-such-calibration.txt", tmp_path):  # a mistyped path, a folder: never silently the roofline
        p = lib.cli("plan", "--device", os.path.join(devices, "h200.txt"), "--calibration", missing, check=False)
        assert p.returncode == 2 and ("h5fz plan: calibration: %s: cannot open" % missing) in p.stderr, p.stderr
    p = lib.cli("plan", "--device", tmp_path / "none.txt", check=False)
    assert p.returncode == 2 and "h5fz plan: device description: " in p.stderr and "cannot open" in p.stderr
    reg = tmp_path / "reg.txt"
    reg.write_text("start = c\n[c]\ntarget = cpu\nops = 1\n")
    p = lib.cli("plan", "--registry", reg, "--ops", "1,10,11,13,30", check=False)
    assert p.returncode == 1 and "no class of the chain is available" in p.stderr, p.stderr
