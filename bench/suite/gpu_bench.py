#!/usr/bin/env python3
"""GPU baselines, measured in the same run as h5fz's GPU figures: the peak HBM copy bandwidth
(device-to-device copy), the pinned PCIe H2D/D2H bandwidth, and nvCOMP (PyPI nvidia-nvcomp-cu13)
on the same arrays: Bitcomp and ANS lossless, and Bitcomp's lossy mode at the matched bounds.
Data already on the GPU; times are CUDA events on the codec's stream, median of --reps after a
warm-up. GB/s = 1e9 uncompressed bytes per second. One JSON document on --out."""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import default_data_dir, error_metrics, load_fields, tiled_field  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--data")
ap.add_argument("--out", required=True)
ap.add_argument("--reps", type=int, default=9)
ap.add_argument("--rels", default="1e-2,1e-3,1e-4")
ap.add_argument("--tiled-gib", type=float, default=1.0, help="0: no tiled array")
args = ap.parse_args()

import cupy as cp  # noqa: E402

doc = {"benchmark": "h5fz suite: GPU baselines (bandwidth, nvCOMP)",
       "units": "GB/s = 1e9 bytes per second (uncompressed bytes for codecs)", "errors": []}
# The CUDA stream and every nvCOMP object (codecs, compressed arrays, outputs) stay referenced from
# here until the process ends, and the process ends with os._exit, so none of them is ever
# destroyed. In the re-run on the device of 2026-11-30 every row was measured and saved after its
# field, then the process segfaulted before the final save, i.e. while nvcomp_rows returned and
# released its locals. Likely cause (not proven): the cupy stream is released first in that order,
# and the codecs and nvCOMP-allocated arrays that were made on it after it.
ALIVE = []


def median_event_ms(fn, stream, reps):
    fn()
    stream.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream)
        fn()
        e1.record(stream)
        e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1))
    ts.sort()
    return ts[len(ts) // 2]


def bandwidth():
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    out = {"device": props["name"].decode(), "sm_count": props["multiProcessorCount"],
           "memory_GiB": round(props["totalGlobalMem"] / (1 << 30), 1)}
    s = cp.cuda.Stream(non_blocking=True)
    n = 4 << 30
    a = cp.empty(n, dtype=cp.uint8)
    b = cp.empty(n, dtype=cp.uint8)
    a.fill(1)
    ms = median_event_ms(lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, n, 3, s.ptr), s, args.reps)
    out["hbm_copy"] = {"bytes": n, "ms": ms, "copy_GBps": n / ms / 1e6, "traffic_GBps": 2 * n / ms / 1e6,
                       "note": "cudaMemcpyAsync device-to-device; traffic counts bytes read + written"}
    a = b = None
    n = 1 << 30
    host = cp.cuda.alloc_pinned_memory(n)
    h = np.frombuffer(host, dtype=np.uint8, count=n)
    h[:] = 1
    d = cp.empty(n, dtype=cp.uint8)
    h2d = median_event_ms(lambda: cp.cuda.runtime.memcpyAsync(d.data.ptr, h.ctypes.data, n, 1, s.ptr), s, args.reps)
    d2h = median_event_ms(lambda: cp.cuda.runtime.memcpyAsync(h.ctypes.data, d.data.ptr, n, 2, s.ptr), s, args.reps)
    out["pcie_pinned"] = {"bytes": n, "h2d_GBps": n / h2d / 1e6, "d2h_GBps": n / d2h / 1e6,
                          "note": "cudaMemcpyAsync from/to cudaHostAlloc'd memory, 1 GiB"}
    d = h = host = None
    cp.get_default_memory_pool().free_all_blocks()
    return out


def save():
    with open(args.out, "w") as fo:
        json.dump(doc, fo, indent=1)


