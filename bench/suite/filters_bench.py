#!/usr/bin/env python3
"""Filter path through HDF5 (h5py): H5Dwrite + close, then open + H5Dread, of each real field
(and optionally a tiled >= 1 GiB array) with h5fz and with the CPU filters of PyPI's hdf5plugin
(SZ3 ABS, ZFP accuracy, Zstd, Blosc2) at matched error bounds. One JSON document on --out.

The h5fz executor is chosen with --executor (sets H5FZ_DEVICE before libhdf5 loads the plugin).
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--data", help="folder of raw fields (default: $H5FZ_DATA_DIR, ../shared/data, tests/data)")
ap.add_argument("--build", required=True, help="h5fz build folder (bin/h5fz, plugin/libh5fz.so)")
ap.add_argument("--out", required=True, help="JSON file to write")
ap.add_argument("--executor", default="cpu", choices=["cpu", "gpu", "auto"])
ap.add_argument("--filters", default="h5fz,sz3,zfp,zstd,blosc2,none",
                help="comma list among h5fz,sz3,zfp,zstd,blosc2,none (default: all)")
ap.add_argument("--rels", default="1e-2,1e-3,1e-4", help="bounds relative to each field's finite range")
ap.add_argument("--runs", type=int, default=3, help="timed runs per case (median)")
ap.add_argument("--tiled", action="store_true", help="add the tiled >= 1 GiB array of real float32 fields")
ap.add_argument("--tiled-gib", type=float, default=1.0)
ap.add_argument("--fields", default="", help="comma list of field-name substrings to keep")
ap.add_argument("--tmp", default=None, help="where the HDF5 files go (default: /dev/shm if tmpfs, else /tmp)")
ap.add_argument("--slow-s", type=float, default=15.0,
                help="a case whose first write takes longer is timed once (runs=1), noted in its row")
ap.add_argument("--case-timeout", type=int, default=900, help="seconds before a case is killed")
ap.add_argument("--label", default=None, help="name of this run in the JSON")
ap.add_argument("--chunks", default="slab", choices=["slab", "capped"],
                help="slab: whole slabs along the slowest axes, about 4 MiB (the speed rows); capped: the field's "
                     "shape with its last three dims capped at 64 x 64 x 256 (the ratio table, ratio_table.py)")
ap.add_argument("--h5fz-chains", default="",
                help="h5fz chains to run, ';'-separated spec words after the bound (e.g. \"default;ratio;lorenzo_nd "
                     "zigzag bitshuffle rze subchunk=65536\"); default: the default chain only")
args = ap.parse_args()

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
build = os.path.abspath(args.build)
os.environ["HDF5_PLUGIN_PATH"] = os.path.join(build, "plugin")
os.environ["H5FZ_DEVICE"] = "cpu"  # the parent only preloads filters; each case's child sets the executor
os.environ.setdefault("H5FZ_QUIET", "0")

import numpy as np  # noqa: E402
import h5py  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import chunk_shape, default_data_dir, error_metrics, load_fields, machine_info, tiled_field  # noqa: E402

try:
    from tqdm import tqdm
except ImportError:  # plain fallback
    def tqdm(it, **kw):
        return it

wanted = [f.strip() for f in args.filters.split(",") if f.strip()]
notes = []
try:
    import hdf5plugin
    hdf5plugin_version = hdf5plugin.version
except ImportError:
    hdf5plugin = None
    hdf5plugin_version = None
    dropped = [f for f in wanted if f in ("sz3", "zfp", "zstd", "blosc2")]
    if dropped:
        notes.append("hdf5plugin not importable here: %s left out" % ",".join(dropped))
    wanted = [f for f in wanted if f not in dropped]

h5fz_bin = os.path.join(build, "bin", "h5fz")


def h5fz_kwargs(bound, dtype, chain=""):
    spec = "abs=%.17g dtype=%s%s" % (bound, "f64" if dtype == np.float64 else "f32", " " + chain if chain else "")
    j = json.loads(subprocess.check_output([h5fz_bin, "cd-values", "--json", spec]))
    return {"compression": j["filter_id"], "compression_opts": tuple(j["cd_values"])}, j["spec"]


def configs(field):
    """(filter, rel, bound, kwargs, description) for one field; lossless filters once (bound 0)."""
    rels = [float(r) for r in args.rels.split(",")]
    out = []
    for flt in wanted:
        if flt in ("h5fz", "sz3", "zfp"):
            for rel in rels:
                b = rel * field["range"]
                if flt == "h5fz":
                    for chain in [c.strip() for c in args.h5fz_chains.split(";") if c.strip()] or ["default"]:
                        kw, desc = h5fz_kwargs(b, field["data"].dtype, "" if chain == "default" else chain)
                        desc = "h5fz " + desc + " (executor %s)" % args.executor
                        out.append(("h5fz" if chain == "default" else "h5fz " + chain, rel, b, kw, desc))
                    continue
                elif flt == "sz3":
                    kw, desc = dict(hdf5plugin.SZ3(absolute=b)), "SZ3 absolute=%.6g" % b
                else:
                    kw, desc = dict(hdf5plugin.Zfp(accuracy=b)), "ZFP accuracy=%.6g" % b
                out.append((flt, rel, b, kw, desc))
        elif flt == "zstd":
            out.append((flt, 0.0, 0.0, dict(hdf5plugin.Zstd(clevel=3)), "Zstd clevel=3"))
        elif flt == "blosc2":
            out.append((flt, 0.0, 0.0, dict(hdf5plugin.Blosc2(cname="zstd", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE)),
                        "Blosc2 zstd clevel=5 shuffle"))
        elif flt == "none":
            out.append((flt, 0.0, 0.0, {}, "no filter (chunked, uncompressed)"))
    return out


def capped_chunks(shape):
    """The field's shape, its last three dims capped at 64 x 64 x 256 (slower dims 1)."""
    caps = (1,) * max(0, len(shape) - 3) + (64, 64, 256)[-min(3, len(shape)):]
    return tuple(min(s, c) for s, c in zip(shape, caps))


