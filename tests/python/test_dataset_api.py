"""The dataset API on >= 64 MiB of real data, read back by h5py and h5dump.

tests/api/test_dataset_api (C) writes um_sea_ice twice along time (240 x 215
x 360 float32, 70 MiB) through h5fz_dataset_write and through H5Dwrite with
the filter, and checks in C that the chunks are byte-identical and that
h5fz_dataset_read and H5Dread meet the bound. Here the same file is read by
h5py (Debian's, through the plugin) and by h5dump, element by element against
the original array.
"""
import os
import pathlib
import subprocess

import h5py
import numpy as np
import pytest

from h5fz_testlib import DATA_DIR

BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
PROGRAM = BUILD / "tests" / "api" / "test_dataset_api"
FIELD = DATA_DIR / "um_sea_ice_northward_velocity_float32_120x215x360.f32"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    if not FIELD.is_file():
        pytest.skip(f"{FIELD} not found (../shared/data is absent on a fresh clone; CI has it)")
    out = tmp_path_factory.mktemp("api") / "api_64mib.h5"
    run = subprocess.run([str(PROGRAM), "big", str(DATA_DIR), str(out)], capture_output=True, text=True,
                         timeout=900)
    print(run.stdout, run.stderr)
    assert run.returncode == 0, run.stdout + run.stderr
    one = np.fromfile(FIELD, "<f4").reshape(120, 215, 360)
    data = np.concatenate([one, one])
    assert data.nbytes >= 64 << 20
    finite = data[np.isfinite(data)]
    bound = 1e-4 * float(finite.max() - finite.min())
    return out, data, bound


@pytest.mark.parametrize("name", ["seaice_x2_api", "seaice_x2_filter"])
def test_h5py_reads_within_bound(written, name):
    out, data, bound = written
    with h5py.File(out, "r") as f:
        back = f[name][...]
        if name.endswith("_api"):
            attrs = f[name].attrs
            assert attrs["h5fz_mode"] in (b"abs", "abs")
            assert abs(float(attrs["h5fz_ratio"]) - data.nbytes / f[name].id.get_storage_size()) < 1e-6
            # the plan that ran: 16 hex digits on the GPU, "cpu" on the CPU executor, never empty
            kernel, digest = (str(attrs[k], "ascii") if isinstance(attrs[k], bytes) else attrs[k]
                              for k in ("h5fz_kernel_class", "h5fz_plan_digest"))
            if kernel == "cpu":
                assert digest == "cpu", digest
            else:
                assert len(digest) == 16 and int(digest, 16) >= 0, digest
    err = np.abs(back.astype(np.float64) - data.astype(np.float64))
    # the bound is stored as a double from the text "abs=%.9g": compare with that
    assert err.max() <= bound * (1 + 1e-6), f"{name}: max error {err.max()} > {bound}"


@pytest.mark.parametrize("name", ["seaice_x2_api", "seaice_x2_filter"])
def test_h5dump_reads_within_bound(written, name):
    out, data, bound = written
    # a block that crosses chunk edges in every dim (chunks are 16 x 64 x 128)
    start, count = (14, 60, 120), (4, 8, 16)
    raw = out.parent / f"{name}.bin"
    run = subprocess.run(["h5dump", "-d", f"/{name}", "-s", ",".join(map(str, start)), "-c",
                          ",".join(map(str, count)), "-b", "LE", "-o", str(raw), str(out)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    values = np.fromfile(raw, "<f4")
    want = data[start[0]:start[0] + count[0], start[1]:start[1] + count[1], start[2]:start[2] + count[2]].ravel()
    assert values.size == want.size, f"h5dump wrote {values.size} values, want {want.size}"
    err = np.abs(values.astype(np.float64) - want.astype(np.float64))
    assert err.max() <= bound * (1 + 1e-6) + 1e-9
