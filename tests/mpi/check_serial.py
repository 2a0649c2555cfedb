"""Serial readers on what an MPI test wrote (tests/mpi/run_mpi.sh).

    check_serial.py MANIFEST

Each line of MANIFEST is `FILE DATASET MODE BOUND REF`: the dataset
DATASET of FILE was written by N ranks; REF holds the original values
under the same name. Every element must come back within the bound
(abs: BOUND; rel: BOUND x the range of the element's chunk; pw_rel:
BOUND x |value|; NaN where the original is NaN) when read by:
  - h5dump (binary output, -b LE), the C library's tool;
  - h5py (serial: this runs outside mpirun, so Debian's h5py loads its
    serial build);
  - `h5fz verify REF FILE --dataset DATASET --<mode> BOUND --require-filter`
    (H5FZ_BIN), which also fails on any chunk stored without the filter.
Exit 1 on the first failure, with the reason.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def chunk_ranges(orig, chunks):
    """Per element: max - min of the finite values of its chunk."""
    out = np.zeros(orig.shape, dtype=np.float64)
    grid = [range(0, n, c) for n, c in zip(orig.shape, chunks)]
    for origin in np.ndindex(*[len(g) for g in grid]):
        sl = tuple(slice(g[i], g[i] + c) for g, i, c in zip(grid, origin, chunks))
        block = orig[sl].astype(np.float64)
        fin = block[np.isfinite(block)]
        out[sl] = (fin.max() - fin.min()) if fin.size else 0.0
    return out


def check(values, orig, mode, bound, chunks, who):
    values = values.astype(np.float64).reshape(orig.shape)
    o = orig.astype(np.float64)
    if mode == "abs":
        limit = np.full(o.shape, bound)
    elif mode == "rel":
        limit = bound * chunk_ranges(orig, chunks)
    else:
        limit = bound * np.abs(o)
    nan = np.isnan(o)
    if not np.array_equal(nan, np.isnan(values)):
        sys.exit("FAIL %s: NaN positions differ" % who)
    err = np.abs(values[~nan] - o[~nan])
    bad = err > limit[~nan]
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        sys.exit("FAIL %s: %d elements out of bound, first %r vs %r (bound %g)"
                 % (who, int(bad.sum()), values[~nan][i], o[~nan][i], limit[~nan][i]))
    return float(err.max()) if err.size else 0.0


def main(manifest):
    h5fz = os.environ.get("H5FZ_BIN", "h5fz")
    lines = [ln.split() for ln in open(manifest) if ln.strip()]
    for path, name, mode, bound, ref in lines:
        bound = float(bound)
        with h5py.File(ref, "r") as f:
            orig = f[name][...]
        with h5py.File(path, "r") as f:
            d = f[name]
            chunks = d.chunks
            err_h5py = check(d[...], orig, mode, bound, chunks, "h5py %s:%s" % (path, name))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "dump.bin")
            r = subprocess.run(["h5dump", "-d", name, "-b", "LE", "-o", out, path],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("FAIL h5dump %s:%s: %s" % (path, name, (r.stdout + r.stderr)[-2000:]))
            err_dump = check(np.fromfile(out, dtype=orig.dtype), orig, mode, bound, chunks,
                             "h5dump %s:%s" % (path, name))
        flag = {"abs": "--abs", "rel": "--rel", "pw_rel": "--pw-rel"}[mode]
        # verify's --rel bound is R x the whole dataset's range (looser than
        # per chunk, which the two checks above hold)
        r = subprocess.run([h5fz, "verify", ref, path, "--dataset", name, flag, repr(bound),
                            "--require-filter"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("FAIL h5fz verify %s:%s (exit %d):\n%s" % (path, name, r.returncode, r.stdout + r.stderr))
        print("serial readers OK  %s:%s  %s %g  max error h5py %.3g, h5dump %.3g; h5fz verify passed"
              % (path, name, mode, bound, err_h5py, err_dump))


if __name__ == "__main__":
    main(sys.argv[1])
