"""Helpers of the end-to-end tests: the fields, the CLI, h5repack, checks."""
import json
import os
import pathlib
import re
import subprocess
from dataclasses import dataclass

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ["H5FZ_BIN"]
DATA_DIR = pathlib.Path(os.environ["H5FZ_DATA_DIR"])
FILTER_ID = int(os.environ["H5FZ_FILTER_ID"])
EMBEDDED = REPO / "tests" / "data" / "mitgcm_deep_convection_theta_float32_50x100x100.f32"

# Fill values that stand for "no data" in a field: excluded from the value
# range that scales the bound, but still checked against the bound.
FILL_VALUES = {"msg_toa_brightness_temperature": -1073741824.0}

# Results of the real-data cases, printed at the end of the session.
OBSERVED = []

_NAME = re.compile(r"^(?P<stem>.+)_(?P<dtype>float32|float64)_(?P<shape>[0-9x]+)\.(f32|f64)$")


@dataclass(frozen=True)
class Field:
    stem: str
    path: pathlib.Path
    dtype: str
    shape: tuple

    @property
    def shape_text(self):
        return "x".join(str(n) for n in self.shape)

    def load(self):
        return np.fromfile(self.path, "<" + ("f4" if self.dtype == "float32" else "f8")).reshape(
            self.shape)


def field_of(path):
    m = _NAME.match(path.name)
    if not m:
        return None
    shape = tuple(int(n) for n in m.group("shape").split("x"))
    return Field(m.group("stem"), path, m.group("dtype"), shape)


def shared_fields():
    """The fields of the shared data folder, [] when it is absent."""
    if not DATA_DIR.is_dir():
        return []
    return [f for f in (field_of(p) for p in sorted(DATA_DIR.iterdir())) if f]


def embedded_field():
    return field_of(EMBEDDED)


def value_range(field, data):
    """max - min of the finite values that are not fill values."""
    a = data[np.isfinite(data)].astype(np.float64)
    fill = FILL_VALUES.get(field.stem)
    if fill is not None:
        a = a[a != fill]
    return float(a.max() - a.min())


def cli(*args, check=True, timeout=None):
    """Run the h5fz CLI; returns the CompletedProcess (text). timeout:
    seconds, for commands that could block."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("h5fz %s failed (%d):\n%s%s" % (" ".join(map(str, args)),
                                                             p.returncode, p.stdout, p.stderr))
    return p


def spec_abs(bound):
    # repr keeps every bit of the double; the parser takes any strtod number.
    return "abs=%r" % float(bound)


def cd_values(spec):
    """(cd_values list, UD= string) of a spec, from `h5fz cd-values --json`."""
    out = json.loads(cli("cd-values", "--json", spec).stdout)
    assert out["filter_id"] == FILTER_ID
    return out["cd_values"], out["ud"]


def pick_chunks(shape, itemsize, target):
    """Chunks of at most about target bytes, cut along the slowest
    dimensions, with at least one edge (partial) chunk when the shape
    allows it: edge chunks reach the filter padded, a classic trap."""
    chunk = list(shape)
    inner = itemsize
    for i in reversed(range(len(shape))):
        if inner * shape[i] <= target:
            inner *= shape[i]
            continue
        chunk[i] = max(1, target // inner)
        for j in range(i):
            chunk[j] = 1
        break
    if any(n % c for n, c in zip(shape, chunk)):
        return tuple(chunk)
    # Every extent divides: shrink the cut extent a little, else cut the
    # fastest dimension unevenly.
    for i, (n, c) in enumerate(zip(shape, chunk)):
        if c < n:
            for smaller in range(c - 1, c // 2, -1):
                if n % smaller:
                    chunk[i] = smaller
                    return tuple(chunk)
    for i in reversed(range(len(shape))):
        if shape[i] >= 3:
            chunk[i] = min(chunk[i], shape[i] // 2 + 1)
            break
    return tuple(chunk)


def to_hdf5(field, out, chunks, dataset="/data"):
    cli("from-raw", field.path, out, "--shape", field.shape_text, "--chunk",
        "x".join(map(str, chunks)), "--dataset", dataset, "--quiet")


def run_tool(*args):
    p = subprocess.run(list(map(str, args)), capture_output=True, text=True)
    return p


def h5repack(src, dst, ud):
    p = run_tool("h5repack", "-f", ud, src, dst)
    assert p.returncode == 0, "h5repack -f %s failed:\n%s%s" % (ud, p.stdout, p.stderr)


def filter_ids(dset):
    plist = dset.id.get_create_plist()
    return [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]


def check_bound(orig, dec, bound, what=""):
    """max |x - x'| <= bound on every finite element, computed in float64;
    NaN positions equal; Inf values equal. Returns the max error."""
    assert orig.shape == dec.shape, what
    a = orig.astype(np.float64)
    b = dec.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    assert np.array_equal(nan_a, nan_b), "%s: NaN positions differ (%d vs %d NaN)" % (
        what, nan_a.sum(), nan_b.sum())
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    assert np.array_equal(inf_a, inf_b) and np.array_equal(a[inf_a], b[inf_b]), \
        "%s: Inf values differ" % what
    fin = np.isfinite(a)
    err = np.abs(a[fin] - b[fin])
    max_err = float(err.max()) if err.size else 0.0
    if max_err > bound:
        worst = np.argmax(np.where(fin, np.abs(a - b), -1.0))
        idx = np.unravel_index(worst, a.shape)
        raise AssertionError("%s: max error %.9g > bound %.9g (%d elements over) at %s: "
                             "%.17g decoded as %.17g" % (
                                 what, max_err, bound, int((err > bound).sum()), idx,
                                 a[idx], b[idx]))
    return max_err
