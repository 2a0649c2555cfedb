"""h5py on the GPU machine: write a real field through the h5fz plugin with
compression=<id>, compression_opts=(...), H5FZ_DEVICE=gpu, read it back and
check the bound on every element and that the stored chunks shrank; the
same field as a big-endian dataset (">f4") too: every chunk filtered, the
same containers as the little-endian dataset's but for the version byte,
the byte-order flag and the checksum, every element within the bound.
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
    for name, dtype in (("field", "<f4"), ("field_be", ">f4")):
        f.create_dataset(name, data=x.astype(dtype), chunks=(10,) + x.shape[1:], compression=cd["filter_id"],
                         compression_opts=tuple(cd["cd_values"]))
with h5py.File(out, "r") as f:
    ds = f["field"]
    y = ds[...]
    stored = ds.id.read_direct_chunk((0, 0, 0))[1]
    be = f["field_be"]
    y_be = be[...]
    be_ok, n_chunks = be.dtype.byteorder == ">", be.id.get_num_chunks()
    for i in range(n_chunks):
        off = be.id.get_chunk_info(i).chunk_offset
        mask_le, le_raw = ds.id.read_direct_chunk(off)
        mask_be, be_raw = be.id.read_direct_chunk(off)
        be_ok &= mask_le == 0 and mask_be == 0 and len(le_raw) == len(be_raw) and be_raw[4] == 2 and \
            le_raw[4] == 1 and be_raw[7] == le_raw[7] | 2 and \
            le_raw[:4] + le_raw[5:7] + le_raw[8:-4] == be_raw[:4] + be_raw[5:7] + be_raw[8:-4]
err = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
err_be = float(np.max(np.abs(x.astype(np.float64) - y_be.astype(np.float64))))
raw_chunk = 10 * x.shape[1] * x.shape[2] * 4
print(f"max error {err:.6g} <= bound {eb:.6g}: {err <= eb}; first chunk {len(stored)} bytes of {raw_chunk} raw")
print(f"big-endian: max error {err_be:.6g} <= bound: {err_be <= eb}; {n_chunks} chunks filtered and the "
      f"little-endian ones' bytes but for version/flag/CRC: {bool(be_ok)}")
sys.exit(0 if err <= eb and len(stored) < raw_chunk and err_be <= eb and be_ok else 1)
