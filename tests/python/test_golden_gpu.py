"""tests/golden/gpu_written_v1.h5 was written on an NVIDIA H200 by
tests/gpu/write_gpu_h5.c: the embedded MITgcm field through HDF5 and the
h5fz plugin with H5FZ_DEVICE=gpu. Here, without a GPU, it must read back
through the CPU executor within its bound, and its chunks must be the very
bytes the CPU executor writes for the same input and spec (the GPU and CPU
executors are byte-identical)."""
import os
import subprocess

import h5py
import numpy as np

import h5fz_testlib as lib

H5 = lib.REPO / "tests" / "golden" / "gpu_written_v1.h5"
# 1e-4 x the field's range, as write_gpu_h5.c computed it (not read from the file)
BOUND = 7.3158264160156257e-06


def original():
    return np.fromfile(lib.EMBEDDED, "<f4").reshape(50, 100, 100)


def test_gpu_written_file_reads_back_on_cpu_within_bound():
    env_device = os.environ.get("H5FZ_DEVICE")
    with h5py.File(H5, "r") as f:
        ds = f["field"]
        assert ds.attrs["abs_bound"] == BOUND
        y = ds[...]
    x = original()
    err = np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))
    assert err <= BOUND, f"max error {err} > {BOUND} (H5FZ_DEVICE={env_device})"


def test_gpu_written_chunks_equal_cpu_bytes(tmp_path):
    x = original()
    cd, _ = lib.cd_values(lib.spec_abs(BOUND))
    out = tmp_path / "cpu.h5"
    env = dict(os.environ, H5FZ_DEVICE="cpu")
    code = (
        "import h5py, numpy as np, sys\n"
        f"x = np.fromfile({str(lib.EMBEDDED)!r}, '<f4').reshape(50, 100, 100)\n"
        f"with h5py.File({str(out)!r}, 'w') as f:\n"
        f"    f.create_dataset('field', data=x, chunks=(10, 100, 100), compression={lib.FILTER_ID},"
        f" compression_opts=tuple({list(cd)!r}))\n")
    subprocess.run(["/usr/bin/python3", "-c", code], env=env, check=True)
    with h5py.File(H5, "r") as g, h5py.File(out, "r") as c:
        for k in range(5):
            gpu_chunk = g["field"].id.read_direct_chunk((10 * k, 0, 0))[1]
            cpu_chunk = c["field"].id.read_direct_chunk((10 * k, 0, 0))[1]
            assert gpu_chunk == cpu_chunk, f"chunk {k}: GPU {len(gpu_chunk)} bytes vs CPU {len(cpu_chunk)} bytes"
