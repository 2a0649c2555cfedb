"""`h5fz inspect`: chunks stored raw (whole chunk verbatim) are marked and
counted, and the h5fz_* attributes the dataset API writes
(docs/dataset_api.md) are printed, in text and JSON. The datasets are
written through the filter with h5py; the attributes are added with h5py, as
the dataset API would write them."""
import json
import math
import os
import pathlib
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

CHUNK = (2, 32, 40)
CHUNK_BYTES = 2 * 32 * 40 * 4


def _smooth(shape=(4, 32, 40)):
    return np.sin(np.arange(int(np.prod(shape))) / 50.0).astype("f4").reshape(shape)


def _random_bits(shape, seed=7):
    # Random bit patterns: NaNs, Infs, huge and tiny values of every sign.
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**32, size=shape, dtype=np.uint32).view(np.float32)


def _write(f, name, data, spec, chunks=CHUNK):
    cd, _ = lib.cd_values(spec)
    d = f.create_dataset(name, data=data, chunks=chunks, compression=lib.FILTER_ID,
                         compression_opts=tuple(cd))
    # h5py adds the filter as optional: make sure it really ran.
    assert d.id.get_storage_size() > 0
    return d


def _inspect_json(path, *args):
    return json.loads(lib.cli("inspect", path, *args, "--json").stdout)["datasets"]


# ---- stored-raw chunks ------------------------------------------------------

@pytest.fixture
def mixed_raw(tmp_path):
    """/mixed: chunk 0 smooth (coded), chunk 1 random bits at abs=1e-30
    (nothing compresses: stored raw)."""
    data = _smooth()
    data[2:] = _random_bits((2, 32, 40))
    path = tmp_path / "raw.h5"
    with h5py.File(path, "w") as f:
        _write(f, "mixed", data, "abs=1e-30")
        _write(f, "smooth", _smooth(), "abs=1e-3")
    return path, data


def test_raw_chunk_is_marked_in_text(mixed_raw):
    path, _ = mixed_raw
    out = lib.cli("inspect", path, "/mixed").stdout
    lines = [l for l in out.splitlines() if re.match(r"^ +\d+ \[", l)]
    assert len(lines) == 2, out
    assert "STORED RAW" not in lines[0] and "chain quant" in lines[0], out
    assert re.match(r"^ +1 \[2,0,0\] +stored %d .*STORED RAW: whole chunk verbatim"
                    % (CHUNK_BYTES + 84), lines[1]), out
    # A raw chunk has no sub-chunks or outliers to report.
    assert "raw sub-chunks" not in lines[1] and "outliers" not in lines[1], out
    assert "stored raw chunks 1," in out, out
    # The summary counts it too.
    assert "stored raw chunks 1," in lib.cli("inspect", path, "/mixed", "--summary").stdout
    # A dataset without raw chunks says 0.
    assert "stored raw chunks 0," in lib.cli("inspect", path, "/smooth").stdout


def test_raw_chunk_in_json(mixed_raw):
    path, data = mixed_raw
    (d,) = _inspect_json(path, "/mixed")
    assert [c["stored_raw"] for c in d["chunks"]] == [False, True]
    raw = d["chunks"][1]
    assert raw["stored_bytes"] == raw["input_bytes"] + 84  # header + bytes + CRC
    assert raw["outliers"] == 0 and raw["raw_subchunks"] == 0
    assert d["totals"]["raw_chunks"] == 1
    (s,) = _inspect_json(path, "/smooth", "--summary")
    assert s["totals"]["raw_chunks"] == 0
    # The raw chunk still reads back exactly.
    with h5py.File(path, "r") as f:
        back = f["mixed"][2:]
    assert np.array_equal(back.view(np.uint32), data[2:].view(np.uint32))


# ---- the dataset API's attributes ------------------------------------------

def _api_attributes(d, positions, values, chunk_outliers, *, fixed_strings=False):
    """The attributes of docs/dataset_api.md, as h5fz_dataset_write writes
    them (strings variable-length as h5py writes them, or fixed-length as C
    code often does)."""
    def s(name, text):
        if fixed_strings:
            d.attrs.create(name, np.bytes_(text))  # fixed-length ASCII
        else:
            d.attrs[name] = text
    s("h5fz_version", "0.1.0")
    s("h5fz_spec", "abs=0.001 quant delta zigzag bitshuffle rze")
    s("h5fz_mode", "abs")
    d.attrs["h5fz_bound"] = np.float64(1e-3)
    s("h5fz_kernel_class", "cpu")
    s("h5fz_plan_digest", "")
    d.attrs["h5fz_ratio"] = np.float64(d.size * d.dtype.itemsize / d.id.get_storage_size())
    d.attrs["h5fz_stored_bytes"] = np.uint64(d.id.get_storage_size())
    d.attrs["h5fz_chunk_abs_bound"] = np.full(len(chunk_outliers), 1e-3)
    d.attrs["h5fz_chunk_outliers"] = np.asarray(chunk_outliers, dtype=np.uint32)
    d.attrs["h5fz_outlier_positions"] = np.asarray(positions, dtype=np.uint64)
    d.attrs["h5fz_outlier_values"] = np.asarray(values, dtype=d.dtype)


