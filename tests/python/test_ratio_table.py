"""bench/suite/ratio_table.py (the ratio table of docs/ratio.md) and the
filters_bench.py run it reads: geomeans over the common fields, each
filter's own fields and every leave-one-out set, --compare naming the set of
quoted figures, and every row that crashed, timed out or broke its bound
listed (never dropped). The last test runs filters_bench.py --chunks capped
on the field in tests/data with two h5fz chains (no hdf5plugin needed)."""
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TABLE = REPO / "bench" / "suite" / "ratio_table.py"
BENCH = REPO / "bench" / "suite" / "filters_bench.py"


def _row(field, flt, rel, ratio, ok=True, **kw):
    r = {"field": field, "filter": flt, "rel": rel, "bound": rel, "ratio": ratio, "bound_ok": ok,
         "max_err": rel / 2 if ok else 3 * rel, "over_bound": 0 if ok else 5, "nan_lost": 0, "finite_lost": 0,
         "inf_changed": 0, "psnr_db": 60.0}
    r.update(kw)
    return r


def _run(tmp_path):
    """Three fields a, b, c; sz3 crashes on a at one bound and times out at the other; zfp breaks its bound on b."""
    rows = []
    for rel, scale in ((1e-2, 4.0), (1e-3, 2.0)):
        for f, base in (("a", 10.0), ("b", 20.0), ("c", 40.0)):
            rows.append(_row(f, "h5fz", rel, base * scale))
            rows.append(_row(f, "h5fz ratio", rel, 2 * base * scale))
            if f == "a":
                rows.append({"field": f, "filter": "sz3", "rel": rel, "bound": rel,
                             "error": "process crashed (SIGSEGV)" if rel == 1e-2 else
                             "timed out: not finished after 120 s (--case-timeout), killed"})
            else:
                rows.append(_row(f, "sz3", rel, 3 * base * scale))
            rows.append(_row(f, "zfp", rel, base, ok=(f != "b")))
    rows.append({"field": "a", "filter": "zstd", "rel": 0.0, "bound": 0.0, "ratio": 1.5, "bound_ok": True})
    p = tmp_path / "run.json"
    p.write_text(json.dumps({"label": "t", "date_utc": "2026-01-01T00:00:00Z", "git_commit": "abc", "command": "x",
                             "machine": {"cpus": 2}, "results": rows}))
    return p


def _table(*args):
    return subprocess.run([sys.executable, str(TABLE), *map(str, args)], capture_output=True, text=True)


def test_geomeans_left_out_and_failures(tmp_path):
    run = _run(tmp_path)
    out = tmp_path / "out"
    p = _table(run, "--out", out, "--no-plots", "--compare", "sz3:%g,%g" % (3 * 4 * math.sqrt(800), 3 * 2 * 28.3))
    assert p.returncode == 0, p.stderr
    js = json.loads((out / "ratio_table.json").read_text())
    assert js["left_out"] == ["a", "b"] and js["common"] == ["c"]
    assert js["geomean"]["h5fz@0.01"] == pytest.approx(160.0)
    own = js["geomean_own"]
    assert own["h5fz@0.01"]["fields"] == ["a", "b", "c"]
    assert own["h5fz@0.01"]["geomean"] == pytest.approx(4 * (10 * 20 * 40) ** (1 / 3))
    assert own["sz3@0.001"]["fields"] == ["b", "c"]
    loo = js["leave_one_out"]
    assert loo["sz3@0.01"]["a"] == pytest.approx(12 * math.sqrt(800)) and loo["sz3@0.01"]["b"] is None
    assert loo["h5fz ratio@0.001"]["c"] == pytest.approx(4 * math.sqrt(200))
    assert js["compare"]["nearest_left_out"] == "a"
    sub = js["compare"]["geomean_subset"]
    assert sub["zfp@0.01"]["n"] == 1 and sub["sz3@0.01"]["n"] == 2
    assert (js["rows"], js["rows_within_bound"], js["rows_bound_broken"], js["rows_no_result"]) == (24, 20, 2, 2)
    whys = {(b["filter"], b["field"], b["rel"]): b["why"] for b in js["not_usable"]}
    assert whys[("sz3", "a", 0.01)] == "process crashed (SIGSEGV)"
    assert whys[("sz3", "a", 0.001)].startswith("timed out")
    assert whys[("zfp", "b", 0.01)].startswith("bound broken: 5 values over the bound")
    md = (out / "ratio_table.md").read_text()
    assert "Bound check: 24 rows: 20 within the bound, 2 broke it, 2 gave no result" in md
    assert "nearest leave-one-out set is without **a**" in md
    assert "| h5fz ratio / sz3 | 0.67x | 0.67x |" in md  # over b, c: 2 x base vs 3 x base
    assert "! timed out" in md and "! bound broken (20.00)" in md


def test_bad_arguments(tmp_path):
    run = _run(tmp_path)
    p = _table(run, "--out", tmp_path / "o", "--no-plots", "--compare", "sz4:1,2")
    assert p.returncode == 2 and "no filter 'sz4'" in p.stderr
    p = _table(run, "--out", tmp_path / "o", "--no-plots", "--compare", "sz3:1,2,3")
    assert p.returncode == 2 and "3 figures for 2 bounds" in p.stderr
    p = _table(run, "--out", tmp_path / "o", "--no-plots", "--compare", "sz3:x")
    assert p.returncode == 2 and "FILTER:V1,V2" in p.stderr
    p = _table(run, run, "--out", tmp_path / "o", "--no-plots")  # the same rows twice
    assert p.returncode != 0 and "is in" in p.stderr


def test_filters_bench_capped_to_table(tmp_path):
    build = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
    if not (build / "plugin").is_dir() or not (build / "bin" / "h5fz").is_file():
        pytest.skip("no h5fz build in %s" % build)
    run = tmp_path / "run.json"
    p = subprocess.run([sys.executable, str(BENCH), "--build", str(build), "--data", str(REPO / "tests" / "data"),
                        "--out", str(run), "--filters", "h5fz", "--chunks", "capped", "--runs", "1",
                        "--rels", "1e-2,1e-3", "--h5fz-chains", "default;ratio", "--label", "test"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(run.read_text())
    assert doc["chunks"] == "capped" and doc["date_utc"] and "--h5fz-chains 'default;ratio'" in doc["command"]
    rows = doc["results"]
    assert len(rows) == 4 and {r["filter"] for r in rows} == {"h5fz", "h5fz ratio"}
    for r in rows:
        assert r["bound_ok"] and r["chunks"] == [50, 64, 100], r
    p = _table(run, "--out", tmp_path / "o", "--no-plots")
    assert p.returncode == 0, p.stderr
    js = json.loads((tmp_path / "o" / "ratio_table.json").read_text())
    assert js["rows_within_bound"] == 4 and js["left_out"] == []
    assert js["geomean"]["h5fz ratio@0.01"] > js["geomean"]["h5fz@0.01"] > 1
