#!/usr/bin/env bash
# GPU part of the benchmark suite on a machine with an NVIDIA GPU and no network (the device
# machine). Needs in the repository root:
#   .whl/     wheels of nvidia-nvcomp-cu13 and nvidia-libnvcomp-cu13 (see README.md: pip download)
#   .devdata/ gzipped copies of the fields (as for tests/gpu/run.sh), else $H5FZ_DATA_DIR or ../shared/data
# Uses the machine's python3 (h5py, numpy, cupy, matplotlib, tqdm there); hdf5plugin is not needed.
# Writes to $OUT (else build-gpu-bench/out): run.log, nvidia-smi.txt, results.json, results.md,
# parts/{bench_gpu,filters_gpu,gpu_baselines}.json. Plots are made afterwards from results.json
# (bench/suite/report.py), to stay within the files the device tool brings back.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export H5FZ_BENCH_BUILD=${H5FZ_BENCH_BUILD:-$root/build-gpu-bench}
out=${OUT:-$H5FZ_BENCH_BUILD/out}
mkdir -p "$out/parts"
exec > >(tee "$out/run.log") 2>&1
if ls "$root"/.whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$root"/.whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
. "$root/tests/gpu/devdata.sh"
h5fz_use_devdata "$root"
export H5FZ_CACHE_DIR=${H5FZ_CACHE_DIR:-$H5FZ_BENCH_BUILD/jit-cache}
export H5FZ_BENCH_PYTHON=${H5FZ_BENCH_PYTHON:-python3} H5FZ_BENCH_PARTS=$out/parts H5FZ_BENCH_NO_PLOTS=1
export PYTHONUNBUFFERED=1
{ nvidia-smi; nvidia-smi --query-gpu=name,clocks.max.memory,pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max --format=csv; } > "$out/nvidia-smi.txt" 2>&1
python3 -c "import nvidia.nvcomp as n, cupy, h5py; print('nvcomp', n.__version__, 'cupy', cupy.__version__, 'h5py', h5py.version.version, 'HDF5', h5py.version.hdf5_version)"
exec "$root/bench/suite/run.sh" --gpu --no-cpu --out "$out" "$@"