@pytest.fixture
def with_attributes(tmp_path):
    """/api: a float32 field with 7 outliers (NaN, Inf, -Inf, huge values)
    written through the filter, with the dataset API's attributes."""
    data = _smooth()
    flat = data.reshape(-1)
    positions = [5, 17, 300, 1363, 2600, 3000, 3881]
    specials = [np.nan, np.inf, -np.inf, 1e30, -2.5e31, 3e35, np.nan]
    for p, v in zip(positions, specials):
        flat[p] = v
    per_chunk = [sum(p < 1280 * 2 for p in positions), sum(p >= 1280 * 2 for p in positions)]
    path = tmp_path / "api.h5"
    with h5py.File(path, "w") as f:
        d = _write(f, "api", data, "abs=1e-3")
        _api_attributes(d, positions, flat[positions], per_chunk)
        d.attrs["not_ours"] = 1  # other attributes are not shown
    return path, positions, flat[positions], per_chunk


def test_attributes_in_text(with_attributes):
    path, positions, values, per_chunk = with_attributes
    out = lib.cli("inspect", path, "/api").stdout
    block = out[out.index("attributes (h5fz_*"):]
    rows = dict(re.findall(r"^    (\S+) +(.*)$", block, re.M))
    assert rows["h5fz_version"] == "0.1.0"
    assert rows["h5fz_spec"] == "abs=0.001 quant delta zigzag bitshuffle rze"
    assert rows["h5fz_mode"] == "abs"
    assert rows["h5fz_bound"] == "0.001"
    assert rows["h5fz_kernel_class"] == "cpu"
    assert rows["h5fz_plan_digest"] == '""'
    with h5py.File(path, "r") as f:
        stored = f["api"].id.get_storage_size()
        ratio = f["api"].attrs["h5fz_ratio"]
    assert float(rows["h5fz_ratio"]) == pytest.approx(ratio)
    assert rows["h5fz_stored_bytes"] == "%d (= the stored chunks)" % stored
    assert rows["h5fz_chunk_abs_bound"].startswith("2 chunks, min 0.001, max 0.001")
    assert per_chunk == [4, 3]
    assert rows["h5fz_chunk_outliers"] == "2 chunks, total 7, max 4 (chunk 0)"
    assert rows["h5fz_outlier_positions"].startswith("7 outliers")
    assert rows["h5fz_outlier_values"].startswith("7 values (float32)")
    # The first five pairs, then "...".
    assert rows["outliers"] == ("7, first 5 (index -> value): 5 -> nan, 17 -> inf, "
                                "300 -> -inf, 1363 -> 1e+30, 2600 -> -2.5e+31, ...")
    assert "not_ours" not in out
    # The table's order.
    names = re.findall(r"^    (h5fz_\w+)", block, re.M)
    assert names[:3] == ["h5fz_version", "h5fz_spec", "h5fz_mode"]
    assert names[-2:] == ["h5fz_outlier_positions", "h5fz_outlier_values"]
    # --summary keeps them.
    assert "h5fz_chunk_outliers" in lib.cli("inspect", path, "/api", "--summary").stdout


def test_attributes_in_json(with_attributes):
    path, positions, values, per_chunk = with_attributes
    (d,) = _inspect_json(path, "/api")
    a = d["attributes"]
    assert set(a) == {"h5fz_version", "h5fz_spec", "h5fz_mode", "h5fz_bound",
                      "h5fz_kernel_class", "h5fz_plan_digest", "h5fz_ratio",
                      "h5fz_stored_bytes", "h5fz_chunk_abs_bound", "h5fz_chunk_outliers",
                      "h5fz_outlier_positions", "h5fz_outlier_values"}
    assert a["h5fz_spec"] == "abs=0.001 quant delta zigzag bitshuffle rze"
    assert a["h5fz_bound"] == 1e-3 and a["h5fz_plan_digest"] == ""
    assert a["h5fz_stored_bytes"] == d["storage_bytes"]
    assert a["h5fz_chunk_abs_bound"] == {"dtype": "float64", "length": 2, "min": 1e-3,
                                         "max": 1e-3, "max_index": 0}
    co = a["h5fz_chunk_outliers"]
    assert co["length"] == 2 and co["total"] == 7 and co["max"] == max(per_chunk)
    assert co["max_index"] == per_chunk.index(max(per_chunk))
    assert a["h5fz_outlier_positions"] == {"dtype": "uint64", "length": 7,
                                           "first": positions[:5]}
    v = a["h5fz_outlier_values"]
    assert v["dtype"] == "float32" and v["length"] == 7
    assert [e["index"] for e in v["first"]] == positions[:5]
    assert [e["text"] for e in v["first"]] == ["nan", "inf", "-inf", "1e+30", "-2.5e+31"]
    # JSON has no NaN/Inf: null there, the text says which.
    assert [e["value"] for e in v["first"][:3]] == [None, None, None]
    assert v["first"][3]["value"] == pytest.approx(1e30, rel=1e-7)
    assert np.float32(v["first"][4]["value"]) == values[4]
    assert d["attributes_match_chunks"] is True
    # The headers agree: 7 outliers in the chunks.
    assert d["totals"]["outliers"] == 7