def nvcomp_rows(fields):
    from nvidia import nvcomp
    doc["nvcomp_version"] = nvcomp.__version__
    rels = [float(r) for r in args.rels.split(",")]
    rows = doc.setdefault("nvcomp", [])  # saved after every field: a crash keeps what was measured
    # One stream, and every codec kept alive to the end: in the device run of 2026-11-30, dropping a
    # Codec (a new one per configuration) destroyed the CUDA context under the next one (709).
    s = cp.cuda.Stream(non_blocking=True)
    keep = []
    ALIVE.extend([s, keep])
    for fld in fields:
        a = fld["data"]
        ft = "<f4" if a.dtype == np.float32 else "<f8"
        cfgs = [("Bitcomp", 0.0, 0.0, dict(algorithm="Bitcomp", data_type=ft)),
                ("ANS", 0.0, 0.0, dict(algorithm="ANS", data_type="<f4" if ft == "<f4" else "|u1")),
                ("LZ4", 0.0, 0.0, dict(algorithm="LZ4", data_type="|u1"))]
        for rel in rels:
            bound = rel * fld["range"]
            # Bitcomp lossy: max error delta/2, delta rounded down to a power of two inside
            cfgs.append(("Bitcomp-lossy", rel, bound, dict(algorithm="Bitcomp", data_type=ft,
                                                           mode=nvcomp.BitcompMode.BITCOMP_LOSSY_FP_TO_SIGNED,
                                                           delta=2 * bound)))
        d_in = cp.asarray(a.reshape(-1))
        for name, rel, bound, kw in cfgs:
            row = {"field": fld["name"], "bytes": a.nbytes, "codec": name, "rel": rel, "bound": bound,
                   "options": {k: str(v) for k, v in kw.items()}}
            try:
                codec = nvcomp.Codec(cuda_stream=s.ptr, **kw)
                keep.append(codec)
                src = nvcomp.as_array(d_in)
                holder = {}

                def enc():
                    holder["c"] = codec.encode(src)

                enc_ms = median_event_ms(enc, s, args.reps)
                s.synchronize()
                comp = holder["c"]
                csize = comp.buffer_size
                dcfg = codec.decompression_config(comp)
                d_out = cp.empty(a.size, dtype=a.dtype)
                try:  # into a preallocated buffer; else let nvCOMP allocate (timed with it)
                    codec.decode(comp, out=d_out, decompression_config=dcfg)
                    s.synchronize()

                    def dec():
                        codec.decode(comp, out=d_out, decompression_config=dcfg)
                except Exception as e:  # noqa: BLE001
                    row["decode_note"] = "out= refused (%s): output allocated by nvCOMP in the timing" % e

                    def dec():
                        holder["d"] = codec.decode(comp, decompression_config=dcfg)

                dec_ms = median_event_ms(dec, s, args.reps)
                s.synchronize()
                if "d" in holder:
                    d_out = cp.asarray(holder["d"]).view(cp.uint8)[:a.nbytes].view(a.dtype)
                recon = cp.asnumpy(d_out).reshape(a.shape)
                keep.append((comp, holder, d_out))
                row.update({"compressed_bytes": csize, "ratio": a.nbytes / csize, "encode_ms": enc_ms,
                            "decode_ms": dec_ms, "encode_GBps": a.nbytes / enc_ms / 1e6,
                            "decode_GBps": a.nbytes / dec_ms / 1e6})
                row.update(error_metrics(a, recon, bound, fld["range"]))
            except Exception as e:  # noqa: BLE001
                row["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            rows.append(row)
            print("  nvcomp %-14s %-13s rel=%-6g %s" % (fld["name"][:14], name, rel, row.get("error") or
                  "ratio %.2f enc %.1f dec %.1f GB/s ok=%s" % (row["ratio"], row["encode_GBps"], row["decode_GBps"],
                                                               row["bound_ok"])), file=sys.stderr, flush=True)
        del d_in
        save()
    return rows


def main():
    t0 = time.time()
    try:
        doc["bandwidth"] = bandwidth()
        print("bandwidth:", json.dumps(doc["bandwidth"]), file=sys.stderr, flush=True)
        save()
    except Exception:  # noqa: BLE001
        doc["errors"].append("bandwidth: " + traceback.format_exc(limit=2))
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    fields = load_fields(os.path.abspath(args.data) if args.data else default_data_dir(root))
    if args.tiled_gib > 0:
        fields.append(tiled_field(fields, args.tiled_gib))
    doc["fields"] = [{k: v for k, v in f.items() if k != "data"} for f in fields]
    save()
    try:
        nvcomp_rows(fields)
        cp.cuda.runtime.deviceSynchronize()
    except Exception:  # noqa: BLE001
        doc["errors"].append("nvcomp: " + traceback.format_exc(limit=3))
    doc["seconds"] = time.time() - t0
    save()
    print("wrote", args.out, file=sys.stderr)


main()
# Leave without running any destructor (nvCOMP codecs and arrays, cupy stream and memory pool):
# everything is saved; see ALIVE above.
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
