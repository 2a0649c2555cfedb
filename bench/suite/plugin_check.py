"""Exit 0 if this python's h5py loads the h5fz plugin ($HDF5_PLUGIN_PATH) and round-trips a
small array within its bound. argv[1]: the h5fz CLI (for cd-values)."""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

j = json.loads(subprocess.check_output([sys.argv[1], "cd-values", "--json", "abs=1e-3 dtype=f32"]))
a = np.sin(np.linspace(0, 20, 65536, dtype=np.float32)).reshape(256, 256)
path = os.path.join(tempfile.mkdtemp(), "check.h5")
with h5py.File(path, "w") as f:
    f.create_dataset("x", data=a, chunks=(128, 256), compression=j["filter_id"], compression_opts=tuple(j["cd_values"]))
with h5py.File(path, "r") as f:
    b = f["x"][...]
    size = f["x"].id.get_storage_size()
os.remove(path)
err = float(np.abs(a.astype(np.float64) - b).max())
print("h5py", h5py.version.version, "HDF5", h5py.version.hdf5_version, "ratio %.2f max_err %.3g" % (a.nbytes / size, err))
sys.exit(0 if err <= 1e-3 and size < a.nbytes else 1)