def test_fixed_length_strings_float64_and_one_chunk(tmp_path):
    """C writers often use fixed-length strings; a one-chunk dataset has
    one-element arrays, still summarised as arrays; float64 values print
    with their full precision."""
    data = np.cos(np.arange(3 * 50) / 7.0).reshape(3, 50)
    data[1, 2] = 1.0000000000000002e300
    data[2, 49] = 7e299
    path = tmp_path / "f64.h5"
    with h5py.File(path, "w") as f:
        d = _write(f, "x", data, "abs=1e-3", chunks=(3, 50))
        _api_attributes(d, [52, 149], data.reshape(-1)[[52, 149]], [2], fixed_strings=True)
        assert f["x"].attrs.get_id("h5fz_mode").get_type().is_variable_str() is False
    out = lib.cli("inspect", path).stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    assert rows["h5fz_mode"] == "abs" and rows["h5fz_plan_digest"] == '""'
    assert rows["h5fz_chunk_outliers"] == "1 chunks, total 2, max 2 (chunk 0)"
    assert rows["outliers"] == "2, first 2 (index -> value): 52 -> 1.0000000000000002e+300, " \
                               "149 -> 7e+299"
    (d,) = _inspect_json(path)
    assert d["attributes"]["h5fz_mode"] == "abs"
    assert d["attributes"]["h5fz_chunk_abs_bound"]["length"] == 1
    first = d["attributes"]["h5fz_outlier_values"]["first"]
    assert first[0]["value"] == 1.0000000000000002e300


def test_stale_attributes_and_omitted_outliers(tmp_path):
    """Attributes that no longer match the chunks (the dataset rewritten by
    plain H5Dwrite) are called stale; h5fz_outliers_omitted is explained."""
    path = tmp_path / "stale.h5"
    with h5py.File(path, "w") as f:
        d = _write(f, "s", _smooth(), "abs=1e-3")
        d.attrs["h5fz_stored_bytes"] = np.uint64(12345)
        d.attrs["h5fz_chunk_outliers"] = np.array([3, 0], dtype=np.uint32)
        d.attrs["h5fz_outliers_omitted"] = np.uint64(2000000)
    out = lib.cli("inspect", path).stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    assert rows["h5fz_stored_bytes"].startswith("12345 (the stored chunks now hold")
    assert "stale" in rows["h5fz_stored_bytes"] and "stale" in rows["h5fz_chunk_outliers"]
    # Worded neutrally: the count cap or the attribute storage may be why.
    assert rows["h5fz_outliers_omitted"].startswith(
        "2000000 outliers (the outlier lists were not stored as attributes: more than 2^20 "
        "outliers, or the dataset's attribute storage could not hold them)"), rows
    assert "too many" not in out
    # The chunks hold no outlier: stale too.
    assert rows["h5fz_outliers_omitted"].endswith(
        "(the stored chunks now hold 0 outliers: the attributes are stale)"), rows
    (d,) = _inspect_json(path)
    assert d["attributes_match_chunks"] is False
    assert d["attributes"]["h5fz_outliers_omitted"] == 2000000
    assert set(d["stale_attributes"]) == {"h5fz_stored_bytes", "h5fz_chunk_outliers",
                                          "h5fz_outliers_omitted"}


