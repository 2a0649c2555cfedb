"""REL when HDF5 writes a chunk in parts (docs/spec.md §6, §7).

When a write covers only part of a chunk that is already stored, and the
chunk is not in HDF5's chunk cache (disabled here, or smaller than the
chunk), HDF5 reads the chunk back (decoded), changes the part and hands the
whole chunk to the filter again. Under REL every encode takes its bound eb
from the chunk as it is then, so the values written earlier are quantized
again from their decoded values. With eb = rel x range as it comes, each
re-encode could move a value by up to the new eb: time steps written one at
a time came back with 2.2-5.2x the bound. h5fz rounds eb down to
1/sqrt(2) x a power of 3, so the bins of successive encodes nest and a
re-encode adds no error beyond the larger eb.

The series: the embedded MITgcm field (50 x 100 x 100, z y x) read as 100
"time steps" of 50 x 100 (z, x) planes, one per y, in chunks of 8 steps
(the last chunk holds 4: an edge chunk). Every element is checked against
rel x (max - min) of the finite values of its chunk's original data, the
range a whole-chunk write would have seen.
"""
import h5py
import numpy as np
import pytest

import h5fz_testlib as lib
import second_decoder as sd

REL = 1e-4
STEPS_PER_CHUNK = 8


def _series():
    a = lib.embedded_field().load()  # (z, y, x)
    return np.ascontiguousarray(a.transpose(1, 0, 2))  # (y, z, x): y is "time"


def _orders(n):
    fwd = list(range(n))
    return {
        "forward": fwd,
        "reversed": fwd[::-1],
        "forward-twice": fwd + fwd,  # the whole series written again, same data
        "each-step-twice": [t for t in fwd for _ in (0, 1)],  # every slice overwritten at once
        "evens-then-odds": fwd[0::2] + fwd[1::2],
    }


def _chunk_header(d, t, step):
    return sd.parse_header(d.id.read_direct_chunk((t - t % step,) + (0,) * (d.ndim - 1))[1])


def _write_in_steps(path, x, chunks, order, rel, rdcc_nbytes, fillvalue=0.0):
    """Write x one step (index of the first dim) at a time in the given
    order; returns what reads back and each chunk's header. Checks that each
    write of a new step stored its chunk again (HDF5 encoded the whole chunk
    again, else the test would prove nothing)."""
    cd, _ = lib.cd_values(f"rel={rel}")
    kw = {} if rdcc_nbytes is None else {"rdcc_nbytes": rdcc_nbytes}
    stored, steps = {}, {}
    with h5py.File(path, "w", **kw) as f:
        d = f.create_dataset("d", shape=x.shape, dtype=x.dtype, chunks=chunks, fillvalue=fillvalue,
                             compression=lib.FILTER_ID, compression_opts=tuple(cd))
        for t in order:
            d[t] = x[t]
            c = t // chunks[0]
            stored.setdefault(c, set()).add(d.id.read_direct_chunk((c * chunks[0],) + (0,) * (x.ndim - 1))[1])
            steps.setdefault(c, set()).add(t)
    cached = [c for c in steps if len(stored[c]) < len(steps[c])]
    assert not cached, "chunks %s were not stored after each write (the chunk cache kept them)" % cached
    with h5py.File(path, "r") as f:
        d = f["d"]
        y = d[...]
        headers = [_chunk_header(d, c0, chunks[0]) for c0 in range(0, x.shape[0], chunks[0])]
    return y, headers


def _check_per_chunk(x, y, headers, step, rel, what):
    """Every element within rel x its chunk's original range; every chunk's
    stored eb within it too. Returns the worst max error / bound over the
    chunks (printed); fails naming the worst chunk."""
    worst, worst_text, over, eb_over = 0.0, "", 0, []
    for k, c0 in enumerate(range(0, x.shape[0], step)):
        a = x[c0:c0 + step].astype(np.float64)
        b = y[c0:c0 + step].astype(np.float64)
        fin = np.isfinite(a)
        rng = float(a[fin].max() - a[fin].min()) if fin.any() else 0.0
        bound = rel * rng
        err = lib.check_bound(a, b, np.inf, what)  # NaN and Inf exact; the max error
        over += int((np.abs(a[fin] - b[fin]) > bound).sum())
        if not headers[k].abs_bound <= bound:
            eb_over.append("chunk %d: %r > %r" % (k, headers[k].abs_bound, bound))
        factor = err / bound if bound > 0 else (0.0 if err == 0 else np.inf)
        if factor >= worst:
            worst = factor
            worst_text = "chunk %d (steps %d..%d): max error %.9g, rel x range %.9g" % (
                k, c0, min(c0 + step, x.shape[0]) - 1, err, bound)
    assert over == 0, "%s: %d elements over the bound; worst %s = %.6gx the bound" % (
        what, over, worst_text, worst)
    assert not eb_over, "%s: stored eb > rel x range in %s" % (what, ", ".join(eb_over))
    return worst


