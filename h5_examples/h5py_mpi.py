"""h5py + mpi4py writing one h5fz-compressed dataset from every MPI rank.

    HDF5_PLUGIN_PATH=build/plugin mpirun -n 4 python3 h5_examples/h5py_mpi.py [OUT.h5]

Each rank owns a slab of rows of a 3-D float32 field (here the embedded
MITgcm temperature, tests/data), not aligned to the chunks: HDF5 assembles
the chunks two ranks share before the filter compresses them. Needs an h5py
built with MPI (Debian: python3-h5py-mpi python3-mpi4py; Debian's `import
h5py` picks the MPI build under mpirun) and the plugin on HDF5_PLUGIN_PATH.

The rules (docs/mpi.md): open the file with driver="mpio"; write and read
filtered datasets inside `with dset.collective:` (HDF5 refuses independent
writes through a filter); every rank takes part in every write, and a rank
with nothing to write must still call H5Dwrite with an empty selection
(h5py skips empty slices, which would leave the other ranks waiting), as
write_rows does below. The cd_values are those `h5fz cd-values abs=1e-3`
prints.
"""
import os
import sys

import numpy as np
from mpi4py import MPI

import h5py

# from `h5fz cd-values "abs=1e-3"` (filter id 32770)
H5FZ_ID = 32770
H5FZ_ABS_1E_3 = (1, 0, 3539053052, 1062232653, 16384, 5, 1, 10, 11, 13, 30)
BOUND = 1e-3

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def rows_of(r, n, rows):
    return rows * r // n, rows * (r + 1) // n


def write_rows(dset, lo, hi, rows):
    """This rank's part of a collective write (an empty one when lo == hi)."""
    if hi > lo:
        with dset.collective:
            dset[lo:hi] = rows
        return
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE)
    fspace = dset.id.get_space()
    fspace.select_none()
    mspace = h5py.h5s.create_simple((1,))
    mspace.select_none()
    dset.id.write(mspace, fspace, np.zeros(1, dset.dtype), dxpl=dxpl)


def main(out):
    if not h5py.get_config().mpi:
        if rank == 0:
            print("skipped: this h5py (%s, HDF5 %s) is not built with MPI (Debian: python3-h5py-mpi)"
                  % (h5py.version.version, h5py.version.hdf5_version))
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    field = np.fromfile(os.path.join(here, "..", "tests", "data",
                                     "mitgcm_deep_convection_theta_float32_50x100x100.f32"),
                        dtype="<f4").reshape(50, 100, 100)
    lo, hi = rows_of(rank, size, field.shape[0])
    with h5py.File(out, "w", driver="mpio", comm=comm) as f:
        d = f.create_dataset("theta", shape=field.shape, dtype="f4", chunks=(8, 100, 100),
                             compression=H5FZ_ID, compression_opts=H5FZ_ABS_1E_3)
        write_rows(d, lo, hi, field[lo:hi])
    with h5py.File(out, "r", driver="mpio", comm=comm) as f:
        d = f["theta"]
        with d.collective:
            back = d[lo:hi]
        stored = d.id.get_storage_size()
    err = comm.allreduce(float(np.abs(back.astype(np.float64) - field[lo:hi]).max()) if hi > lo else 0.0,
                         op=MPI.MAX)
    if rank == 0:
        print("h5py_mpi: %d ranks wrote %s:/theta, ratio %.2f, max error %.3g (bound %g): %s"
              % (size, out, field.nbytes / stored, err, BOUND, "OK" if err <= BOUND else "FAILED"))
    return 0 if err <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "h5py_mpi.h5"))
