#!/usr/bin/env python3
"""The Python package's fast path against the h5py filter path, on a real
float32 field tiled to >= 1 GiB (docs/python.md, docs/performance.md).

    python3 bench/python_fast_path.py --data DIR [--gib 1] [--chunk-planes 16,54] [--dir /dev/shm]
                                      [--reps 3] [--out result.json]

um_sea_ice (120 x 215 x 360 float32) is repeated along time to >= --gib GiB
(3480 x 215 x 360 = 1.077 GB for 1), bound abs = 1e-4 x its value range,
default chain, chunks of N whole planes. Per chunk shape, in one process:

  filter_write    h5py create_dataset + dset[...] = a through the filter (H5Dwrite)
  numpy_write     h5fz.write(dset, a) from the numpy array
  cupy_write      h5fz.write(dset, cupy_array) from GPU memory (when CuPy and a GPU are there)
  filter_read     dset[...] through the filter (H5Dread)
  numpy_read      h5fz.read(dset)
  cupy_read       h5fz.read(dset, out=cupy_array)

Writes are timed from the call to the end of File.flush() into a new file,
best of --reps after one warm-up (JIT, pinned buffers); GB/s = array bytes /
s / 1e9. Checks, each failing the run (exit 1): every chunk of every fast
dataset equal to the filter dataset's, byte for byte; every element read
back within the bound; the reads of all paths bit-identical.
"""
import argparse
import json
import os
import sys
import time

import h5py
import numpy as np

import h5fz

FIELD = "um_sea_ice_northward_velocity_float32_120x215x360.f32"
SHAPE = (120, 215, 360)


def tiled(data_dir, gib):
    one = np.fromfile(os.path.join(data_dir, FIELD), "<f4").reshape(SHAPE)
    copies = int(np.ceil(gib * 2 ** 30 / one.nbytes))
    return np.ascontiguousarray(np.concatenate([one] * copies, axis=0))


def chunk_bytes(dset):
    return {dset.id.get_chunk_info(i).chunk_offset: dset.id.read_direct_chunk(dset.id.get_chunk_info(i).chunk_offset)
            for i in range(dset.id.get_num_chunks())}


def timed_write(path, a, chunks, flt, how, reps, cupy_array=None):
    """Best seconds of reps writes (after a warm-up) into a new file; returns
    (best, all, report of the last h5fz.write or None)."""
    times, report = [], None
    for rep in range(reps + 1):
        if os.path.exists(path):
            os.remove(path)
        with h5py.File(path, "w") as f:
            if how == "filter":
                d = f.create_dataset("t", shape=a.shape, dtype=a.dtype, chunks=chunks, **flt)
                t0 = time.perf_counter()
                d[...] = a
                f.flush()
            else:
                d = f.create_dataset("t", shape=a.shape, dtype=a.dtype, chunks=chunks, **flt)
                src = a if how == "numpy" else cupy_array
                t0 = time.perf_counter()
                report = h5fz.write(d, src)
                f.flush()
            dt = time.perf_counter() - t0
        if rep:
            times.append(dt)
    return min(times), times, report


