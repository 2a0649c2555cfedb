"""Shared helpers of the benchmark suite: loading the real fields, matched
bounds, chunk shapes, the tiled array and the error metrics."""
import math
import os
import re

import numpy as np

FILL = -1073741824.0  # the satellite field's fill value, left out of the range
NAME_RE = re.compile(r"^(?P<what>.+)_(?P<dtype>float32|float64)_(?P<shape>[0-9x]+)\.(f32|f64)$")


def default_data_dir(root):
    for d in (os.environ.get("H5FZ_DATA_DIR"), os.path.join(root, "..", "shared", "data"),
              os.path.join(root, "tests", "data")):
        if d and os.path.isdir(d) and any(NAME_RE.match(f) for f in os.listdir(d)):
            return os.path.abspath(d)
    raise SystemExit("no data folder (set --data or H5FZ_DATA_DIR)")


def finite_range(a):
    """max - min over finite values that are not the fill value (NaN-safe, blockwise)."""
    lo, hi = math.inf, -math.inf
    flat = a.reshape(-1)
    for s in range(0, flat.size, 1 << 24):
        b = flat[s:s + (1 << 24)]
        m = np.isfinite(b) & (b != FILL)
        if m.any():
            v = b[m]
            lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    return (hi - lo) if hi >= lo else 0.0


def load_fields(data_dir):
    fields = []
    for fn in sorted(os.listdir(data_dir)):
        m = NAME_RE.match(fn)
        if not m:
            continue
        dt = np.dtype("<f4" if m["dtype"] == "float32" else "<f8")
        shape = tuple(int(x) for x in m["shape"].split("x"))
        a = np.fromfile(os.path.join(data_dir, fn), dt).reshape(shape)
        fields.append({"name": m["what"], "file": fn, "data": a, "range": finite_range(a),
                       "nan": int(np.isnan(a).sum()), "fill": int((a == FILL).sum())})
    return fields


def tiled_field(fields, gib=1.0):
    """The float32 fields concatenated whole until >= gib GiB (as bench_gpu.c builds it)."""
    want = int(gib * (1 << 30))
    parts, total, reps = [], 0, 0
    f32 = [f for f in fields if f["data"].dtype == np.float32]
    while total < want:
        for f in f32:
            parts.append(f["data"].reshape(-1))
            total += f["data"].nbytes
        reps += 1
    a = np.concatenate(parts)
    del parts
    return {"name": "tiled_%.2fGiB" % (a.nbytes / (1 << 30)), "file": None, "data": a, "range": finite_range(a),
            "nan": int(np.isnan(a).sum()), "fill": int((a == FILL).sum()),
            "note": "the %d float32 fields concatenated whole, %d times; 1D; bound relative to the whole "
                    "array's finite range" % (len(f32), reps)}


def chunk_shape(shape, itemsize, target=4 << 20):
    """Whole slabs along the slowest axes, about `target` bytes (the same for every filter)."""
    ch = list(shape)
    for d in range(len(shape)):
        if math.prod(ch[d:]) * itemsize <= target:
            break
        inner = math.prod(ch[d + 1:]) * itemsize
        if inner <= target:  # balanced: ceil(total/target) chunks along this axis
            n = -(-shape[d] * inner // target)
            ch[d] = -(-shape[d] // n)
            break
        ch[d] = 1
    return tuple(int(c) for c in ch)


def error_metrics(orig, recon, bound, value_range):
    """Max error (finite originals, fill included), PSNR over finite non-fill values, NaN/Inf
    handling and whether the bound held (bound 0 = lossless: bit-exact)."""
    o, r = orig.reshape(-1), recon.reshape(-1)
    max_err = 0.0
    max_err_fill = 0.0
    sse, n_mse = 0.0, 0
    nan_lost = finite_lost = inf_changed = over = 0
    bit_exact = True
    step = 1 << 23
    for s in range(0, o.size, step):
        ob, rb = o[s:s + step], r[s:s + step]
        if bit_exact:
            bit_exact = np.array_equal(ob.view(np.uint8), rb.view(np.uint8))
        onan, rnan = np.isnan(ob), np.isnan(rb)
        nan_lost += int((onan & ~rnan).sum())
        ofin, rfin = np.isfinite(ob), np.isfinite(rb)
        oinf = np.isinf(ob)
        inf_changed += int((oinf & (ob != rb)).sum())
        finite_lost += int((ofin & ~rfin).sum())
        both = ofin & rfin
        err = np.abs(ob[both].astype(np.float64) - rb[both].astype(np.float64))
        if err.size:
            max_err = max(max_err, float(err.max()))
            over += int((err > bound).sum())
        fill = (ob == FILL) & rfin
        if fill.any():
            max_err_fill = max(max_err_fill, float(np.abs(rb[fill].astype(np.float64) - FILL).max()))
        nf = both & (ob != FILL)
        d = ob[nf].astype(np.float64) - rb[nf].astype(np.float64)
        sse += float(np.dot(d, d))
        n_mse += d.size
    # originals NaN also count as NaN handled when the reconstruction is NaN (any payload)
    if bound == 0:
        ok = bit_exact
    else:
        ok = over == 0 and nan_lost == 0 and finite_lost == 0 and inf_changed == 0
    mse = sse / n_mse if n_mse else 0.0
    psnr = math.inf if mse == 0 else 20 * math.log10(value_range) - 10 * math.log10(mse) if value_range > 0 else None
    out = {"max_err": max_err, "bound_ok": bool(ok), "over_bound": over, "nan_lost": nan_lost,
           "finite_lost": finite_lost, "inf_changed": inf_changed, "bit_exact": bool(bit_exact),
           "psnr_db": (None if psnr is None else ("inf" if math.isinf(psnr) else round(psnr, 2)))}
    if (o == FILL).any():
        out["max_err_at_fill"] = max_err_fill
    if bound > 0 and max_err > bound:
        out["overshoot"] = max_err / bound - 1
    return out


def machine_info():
    info = {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["mem_GiB"] = round(int(f.readline().split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    return info
