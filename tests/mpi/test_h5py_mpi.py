"""h5py + mpi4py through the h5fz filter (driver='mpio', dset.collective).

    mpirun -n N python3 tests/mpi/test_h5py_mpi.py   (in an empty folder)

Needs Debian's python3-h5py-mpi and python3-mpi4py (Debian's h5py loads its
MPI build when run under mpirun), HDF5_PLUGIN_PATH and H5FZ_BIN (the h5fz
tool, for the cd_values). Cases: slabs on the chunk grid, slabs off it
(chunks assembled by HDF5 from two ranks, edge chunks), the last rank
writing nothing. Each dataset is read back collectively in another
decomposition, every element checked against the bound; rank 0 writes the
same array serially and compares every stored chunk; the files are listed
in manifest.txt for the serial readers (check_serial.py).

h5py returns early from an empty selection (dset[0:0] = ...) without
calling H5Dwrite, which leaves the other ranks waiting in a collective
write: a rank with nothing to write calls the low-level write with
select_none(), as here (docs/mpi.md).
"""
import json
import os
import subprocess
import sys

import numpy as np
from mpi4py import MPI

import h5py

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
HERE = os.path.dirname(os.path.abspath(__file__))
FIELD = os.path.join(HERE, "..", "data", "mitgcm_deep_convection_theta_float32_50x100x100.f32")
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL rank %d: %s" % (rank, msg), file=sys.stderr, flush=True)


CD_VALUES = {}  # spec -> (filter id, cd_values), for rank 0's serial write too


def cd_values(spec):
    if spec in CD_VALUES:
        return CD_VALUES[spec]
    opts = None
    if rank == 0:
        out = subprocess.run([os.environ.get("H5FZ_BIN", "h5fz"), "cd-values", "--json", spec],
                             check=True, capture_output=True, text=True).stdout
        j = json.loads(out)
        opts = (j["filter_id"], tuple(j["cd_values"]))
    CD_VALUES[spec] = comm.bcast(opts, root=0)
    return CD_VALUES[spec]


def slab(r, n, rows):
    return rows * r // n, rows * (r + 1) // n


def chunk_slab(r, n, rows, chunk):
    chunks = -(-rows // chunk)
    a, b = slab(r, n, chunks)
    return (a * chunk, min(b * chunk, rows)) if b > a else (0, 0)


def write_rows(dset, lo, hi, data):
    """Collective write of rows [lo, hi) from this rank (none when empty)."""
    if hi > lo:
        with dset.collective:
            dset[lo:hi] = data[lo:hi]
        return
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE)
    fspace = dset.id.get_space()
    fspace.select_none()
    mspace = h5py.h5s.create_simple((1,))
    mspace.select_none()
    dset.id.write(mspace, fspace, np.zeros(1, dset.dtype), dxpl=dxpl)


def read_rows(dset, lo, hi):
    if hi > lo:
        with dset.collective:
            return dset[lo:hi]
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE)
    fspace = dset.id.get_space()
    fspace.select_none()
    mspace = h5py.h5s.create_simple((1,))
    mspace.select_none()
    out = np.zeros(1, dset.dtype)
    dset.id.read(mspace, fspace, out, dxpl=dxpl)
    return out[:0]


def chunk_limits(orig, chunks, bound):
    """bound x the range of each element's chunk (REL)."""
    lim = np.zeros(orig.shape)
    for origin in np.ndindex(*[-(-n // c) for n, c in zip(orig.shape, chunks)]):
        sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(origin, chunks))
        lim[sl] = bound * (float(orig[sl].max()) - float(orig[sl].min()))
    return lim


CASES = [  # name, spec, mode, bound, chunks, split
    ("h5py_abs_on_grid", "abs=1e-3", "abs", 1e-3, (10, 100, 100), "grid"),
    ("h5py_rel_off_grid", "rel=1e-3", "rel", 1e-3, (8, 40, 64), "off"),
    ("h5py_abs_last_empty", "abs=1e-4", "abs", 1e-4, (7, 100, 100), "last_empty"),
]


def main():
    if not h5py.get_config().mpi:
        if rank == 0:
            print("skipped: this h5py (%s, HDF5 %s) is not built with MPI (Debian: python3-h5py-mpi)"
                  % (h5py.version.version, h5py.version.hdf5_version))
        return 77
    data = np.fromfile(FIELD, dtype="<f4").reshape(50, 100, 100)
    rows = data.shape[0]
    if rank == 0:
        for f in ("manifest.txt", "ref.h5", "h5py_serial.h5"):
            if os.path.exists(f):
                os.remove(f)
    comm.Barrier()
    with h5py.File("h5py_mpi.h5", "w", driver="mpio", comm=comm) as f:
        for name, spec, mode, bound, chunks, split in CASES:
            fid, opts = cd_values(spec)
            d = f.create_dataset(name, shape=data.shape, dtype="f4", chunks=chunks,
                                 compression=fid, compression_opts=opts)
            if split == "grid":
                lo, hi = chunk_slab(rank, size, rows, chunks[0])
            elif split == "off" or size == 1:
                lo, hi = slab(rank, size, rows)
            else:
                lo, hi = slab(rank, size - 1, rows) if rank < size - 1 else (0, 0)
            write_rows(d, lo, hi, data)
    if rank == 0:
        with h5py.File("h5py_serial.h5", "w") as s, h5py.File("ref.h5", "a") as ref, \
                h5py.File("h5py_mpi.h5", "r") as p, open("manifest.txt", "a") as man:
            for name, spec, mode, bound, chunks, split in CASES:
                fid, opts = CD_VALUES[spec]
                s.create_dataset(name, data=data, chunks=chunks, compression=fid, compression_opts=opts)
                ref.create_dataset(name, data=data)
                n = 0
                for origin in np.ndindex(*[-(-a // c) for a, c in zip(data.shape, chunks)]):
                    off = tuple(i * c for i, c in zip(origin, chunks))
                    mask_p, bytes_p = p[name].id.read_direct_chunk(off)
                    mask_s, bytes_s = s[name].id.read_direct_chunk(off)
                    if mask_p or bytes_p != bytes_s:
                        fail("%s: chunk at %s differs from the serial write's" % (name, off))
                        break
                    n += 1
                else:
                    print("  %s: %d chunks byte-identical to a serial write" % (name, n))
                man.write("h5py_mpi.h5 %s %s %r ref.h5\n" % (name, mode, bound))
    comm.Barrier()
    with h5py.File("h5py_mpi.h5", "r", driver="mpio", comm=comm) as f:
        for name, spec, mode, bound, chunks, split in CASES:
            lo, hi = slab(size - 1 - rank, size, rows)
            back = read_rows(f[name], lo, hi).astype(np.float64)
            orig = data[lo:hi].astype(np.float64)
            lim = bound if mode == "abs" else chunk_limits(data, chunks, bound)[lo:hi]
            bad = int(np.count_nonzero(np.abs(back - orig) > lim))
            if bad:
                fail("%s: %d elements of rows %d:%d out of bound" % (name, bad, lo, hi))
            if comm.allreduce(bad) == 0 and rank == 0:
                print("  %s: every element read back within the bound (%s)" % (name, spec))
    total = comm.allreduce(failures)
    if rank == 0:
        print("test_h5py_mpi: %s (%d ranks, %d failed checks)" % ("FAILED" if total else "OK", size, total))
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
