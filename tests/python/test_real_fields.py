"""Every real field, three ABS bounds, the way a user compresses a file:
raw -> HDF5 (h5fz from-raw) -> h5repack -f UD=... through the plugin ->
read back with h5py and h5dump, and check with h5fz verify.

The bound is REL x (max - min of the field's finite, non-fill values),
passed to the filter as an ABS bound.
"""
import json

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

REL_BOUNDS = (1e-2, 1e-4, 1e-6)

# Smooth fields must compress at every bound; the others report their ratio.
SMOOTH = ("glosea4_surface_temperature", "eraint_geopotential", "mitgcm_fizhi_theta_cs32",
          "mitgcm_deep_convection_theta", "um_sea_ice_northward_velocity")


def _cases():
    shared = lib.shared_fields()
    cases = [pytest.param(lib.embedded_field(), rel, id="embedded-%s-%g" % (
        lib.embedded_field().stem, rel)) for rel in REL_BOUNDS]
    if not shared:
        cases.append(pytest.param(None, None, id="shared-data", marks=pytest.mark.skip(
            reason="no shared data folder at %s (set H5FZ_DATA_DIR): only the embedded "
                   "field was tested" % lib.DATA_DIR)))
    for f in shared:
        for rel in REL_BOUNDS:
            cases.append(pytest.param(f, rel, id="%s-%g" % (f.stem, rel)))
    return cases


def test_shared_data_is_complete():
    """The manifest promises nine fields; a partial copy would silently
    shrink the suite."""
    fields = lib.shared_fields()
    if not fields:
        pytest.skip("no shared data folder at %s" % lib.DATA_DIR)
    assert len(fields) == 9, [f.path.name for f in fields]
    assert {f.dtype for f in fields} == {"float32", "float64"}


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """One uncompressed HDF5 file per field, shared by its three bounds."""
    cache = {}

    def get(field):
        if field.path not in cache:
            data = field.load()
            itemsize = data.dtype.itemsize
            target = min(2 << 20, max(4096, data.nbytes // 3))
            chunks = lib.pick_chunks(field.shape, itemsize, target)
            path = tmp_path_factory.mktemp("orig") / (field.stem + ".h5")
            lib.to_hdf5(field, path, chunks)
            cache[field.path] = (path, data, chunks)
        return cache[field.path]
    return get


@pytest.mark.parametrize("field,rel", _cases())
def test_field_roundtrip(field, rel, originals, tmp_path):
    orig_path, data, chunks = originals(field)
    assert any(n % c for n, c in zip(field.shape, chunks)) or all(
        n < 3 for n in field.shape), "test set-up: no edge chunk in %s" % (chunks,)
    bound = rel * lib.value_range(field, data)
    cd, ud = lib.cd_values(lib.spec_abs(bound))
    comp_path = tmp_path / "comp.h5"
    lib.h5repack(orig_path, comp_path, ud)

    with h5py.File(comp_path, "r") as f:
        dset = f["data"]
        assert lib.FILTER_ID in lib.filter_ids(dset), "h5repack did not apply the filter"
        dec = dset[...]
        stored = dset.id.get_storage_size()
    assert dec.dtype == data.dtype
    max_err = lib.check_bound(data, dec, bound, "%s rel %g" % (field.stem, rel))
    ratio = data.nbytes / stored

    # h5dump decodes through the same plugin from the C tools' libhdf5.
    start = ",".join(["0"] * len(field.shape))
    count = ",".join(["1"] * (len(field.shape) - 1) + [str(min(4, field.shape[-1]))])
    p = lib.run_tool("h5dump", "-d", "/data", "-s", start, "-c", count, comp_path)
    assert p.returncode == 0 and "DATA" in p.stdout, p.stdout + p.stderr
    p = lib.run_tool("h5dump", "-pH", "-d", "/data", comp_path)
    assert p.returncode == 0, p.stderr
    assert "USER_DEFINED_FILTER" in p.stdout and str(lib.FILTER_ID) in p.stdout, p.stdout

    # The CLI's verdict agrees with numpy's.
    v = lib.cli("verify", orig_path, comp_path, "--abs", repr(bound), "--require-filter",
                "--json", check=False)
    assert v.returncode == 0, v.stdout + v.stderr
    report = json.loads(v.stdout)["datasets"][0]
    assert report["ok"] and report["filter_found"]
    assert report["max_abs_error"] == pytest.approx(max_err, rel=1e-12, abs=0)
    assert report["ratio"] == pytest.approx(ratio, rel=1e-9)

    lib.OBSERVED.append(dict(field=field.stem, dtype=field.dtype, rel_bound=rel, bound=bound,
                             chunks=list(chunks), ratio=ratio, max_err=max_err,
                             err_over_bound=max_err / bound if bound else 0.0))
    print("%s rel %g: ratio %.3f, max error %.6g (bound %.6g)" % (
        field.stem, rel, ratio, max_err, bound))
    if field.stem.startswith(SMOOTH):
        assert ratio > 1.0, "%s at rel %g did not compress (ratio %.3f)" % (
            field.stem, rel, ratio)


def test_special_values_survive_real_field(tmp_path):
    """NaN, +-Inf, -0.0, a subnormal and a huge value planted in a real field
    come back exactly, the rest within the bound."""
    field = lib.embedded_field()
    data = field.load().copy()
    bound = 1e-4 * lib.value_range(field, data)
    flat = data.reshape(-1)
    plants = {7: np.nan, 1000: np.inf, 1001: -np.inf, 5000: -0.0,
              7000: np.float32(1e-40), 9000: np.float32(-3e38), 123456: -1073741824.0}
    for i, v in plants.items():
        flat[i] = v
    cd, _ = lib.cd_values(lib.spec_abs(bound))
    path = tmp_path / "planted.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=data, chunks=(7, 100, 100), compression=lib.FILTER_ID,
                         compression_opts=tuple(cd))
    with h5py.File(path, "r") as f:
        dec = f["data"][...]
    lib.check_bound(data, dec, bound, "planted")
    dflat = dec.reshape(-1)
    for i, v in plants.items():
        if np.isnan(v):
            assert np.isnan(dflat[i])
        elif not np.isfinite(v) or v == 0:
            assert dflat[i].tobytes() == np.float32(v).tobytes(), (i, v, dflat[i])
