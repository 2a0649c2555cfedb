"""The h5fz command-line tool: help, cd-values forms, from-raw, verify's
verdicts (it must catch a broken bound) and inspect."""
import json
import re
import struct

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

COMMANDS = ["cd-values", "from-raw", "verify", "inspect", "plan", "codegen"]


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
    [],                               # no shape
])
def test_from_raw_rejects_bad_input(tmp_path, args):
    _, raw = _small_raw(tmp_path)
    p = lib.cli("from-raw", raw, tmp_path / "o.h5", *args, check=False)
    assert p.returncode == 2 and p.stderr.strip(), (args, p.stdout, p.stderr)


def test_from_raw_missing_file(tmp_path):
    p = lib.cli("from-raw", tmp_path / "nope.f32", tmp_path / "o.h5", "--shape", "4",
                check=False)
    assert p.returncode == 2 and "cannot open" in p.stderr


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


def test_verify_rel_bound(compressed_pair):
    data, orig, comp, bound = compressed_pair
    rng = float(data.max() - data.min())
    assert lib.cli("verify", orig, comp, "--rel", repr(bound / rng * 1.0001)).returncode == 0
    p = lib.cli("verify", orig, comp, "--rel", "1e-12", check=False)
    assert p.returncode == 1 and "FAIL" in p.stdout


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
    assert lib.cli("verify", orig, tmp_path / "nope.h5", "--abs", "1",
                   check=False).returncode == 2
    p = lib.cli("verify", orig, comp, "--abs", "1", "--dataset", "/nope", check=False)
    assert p.returncode == 2 and "/nope" in p.stdout


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