@pytest.mark.parametrize("order", list(_orders(1)))
@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
def test_rel_bound_holds_when_chunks_are_written_one_step_at_a_time(tmp_path, dtype, order):
    x = _series().astype(dtype)
    chunks = (STEPS_PER_CHUNK,) + x.shape[1:]
    y, headers = _write_in_steps(tmp_path / "steps.h5", x, chunks, _orders(x.shape[0])[order], REL,
                                 rdcc_nbytes=0)
    worst = _check_per_chunk(x, y, headers, STEPS_PER_CHUNK, REL, "%s %s" % (dtype, order))
    print("rel=%g %s %s: max error / (rel x chunk range) = %.3f" % (REL, dtype, order, worst))


# The same on the shared fields that are time series (first dim = time or
# level), when ../shared/data is there: stem -> (rdcc_nbytes, rel, fill
# value). um_sea_ice's chunk (8 x 215 x 360 float32, 2.4 MiB) is larger than
# HDF5's default 1 MiB chunk cache, so it runs with the file's default
# settings, as a user would. canesm5_siconc holds percentages, 0 .. 99.9999
# (NaN over land, its fill value): at rel=1e-2 with plain powers of 3, eb
# was 1/3, the decoded chunk spanned 0 .. 100, and 1e-2 x 100 = 1 was a
# power of 3 just over the bound; the 1 + 2 rel rule keeps eb within it.
SHARED = {"um_sea_ice_northward_velocity": (None, REL, 0.0),
          "mitgcm_fizhi_theta_cs32": (0, REL, 0.0),
          "glosea4_surface_temperature": (0, REL, 0.0),
          "canesm5_siconc": (0, 1e-2, float("nan"))}


def _shared_cases():
    fields = [f for f in lib.shared_fields() if f.stem in SHARED]
    if not fields:
        return [pytest.param(None, id="shared-data", marks=pytest.mark.skip(
            reason="no shared data folder at %s (set H5FZ_DATA_DIR)" % lib.DATA_DIR))]
    return [pytest.param(f, id=f.stem) for f in fields]


@pytest.mark.parametrize("field", _shared_cases())
def test_rel_bound_holds_on_shared_time_series_written_one_step_at_a_time(tmp_path, field):
    rdcc_nbytes, rel, fill = SHARED[field.stem]
    x = field.load()
    x = x.reshape((-1,) + x.shape[-2:])  # glosea4: member x month -> one axis
    chunks = (STEPS_PER_CHUNK,) + x.shape[1:]
    y, headers = _write_in_steps(tmp_path / "steps.h5", x, chunks, range(x.shape[0]), rel,
                                 rdcc_nbytes=rdcc_nbytes, fillvalue=fill)
    worst = _check_per_chunk(x, y, headers, STEPS_PER_CHUNK, rel, field.stem)
    print("rel=%g %s: max error / (rel x chunk range) = %.3f" % (rel, field.stem, worst))


# A non-zero fill value: the steps not yet written hold it, and it is left
# out of the range; once quantized it comes back near it, not equal to it
# (-999 as -998.9996), and the next encode of the chunk must leave that out
# too, or eb jumps to rel x (data - fill) and the values written before are
# quantized again with it (a tester measured 53x the bound with fill -999 and
# three steps, up to 1e13x in a sweep). 19.95 lies inside the field's range
# (19.93 .. 20.01): values near it are left out of the range as well, which
# can only tighten the bound.
@pytest.mark.parametrize("fill", [-999.0, 5.0, 19.95])
@pytest.mark.parametrize("order", ["forward", "evens-then-odds"])
@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
def test_rel_bound_holds_with_a_nonzero_fill_value(tmp_path, dtype, order, fill):
    x = _series().astype(dtype)
    chunks = (STEPS_PER_CHUNK,) + x.shape[1:]
    y, headers = _write_in_steps(tmp_path / "fill.h5", x, chunks, _orders(x.shape[0])[order], REL,
                                 rdcc_nbytes=0, fillvalue=fill)
    worst = _check_per_chunk(x, y, headers, STEPS_PER_CHUNK, REL, "%s %s fill %g" % (dtype, order, fill))
    print("rel=%g %s %s fill %g: max error / (rel x chunk range) = %.3f" % (REL, dtype, order, fill, worst))


def test_rel_bound_holds_with_a_nonzero_fill_value_three_steps(tmp_path):
    # the tester's reproducer: 3 steps of 1024 values around 100, fill -999
    x = (100.0 + np.random.default_rng(0).standard_normal((3, 1024))).astype("<f4")
    y, headers = _write_in_steps(tmp_path / "three.h5", x, (3, 1024), [0, 1, 2], REL, rdcc_nbytes=0,
                                 fillvalue=-999.0)
    worst = _check_per_chunk(x, y, headers, 3, REL, "3 steps, fill -999")
    print("rel=%g 3 steps of 1024, fill -999: max error / (rel x chunk range) = %.3f" % (REL, worst))
