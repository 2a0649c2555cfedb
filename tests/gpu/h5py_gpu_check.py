"""h5py on the GPU machine: write a real field through the h5fz plugin with
compression=<id>, compression_opts=(...), H5FZ_DEVICE=gpu, read it back and
check the bound on every element and that the stored chunks shrank.
    python3 h5py_gpu_check.py H5FZ_BIN FIELD.f32 D R C OUT.h5
Prints the h5py/HDF5 versions it ran under; exit 0 on success."""
import json
import os
import subprocess
import sys

import numpy as np

h5fz_bin, field, d, r, c, out = sys.argv[1:7]
os.environ["H5FZ_DEVICE"] = "gpu"
os.environ["H5FZ_DEVICE_STRICT"] = "1"  # a GPU failure fails the check instead of falling back
import h5py  # noqa: E402  (after HDF5_PLUGIN_PATH / H5FZ_DEVICE are set)

x = np.fromfile(field, "<f4").reshape(int(d), int(r), int(c))
eb = 1e-4 * float(np.nanmax(x) - np.nanmin(x))
cd = json.loads(subprocess.check_output([h5fz_bin, "cd-values", "--json", f"abs={eb!r}"]))
print(f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}, filter {cd['filter_id']} {cd['spec']}")
with h5py.File(out, "w") as f:
    f.create_dataset("field", data=x, chunks=(10,) + x.shape[1:], compression=cd["filter_id"],
                     compression_opts=tuple(cd["cd_values"]))
with h5py.File(out, "r") as f:
    ds = f["field"]
    y = ds[...]
    stored = ds.id.read_direct_chunk((0, 0, 0))[1]
err = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
raw_chunk = 10 * x.shape[1] * x.shape[2] * 4
print(f"max error {err:.6g} <= bound {eb:.6g}: {err <= eb}; first chunk {len(stored)} bytes of {raw_chunk} raw")
sys.exit(0 if err <= eb and len(stored) < raw_chunk else 1)