def one_case(field, flt, rel, bound, kw, desc, tmpdir):
    a = field["data"]
    chunks = capped_chunks(a.shape) if args.chunks == "capped" else chunk_shape(a.shape, a.itemsize)
    path = os.path.join(tmpdir, "bench.h5")
    rec = {"field": field["name"], "dtype": str(a.dtype), "shape": list(a.shape), "bytes": a.nbytes,
           "chunks": list(chunks), "filter": flt, "rel": rel, "bound": bound, "config": desc,
           "executor": args.executor if flt.startswith("h5fz") else None}
    tw, tr = [], []
    recon = None
    try:
        if args.executor == "gpu" and flt.startswith("h5fz"):  # untimed warm-up: CUDA context, module load
            with h5py.File(path, "w") as f:
                f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=chunks, **kw).write_direct(a)
            with h5py.File(path, "r") as f:
                f["x"][...]
        runs = args.runs
        for i in range(args.runs):
            if i >= runs:
                break
            if os.path.exists(path):
                os.remove(path)
            f = h5py.File(path, "w")
            t0 = time.perf_counter()
            ds = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=chunks, **kw)
            ds.write_direct(a)
            f.close()  # flush: every chunk goes through the filter and to the file
            tw.append(time.perf_counter() - t0)
            if i == 0 and tw[0] > args.slow_s and runs > 1:
                runs = 1
                rec["note"] = "slow: timed once (first write %.1f s > %.0f s)" % (tw[0], args.slow_s)
        with h5py.File(path, "r") as f:
            stored = f["x"].id.get_storage_size()
        for _ in range(runs):
            recon = np.empty_like(a)
            t0 = time.perf_counter()
            with h5py.File(path, "r") as f:
                f["x"].read_direct(recon)
            tr.append(time.perf_counter() - t0)
    except Exception as e:  # a filter that refuses the data is a result, not a crash
        rec["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        return rec
    finally:
        if os.path.exists(path):
            os.remove(path)
    tw.sort()
    tr.sort()
    rec.update({"stored_bytes": stored, "ratio": a.nbytes / stored if stored else None,
                "write_s": tw[len(tw) // 2], "read_s": tr[len(tr) // 2],
                "write_GBps": a.nbytes / tw[len(tw) // 2] / 1e9, "read_GBps": a.nbytes / tr[len(tr) // 2] / 1e9,
                "write_s_all": tw, "read_s_all": tr})
    rec.update(error_metrics(a, recon, bound, field["range"]))
    return rec


def isolated_case(*a):
    """Run one case in a forked child: a filter that crashes the process (seen: SZ3 on NaN fields,
    'double free or corruption') becomes an error row instead of ending the run."""
    import signal
    rfd, wfd = os.pipe()
    errf = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.dup2(errf.fileno(), 2)
        os.environ["H5FZ_DEVICE"] = args.executor  # read by the plugin at every chunk
        signal.alarm(args.case_timeout)  # default action: the child ends, the parent reports it
        try:
            rec = one_case(*a)
            payload = json.dumps(rec).encode()
        except BaseException as e:  # noqa: BLE001
            payload = json.dumps({"error": "%s: %s" % (type(e).__name__, e)}).encode()
        with os.fdopen(wfd, "wb") as w:
            w.write(payload)
        os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        payload = r.read()
    _, status = os.waitpid(pid, 0)
    errf.seek(0)
    stderr_tail = errf.read().decode(errors="replace").strip().splitlines()[-3:]
    errf.close()
    if payload:
        rec = json.loads(payload)
    else:
        field, flt, rel, bound, desc = a[0], a[1], a[2], a[3], a[5]
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        tail = (": " + " | ".join(stderr_tail)) if stderr_tail else ""
        if sig == signal.SIGALRM:  # the child's alarm (--case-timeout): it hung or was too slow, it did not crash
            what = "timed out: not finished after %d s (--case-timeout), killed%s" % (args.case_timeout, tail)
        else:
            what = "process crashed (%s)%s" % (signal.Signals(sig).name if sig else "exit %d" % status, tail)
        rec = {"field": field["name"], "dtype": str(field["data"].dtype), "shape": list(field["data"].shape),
               "bytes": field["data"].nbytes, "filter": flt, "rel": rel, "bound": bound, "config": desc,
               "error": what}
    if stderr_tail and "error" not in rec:
        rec["stderr"] = " | ".join(stderr_tail)
    return rec


def preload(tmpdir):
    """Load every filter plugin once in the parent (CPU executor, no CUDA), so that the forked
    cases do not time the plugin's dlopen."""
    a = np.linspace(0, 1, 4096, dtype=np.float32).reshape(64, 64)
    fake = {"name": "preload", "data": a, "range": 1.0}
    for flt, rel, bound, kw, desc in configs(fake):
        try:
            with h5py.File(os.path.join(tmpdir, "pre.h5"), "w") as f:
                f.create_dataset("x", data=a, chunks=(64, 64), **kw)
            with h5py.File(os.path.join(tmpdir, "pre.h5"), "r") as f:
                f["x"][...]
        except Exception:  # noqa: BLE001
            pass


def git_commit():
    """The checkout's commit (with '-dirty' when tracked files differ), or None outside git."""
    try:
        c = subprocess.check_output(["git", "-C", root, "rev-parse", "HEAD"], stderr=subprocess.DEVNULL, text=True).strip()
        dirty = subprocess.call(["git", "-C", root, "diff", "--quiet", "HEAD"], stderr=subprocess.DEVNULL) != 0
        return c + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    data_dir = os.path.abspath(args.data) if args.data else default_data_dir(root)
    fields = load_fields(data_dir)
    if args.fields:
        keep = [k for k in args.fields.split(",") if k]
        fields = [f for f in fields if any(k in f["name"] for k in keep)]
    if args.tiled:
        fields.append(tiled_field([f for f in fields if f["file"]], args.tiled_gib))
    tmp_root = args.tmp or ("/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else "/tmp")
    tmpdir = tempfile.mkdtemp(prefix="h5fz-bench-", dir=tmp_root)
    jobs = [(f, *c) for f in fields for c in configs(f)]
    try:
        preload(tmpdir)
    except BaseException:  # the temporary folder goes with a failed preload too
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    doc = {"benchmark": "h5fz suite: HDF5 filter path (H5Dwrite + close / open + H5Dread)",
           "label": args.label or "filters-%s" % args.executor,
           "units": "GB/s = 1e9 uncompressed bytes per second; ratio = uncompressed / stored chunk bytes",
           "timing": "write = create_dataset + H5Dwrite + file close (flush); read = open + H5Dread + close; "
                     "median of %d; files in %s" % (args.runs, tmp_root),
           "bounds": "ABS = rel x the field's finite range (fill -1073741824 excluded); SZ3 absolute and ZFP "
                     "accuracy get the same absolute bound; Zstd/Blosc2 lossless (bound 0: bit-exact)",
           "bound_check": "max |x - x'| over finite originals (fill included) <= bound, NaN stays NaN, Inf exact",
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git_commit": git_commit(),
           "command": shlex.join([os.path.basename(sys.executable)] + sys.argv), "chunks": args.chunks,
           "case_timeout_s": args.case_timeout,
           "machine": machine_info(), "python": sys.executable, "h5py": h5py.version.version,
           "hdf5": h5py.version.hdf5_version, "hdf5plugin": hdf5plugin_version, "numpy": np.__version__,
           "h5fz_executor": args.executor, "data_dir": data_dir, "notes": notes,
           "fields": [{k: v for k, v in f.items() if k != "data"} | {"shape": list(f["data"].shape),
                                                                     "dtype": str(f["data"].dtype)} for f in fields],
           "results": []}
    try:
        for f, flt, rel, bound, kw, desc in tqdm(jobs, desc="filters (%s)" % args.executor, unit="case",
                                                 mininterval=1.0, file=sys.stderr):
            rec = isolated_case(f, flt, rel, bound, kw, desc, tmpdir)
            doc["results"].append(rec)
            if rec.get("error") or (rec.get("bound_ok") is False):
                tqdm.write("  %s %s rel=%g: %s" % (rec["field"], flt, rel, rec.get("error") or
                           "BOUND VIOLATED max_err=%.4g bound=%.4g nan_lost=%d" % (rec["max_err"], bound,
                                                                               rec["nan_lost"])),
                           file=sys.stderr) if hasattr(tqdm, "write") else None
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
        doc["machine"]["loadavg_end"] = os.getloadavg()
        with open(args.out, "w") as fo:
            json.dump(doc, fo, indent=1)
    print("wrote %s (%d cases)" % (args.out, len(doc["results"])), file=sys.stderr)


main()