def test_omitted_outliers_that_match_are_not_stale(tmp_path):
    """h5fz_outliers_omitted equal to the chunks' outliers: the same
    neutral wording, nothing stale (a dataset whose attribute storage could
    not hold the lists, not one with more than 2^20 outliers)."""
    data = _smooth()
    data.reshape(-1)[[3, 700, 4000]] = np.nan
    path = tmp_path / "omitted.h5"
    with h5py.File(path, "w") as f:
        d = _write(f, "o", data, "abs=1e-3")
        d.attrs["h5fz_ratio"] = np.float64(d.size * 4 / d.id.get_storage_size())
        d.attrs["h5fz_stored_bytes"] = np.uint64(d.id.get_storage_size())
        d.attrs["h5fz_chunk_outliers"] = np.array([2, 1], dtype=np.uint32)
        d.attrs["h5fz_outliers_omitted"] = np.uint64(3)
    out = lib.cli("inspect", path).stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    assert rows["h5fz_outliers_omitted"] == (
        "3 outliers (the outlier lists were not stored as attributes: more than 2^20 outliers, "
        "or the dataset's attribute storage could not hold them)"), rows
    assert "stale" not in out
    (d,) = _inspect_json(path)
    assert d["attributes_match_chunks"] is True and "stale_attributes" not in d


def test_ratio_and_outlier_lists_go_stale_with_the_rest(with_attributes):
    """The dataset rewritten by plain H5Dwrite after the API wrote its
    attributes: h5fz_ratio and the outlier lists are called stale too,
    with the chunks' figure where it can be checked."""
    path, positions, values, per_chunk = with_attributes
    # Fewer outliers than the lists hold (none): caught directly.
    with h5py.File(path, "a") as f:
        f["api"][...] = _smooth() * 2
        stored = f["api"].id.get_storage_size()
        ratio = f["api"].size * 4 / stored
    out = lib.cli("inspect", path, "/api").stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    assert re.fullmatch(r"[0-9.e+-]+ \(the stored chunks now give ([0-9.e+-]+): the attributes "
                        r"are stale\)", rows["h5fz_ratio"]), rows["h5fz_ratio"]
    now = float(re.search(r"now give ([0-9.e+-]+)", rows["h5fz_ratio"]).group(1))
    assert now == pytest.approx(ratio, rel=1e-12)
    assert rows["h5fz_outlier_positions"] == ("7 outliers (uint64) (the stored chunks now hold "
                                              "0 outliers: the attributes are stale)")
    assert rows["h5fz_outlier_values"].startswith("7 values (float32) (the stored chunks now "
                                                  "hold 0 outliers")
    (d,) = _inspect_json(path, "/api")
    assert d["attributes_match_chunks"] is False
    assert set(d["stale_attributes"]) == {"h5fz_ratio", "h5fz_stored_bytes",
                                          "h5fz_chunk_outliers", "h5fz_outlier_positions",
                                          "h5fz_outlier_values"}
    # More outliers than the lists hold: the lists cannot be checked one by
    # one, but they belong to a stale set.
    data = _smooth()
    data.reshape(-1)[np.arange(0, 5000, 500)] = np.inf
    with h5py.File(path, "a") as f:
        f["api"][...] = data
    out = lib.cli("inspect", path, "/api").stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    for name in ["h5fz_outlier_positions", "h5fz_outlier_values"]:
        assert rows[name].endswith("(stale: the attributes no longer match the stored chunks)"), \
            rows[name]
    assert "the attributes are stale" in rows["h5fz_ratio"]


def test_no_attributes(mixed_raw):
    path, _ = mixed_raw
    out = lib.cli("inspect", path, "/smooth").stdout
    assert "attributes" not in out
    (d,) = _inspect_json(path, "/smooth")
    assert d["attributes"] == {} and "attributes_match_chunks" not in d
    # Still valid JSON with every dataset of the file.
    assert len(_inspect_json(path)) == 2


def test_json_is_strict(with_attributes):
    """No NaN/Infinity tokens: strict parsers must read it."""
    path = with_attributes[0]
    text = lib.cli("inspect", path, "--json").stdout
    json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert not math.isnan(json.loads(text)["datasets"][0]["attributes"]["h5fz_bound"])