def timed_read(path, how, reps, cp=None):
    times, back = [], None
    with h5py.File(path, "r") as f:
        d = f["t"]
        out = cp.empty(d.shape, d.dtype) if how == "cupy" else None
        for rep in range(reps + 1):
            t0 = time.perf_counter()
            if how == "filter":
                back = d[...]
            elif how == "numpy":
                back = h5fz.read(d)
            else:
                h5fz.read(d, out=out)
                cp.cuda.Device().synchronize()
                back = out
            dt = time.perf_counter() - t0
            if rep:
                times.append(dt)
    return min(times), times, back


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("H5FZ_DATA_DIR", "../shared/data"))
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--chunk-planes", default="16,54")
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else "/tmp")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()

    a = tiled(args.data, args.gib)
    finite = a[np.isfinite(a)]
    bound = 1e-4 * float(finite.max() - finite.min())
    flt = h5fz.Filter(abs=bound)
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
        a_gpu = cp.asarray(a)
        cp.cuda.Device().synchronize()
    except Exception as e:  # noqa: BLE001 - no CuPy or no GPU: the GPU rows are left out, said why
        cp, a_gpu, cupy_note = None, None, "%s: %s" % (type(e).__name__, e)
    else:
        cupy_note = None
    result = {"benchmark": "h5fz Python fast path vs h5py filter path", "field": "%s x %d" % (FIELD, a.shape[0] // 120),
              "shape": list(a.shape), "bytes": a.nbytes, "abs_bound": bound, "spec": flt.spec, "dir": args.dir,
              "reps": args.reps, "config": h5fz.get_config(), "h5py": h5py.version.version,
              "hdf5": h5py.version.hdf5_version, "cupy": None if cp is None else cp.__version__,
              "cupy_unavailable": cupy_note, "cases": []}
    ok = True
    gb = a.nbytes / 1e9
    for planes in [int(p) for p in args.chunk_planes.split(",")]:
        chunks = (planes, a.shape[1], a.shape[2])
        case = {"chunk": list(chunks), "chunk_MiB": planes * a.shape[1] * a.shape[2] * 4 / 2 ** 20}
        paths = {how: os.path.join(args.dir, "h5fz_pybench_%s.h5" % how) for how in ("filter", "numpy", "cupy")}
        hows = ["filter", "numpy"] + (["cupy"] if cp is not None else [])
        for how in hows:
            best, times, report = timed_write(paths[how], a, chunks, flt, how, args.reps, a_gpu)
            case[how + "_write_GBps"] = gb / best
            case[how + "_write_s"] = times
            if report:
                case[how + "_report"] = {k: report[k] for k in ("chunks", "stored_bytes", "ratio", "on_gpu",
                                                                "kernel_class", "merged", "outliers")}
        with h5py.File(paths["filter"], "r") as f:
            want = chunk_bytes(f["t"])
            case["ratio"] = a.nbytes / sum(len(c[1]) for c in want.values())
        for how in hows[1:]:
            with h5py.File(paths[how], "r") as f:
                got = chunk_bytes(f["t"])
            same = sorted(got) == sorted(want) and all(got[k] == want[k] for k in want)
            case[how + "_chunks_identical_to_filter"] = same
            ok &= same
        reads = {}
        for how in hows:
            best, times, back = timed_read(paths["filter"], how, args.reps, cp)
            case[how + "_read_GBps"] = gb / best
            case[how + "_read_s"] = times
            reads[how] = back if how != "cupy" else cp.asnumpy(back)
        err = float(np.abs(reads["numpy"].astype(np.float64) - a).max())
        case["max_abs_error"], case["within_bound"] = err, err <= bound
        ok &= err <= bound
        case["reads_identical"] = all(np.array_equal(reads[h].view(np.uint32), reads["numpy"].view(np.uint32))
                                      for h in hows)
        ok &= case["reads_identical"]
        for p in paths.values():
            if os.path.exists(p):
                os.remove(p)
        result["cases"].append(case)
        print("chunk %s: write filter %.2f numpy %.2f cupy %s GB/s; read filter %.2f numpy %.2f cupy %s GB/s; "
              "ratio %.1f, max err / bound %.3f, chunks identical %s" % (
                  "x".join(map(str, chunks)), case["filter_write_GBps"], case["numpy_write_GBps"],
                  "%.2f" % case["cupy_write_GBps"] if "cupy_write_GBps" in case else "-",
                  case["filter_read_GBps"], case["numpy_read_GBps"],
                  "%.2f" % case["cupy_read_GBps"] if "cupy_read_GBps" in case else "-", case["ratio"],
                  err / bound, all(case.get(h + "_chunks_identical_to_filter", True) for h in hows)),
              file=sys.stderr, flush=True)
    result["ok"] = bool(ok)
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