def test_dense_attribute_storage_and_long_lists(tmp_path):
    """h5fz_dataset_create makes datasets with dense attribute storage so
    the outlier lists may pass 64 KiB; inspect reads them there too."""
    data = _smooth((4, 128, 200))
    n = 50000
    positions = np.arange(n, dtype=np.uint64) * 2 + 1
    data.reshape(-1)[positions.astype(np.int64)] = np.inf
    cd, _ = lib.cd_values("abs=1e-3")
    path = tmp_path / "dense.h5"
    # Dense attribute storage needs the 1.8 object headers: with the default
    # (earliest) format an attribute over 64 KiB cannot be created at all.
    with h5py.File(path, "w", libver=("v108", "latest")) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((2, 128, 200))
        dcpl.set_filter(lib.FILTER_ID, h5py.h5z.FLAG_MANDATORY, tuple(cd))
        dcpl.set_attr_phase_change(0, 0)
        space = h5py.h5s.create_simple(data.shape)
        dsid = h5py.h5d.create(f.id, b"dense", h5py.h5t.NATIVE_FLOAT, space, dcpl=dcpl)
        d = h5py.Dataset(dsid)
        d[...] = data
        per_chunk = [int((positions < 51200).sum()), int((positions >= 51200).sum())]
        _api_attributes(d, positions, data.reshape(-1)[positions.astype(np.int64)], per_chunk)
        assert d.id.get_create_plist().get_attr_phase_change() == (0, 0)
    out = lib.cli("inspect", path).stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    assert rows["outliers"] == "50000, first 5 (index -> value): 1 -> inf, 3 -> inf, 5 -> inf, " \
                               "7 -> inf, 9 -> inf, ..."
    assert rows["h5fz_chunk_outliers"] == "2 chunks, total 50000, max 25600 (chunk 0)"
    (j,) = _inspect_json(path)
    assert j["attributes"]["h5fz_outlier_positions"]["length"] == n
    assert j["attributes_match_chunks"] is True and j["totals"]["outliers"] == n


HEAT3D = pathlib.Path(os.environ["H5FZ_BUILD_DIR"]) / "bin" / "heat3d"


@pytest.mark.skipif(not HEAT3D.is_file(), reason="heat3d is built only with the dataset API")
def test_attributes_written_by_the_dataset_api(tmp_path):
    """The real writer: h5_examples/heat3d.c saves each step through the
    filter (/filter/T_NNNN, no attributes) and through h5fz_dataset_write
    (/api/T_NNNN, with them). inspect shows the API's attributes, agreeing
    with the chunks, which are the filter's byte for byte."""
    out = tmp_path / "heat.h5"
    p = subprocess.run([str(HEAT3D), str(out), "abs=1e-3"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    api, plain = _inspect_json(out, "/api/T_0025")[0], _inspect_json(out, "/filter/T_0025")[0]
    assert plain["attributes"] == {} and api["totals"] == plain["totals"]
    a = api["attributes"]
    assert a["h5fz_mode"] == "abs" and a["h5fz_bound"] == 1e-3
    assert a["h5fz_spec"].startswith("abs=0.001 quant delta zigzag bitshuffle rze")
    assert a["h5fz_kernel_class"] and a["h5fz_version"]
    assert a["h5fz_stored_bytes"] == api["storage_bytes"]
    assert a["h5fz_ratio"] == pytest.approx(api["ratio"], rel=1e-5)
    n_chunks = api["totals"]["chunks"]
    assert a["h5fz_chunk_abs_bound"]["length"] == n_chunks == 24
    assert a["h5fz_chunk_outliers"]["total"] == api["totals"]["outliers"]
    assert a["h5fz_outlier_positions"]["length"] == a["h5fz_outlier_values"]["length"]
    assert api["attributes_match_chunks"] is True
    text = lib.cli("inspect", out, "/api/T_0025", "--summary").stdout
    assert "(= the stored chunks)" in text and "stale" not in text, text


# ---- exit status ------------------------------------------------------------

def test_unreadable_chunks_exit_nonzero(tmp_path):
    """A chunk whose container is damaged is reported and counted as
    unreadable, and inspect exits 1 (text, JSON, --summary); chunks stored
    raw or unfiltered are not errors (exit 0); a dataset that cannot be
    opened is a usage error (exit 2), which wins."""
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        _write(f, "bad", _smooth(), "abs=1e-3")
        _write(f, "good", _smooth(), "abs=1e-3")
        where = f["bad"].id.get_chunk_info(1).byte_offset
    with open(path, "r+b") as fh:
        fh.seek(where)
        assert fh.read(4) == b"H5FZ"
        fh.seek(where)
        fh.write(b"XXXX")  # no magic: not an h5fz container any more
    p = lib.cli("inspect", path, "/bad", check=False)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "unreadable 1" in p.stdout and re.search(r"^ +1 \[2,0,0\] +stored \d+ .*magic", p.stdout,
                                                    re.M), p.stdout
    assert p.stderr.startswith("h5fz inspect: /bad: 1 of 2 chunks unreadable"), p.stderr
    p = lib.cli("inspect", path, "/bad", "--json", check=False)
    assert p.returncode == 1
    (d,) = json.loads(p.stdout)["datasets"]
    assert d["totals"]["unreadable_chunks"] == 1 and "error" in d["chunks"][1]
    # the chunk ratio counts the readable chunks only, on both sides of the
    # division: the damaged chunk's stored bytes without its padded bytes
    # would make it look worse than any chunk is
    good = d["chunks"][0]
    assert d["totals"]["chunk_ratio"] == pytest.approx(good["input_bytes"] / good["stored_bytes"], rel=1e-5)
    p = lib.cli("inspect", path, "/bad", check=False)
    assert "padded chunk bytes %d / stored bytes %d of the readable chunks" % (
        good["input_bytes"], good["stored_bytes"]) in p.stdout, p.stdout
    p = lib.cli("inspect", path, "--summary", check=False)  # both datasets
    assert p.returncode == 1 and "unreadable 0" in p.stdout and "unreadable 1" in p.stdout
    assert "without --summary" in p.stderr
    assert lib.cli("inspect", path, "/good").returncode == 0
    assert lib.cli("inspect", path, "/nope", check=False).returncode == 2


def test_raw_and_unfiltered_chunks_are_not_errors(mixed_raw, tmp_path):
    path, _ = mixed_raw
    assert lib.cli("inspect", path, "/mixed", check=False).returncode == 0
    # A dataset whose chunks the filter skipped (as HDF5 stores them when an
    # optional filter fails: raw bytes, filter mask 1) and one without h5fz
    # at all.
    other = tmp_path / "other.h5"
    cd, _ = lib.cd_values("abs=1e-3")
    with h5py.File(other, "w") as f:
        d = f.create_dataset("skipped", shape=(4, 32, 40), dtype="f4", chunks=CHUNK,
                             compression=lib.FILTER_ID, compression_opts=tuple(cd))
        for z in (0, 2):
            d.id.write_direct_chunk((z, 0, 0), _smooth()[z:z + 2].tobytes(), 1)
        f.create_dataset("plain", data=_smooth(), chunks=CHUNK)
    p = lib.cli("inspect", other, check=False)
    assert p.returncode == 0 and "unfiltered chunks 2" in p.stdout, p.stdout + p.stderr
    assert "not compressed by h5fz" in p.stdout


def test_filters_after_h5fz_are_not_errors(tmp_path):
    """h5fz must be first; filters may follow it (docs/filter.md suggests
    Fletcher32). Their bytes wrap the container: Fletcher32's checksum is
    cut off and the container shown; a coder such as deflate is not decoded
    and said so. Neither is an unreadable chunk (exit 0)."""
    cd, _ = lib.cd_values("abs=1e-3")
    data = _smooth()
    path = tmp_path / "after.h5"
    with h5py.File(path, "w") as f:
        for name, add in [("fletcher", lambda p: p.set_fletcher32()),
                          ("deflate", lambda p: p.set_deflate(4))]:
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk(CHUNK)
            dcpl.set_filter(lib.FILTER_ID, h5py.h5z.FLAG_MANDATORY, tuple(cd))
            add(dcpl)
            dsid = h5py.h5d.create(f.id, name.encode(), h5py.h5t.NATIVE_FLOAT,
                                   h5py.h5s.create_simple(data.shape), dcpl=dcpl)
            h5py.Dataset(dsid)[...] = data
    p = lib.cli("inspect", path, "/fletcher")
    assert p.stdout.count("chain quant delta zigzag bitshuffle rze") == 2, p.stdout
    assert "unreadable 0" in p.stdout
    p = lib.cli("inspect", path, "/deflate")
    assert p.stdout.count("coded by filter 'deflate' after h5fz") == 2, p.stdout
    assert "unreadable 0, coded by a filter after h5fz (not decoded) 2" in p.stdout
    (d,) = _inspect_json(path, "/deflate")
    assert d["totals"]["later_filter_chunks"] == 2 and d["totals"]["unreadable_chunks"] == 0


# ---- cd_values --------------------------------------------------------------

_FORTY_WORDS = r'''
import sys, h5py
words = tuple(range(100, 140))
with h5py.File(sys.argv[1], "w") as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((4,))
    dcpl.set_filter(%d, h5py.h5z.FLAG_OPTIONAL, words)
    h5py.h5d.create(f.id, b"forty", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple((8,)), dcpl=dcpl)
'''


def test_long_cd_values_are_all_shown(tmp_path):
    """A pipeline entry with 40 words (written where the plugin was not
    loadable, so nothing checked them) is shown with its real count and
    every word, not cut at the 31 a valid one holds."""
    path = tmp_path / "forty.h5"
    empty = tmp_path / "no_plugins"
    empty.mkdir()
    env = dict(os.environ, HDF5_PLUGIN_PATH=str(empty))
    subprocess.run([sys.executable, "-c", _FORTY_WORDS % lib.FILTER_ID, str(path)],
                   check=True, env=env)
    words = list(range(100, 140))
    out = lib.cli("inspect", path, "/forty").stdout
    m = re.search(r"^  cd_values \((\d+)\):(.*)$", out, re.M)
    assert m and int(m.group(1)) == 40, out
    assert [int(w) for w in m.group(2).split()] == words, out
    assert "more than the 31 an h5fz pipeline holds" in out, out
    assert "spec: (cd_values not understood)" in out
    (d,) = _inspect_json(path, "/forty")
    assert d["cd_values"] == words and "cd_values_truncated" not in d and d["spec"] == ""


def test_chunk_lists_omitted(tmp_path):
    """h5fz_chunk_lists_omitted (the per-chunk arrays did not fit the
    attribute storage) is explained and checked against the chunk count."""
    path = tmp_path / "chunk_lists.h5"
    with h5py.File(path, "w") as f:
        d = _write(f, "ok", _smooth(), "abs=1e-3")
        d.attrs["h5fz_stored_bytes"] = np.uint64(d.id.get_storage_size())
        d.attrs["h5fz_chunk_lists_omitted"] = np.uint64(2)
        d = _write(f, "stale", _smooth(), "abs=1e-3")
        d.attrs["h5fz_chunk_lists_omitted"] = np.uint64(5)
    out = lib.cli("inspect", path, "/ok").stdout
    rows = dict(re.findall(r"^    (\S+) +(.*)$", out, re.M))
    assert rows["h5fz_chunk_lists_omitted"] == (
        "2 chunks (the per-chunk arrays h5fz_chunk_abs_bound and h5fz_chunk_outliers were not "
        "stored as attributes: the dataset's attribute storage could not hold them)"), rows
    names = re.findall(r"^    (h5fz_\w+)", out, re.M)
    assert names == ["h5fz_stored_bytes", "h5fz_chunk_lists_omitted"], names  # the table's order
    (d,) = _inspect_json(path, "/ok")
    assert d["attributes_match_chunks"] is True
    out = lib.cli("inspect", path, "/stale").stdout
    assert "(the dataset now stores 2 chunks: the attributes are stale)" in out, out
    (d,) = _inspect_json(path, "/stale")
    assert d["attributes_match_chunks"] is False
    assert d["stale_attributes"] == ["h5fz_chunk_lists_omitted"]


def test_container_of_another_type_or_size_is_unreadable(tmp_path):
    """A valid container that is not a chunk of this dataset (float64 in a
    float32 dataset with the same byte count) is refused by every reader, so
    inspect counts it as unreadable and exits 1."""
    path = tmp_path / "foreign.h5"
    with h5py.File(path, "w") as f:
        src = _write(f, "f64", np.ones((5, 100)), "abs=1e-3", chunks=(5, 100))
        mask, container = src.id.read_direct_chunk((0, 0))
        dst = _write(f, "x", np.ones((10, 100), np.float32), "abs=1e-3", chunks=(10, 100))
        dst.id.write_direct_chunk((0, 0), container, mask)
    run = subprocess.run([lib.BIN, "inspect", str(path), "/x"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "4000 bytes of float64, the dataset's chunks are 4000 bytes of float32" in run.stdout
    assert "unreadable 1" in run.stdout


def test_container_of_another_shape_is_refused(tmp_path):
    """A valid container of the dataset's type and size but another chunk
    shape (20 x 10 in a dataset of 10 x 20 chunks) would decode in another
    order: the filter refuses it, and inspect counts it as unreadable."""
    path = tmp_path / "shape.h5"
    rng = np.random.default_rng(5)
    tall = rng.random((20, 10), np.float32)
    with h5py.File(path, "w") as f:
        src = _write(f, "tall", tall, "abs=1e-3", chunks=(20, 10))
        mask, container = src.id.read_direct_chunk((0, 0))
        dst = _write(f, "wide", rng.random((10, 20), np.float32), "abs=1e-3", chunks=(10, 20))
        dst.id.write_direct_chunk((0, 0), container, mask)
    with h5py.File(path, "r") as f:
        assert np.abs(f["tall"][...].astype(np.float64) - tall).max() <= 1e-3  # the source still reads
        with pytest.raises(OSError):
            f["wide"][...]
    run = subprocess.run([lib.BIN, "inspect", str(path), "/wide"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the chunk is 20 x 10 elements, the dataset's chunks are 10 x 20: its values would come back in another order: unreadable here" in run.stdout, run.stdout
    assert "unreadable 1" in run.stdout


@pytest.mark.parametrize("spec", ["abs=1e-3", "lossless", "abs=1e-30 raw"])
@pytest.mark.parametrize("src,dst", [
    ((2, 10, 20), (4, 5, 20)),          # same fastest dim (lorenzo's row), other slow dims
    ((5, 100), (500,)),                 # another rank, same element count
    ((500,), (5, 100)),
    ((1, 200), (100, 2)),
    ((2, 3, 4, 5, 6), (2, 3, 5, 4, 6)),  # rank 5: the folded dims 6x4x5x6 / 6x5x4x6 differ
])
def test_forged_chunk_of_another_shape(tmp_path, spec, src, dst):
    """A valid container of the dataset's type and byte size, written with
    write_direct_chunk into a dataset whose chunk has another shape: coded,
    lossless or stored raw, the filter refuses it (its values would come
    back in another element order) and inspect counts it unreadable naming
    both shapes. (Rank > 4 shapes are compared as set_local folds them:
    chunks whose leading dims differ but multiply to the same count look
    alike, docs/filter.md.)"""
    path = tmp_path / "forged.h5"
    x = np.random.default_rng(11).random(src).astype(np.float32)
    with h5py.File(path, "w") as f:
        mask, container = _write(f, "src", x, spec, chunks=src).id.read_direct_chunk((0,) * len(src))
        dst_d = f.create_dataset("dst", shape=dst, dtype="f4", chunks=dst, compression=lib.FILTER_ID,
                                 compression_opts=tuple(lib.cd_values(spec)[0]))
        dst_d.id.write_direct_chunk((0,) * len(dst), container, mask)
    with h5py.File(path, "r") as f:
        assert f["src"].shape == src
        with pytest.raises(OSError):
            f["dst"][...]
    run = subprocess.run([lib.BIN, "inspect", str(path), "/dst"], capture_output=True, text=True)
    assert run.returncode == 1 and "unreadable 1" in run.stdout, run.stdout + run.stderr
    assert "its values would come back in another order: unreadable here" in run.stdout, run.stdout


@pytest.mark.parametrize("spec", ["abs=1e-3", "lossless", "abs=1e-30 raw"])
@pytest.mark.parametrize("src,dst", [
    ((64, 64), (1, 64, 64)),            # h5py's own direct-chunk test writes this
    ((1, 64, 64), (64, 64)),
    ((1, 200), (200, 1)),
    ((5, 1, 100), (5, 100, 1)),
])
def test_chunk_whose_shape_differs_by_size_1_dims_reads_back(tmp_path, spec, src, dst):
    """A container whose shape differs from the dataset's chunk only in
    dims of extent 1 holds its values in the dataset's element order (a
    size-1 dim adds no step): written with write_direct_chunk, it reads
    back as written (within the bound, exact for lossless and raw), and
    inspect counts it readable."""
    path = tmp_path / "unit_dims.h5"
    x = np.random.default_rng(12).random(src).astype(np.float32)
    with h5py.File(path, "w") as f:
        mask, container = _write(f, "src", x, spec, chunks=src).id.read_direct_chunk((0,) * len(src))
        dst_d = f.create_dataset("dst", shape=dst, dtype="f4", chunks=dst, compression=lib.FILTER_ID,
                                 compression_opts=tuple(lib.cd_values(spec)[0]))
        dst_d.id.write_direct_chunk((0,) * len(dst), container, mask)
    with h5py.File(path, "r") as f:
        back = f["dst"][...]
    err = np.abs(back.astype(np.float64) - x.reshape(dst).astype(np.float64)).max()
    assert err <= (1e-3 if spec == "abs=1e-3" else 0.0), (spec, src, dst, err)
    run = subprocess.run([lib.BIN, "inspect", str(path), "/dst"], capture_output=True, text=True)
    assert run.returncode == 0 and "unreadable 0" in run.stdout, run.stdout + run.stderr
    assert "another order" not in run.stdout, run.stdout


def test_container_of_a_looser_bound_is_refused(tmp_path):
    """A valid chunk of the dataset's type, size and shape, but coded for a
    looser bound (abs=0.5 in an abs=1e-3 dataset), would break the bound the
    dataset promises: the filter refuses it, inspect counts it unreadable."""
    path = tmp_path / "loose.h5"
    rng = np.random.default_rng(6)
    with h5py.File(path, "w") as f:
        src = _write(f, "loose", rng.random((10, 20), np.float32), "abs=0.5", chunks=(10, 20))
        mask, container = src.id.read_direct_chunk((0, 0))
        dst = _write(f, "tight", rng.random((10, 20), np.float32), "abs=1e-3", chunks=(10, 20))
        dst.id.write_direct_chunk((0, 0), container, mask)
    with h5py.File(path, "r") as f:
        f["loose"][...]  # its own dataset reads it
        with pytest.raises(OSError):
            f["tight"][...]
    run = subprocess.run([lib.BIN, "inspect", str(path), "/tight"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the chunk was coded ABS with bound 0.5, looser than or unlike the dataset's ABS 0.001" in run.stdout, \
        run.stdout
    assert "unreadable 1" in run.stdout
