#!/usr/bin/env bash
# The Python package on a GPU machine with no network (docs/python.md):
# install it from this working tree with the machine's python3 (pip
# --no-build-isolation --no-deps: scikit-build-core, cmake, h5py, numpy and
# CuPy must be there; else a plain CMake build and PYTHONPATH), run the
# package suite (tests/package/test_h5fz_package.py, GPU executor, CuPy
# arrays) and the >= 1 GiB benchmark bench/python_fast_path.py. Logs and
# JSON go to $OUT (the device tool's folder) or build-gpu/logs. Data as
# tests/gpu/run.sh finds it: $H5FZ_DATA_DIR, .devdata/, ../shared/data.
# Exit 77 without a GPU; 1 when a step fails.
set -uo pipefail
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "tests/gpu/run_python.sh: no NVIDIA GPU here (nvidia-smi -L failed)" >&2
  exit 77
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${H5FZ_GPU_BUILD:-$root/build-gpu}
out=${OUT:-$build/logs}
py=${H5FZ_PYTHON:-python3}
site=/tmp/h5fz-site
mkdir -p "$out"
. "$root/tests/gpu/devdata.sh"
h5fz_use_devdata "$root"
H5FZ_DATA_DIR=${H5FZ_DATA_DIR:-$root/../shared/data}
export H5FZ_DATA_DIR
export H5FZ_CACHE_DIR=${H5FZ_CACHE_DIR:-$build/jit-cache}
unset HDF5_PLUGIN_PATH
status=0

echo "== python: $($py -c 'import sys, h5py, numpy; print(sys.executable, sys.version.split()[0], "h5py", h5py.version.version, "HDF5", h5py.version.hdf5_version, "numpy", numpy.__version__)' 2>&1)"
$py -m pip show scikit-build-core cupy-cuda13x cmake 2>/dev/null | grep -E "^(Name|Version)" | paste - - > "$out/py-packages.txt"
cat "$out/py-packages.txt"

echo "== the h5fz CLI (for the suite's cd-values comparison)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target h5fz_cli h5fz_py h5fz_py_files > "$out/build.log" 2>&1 \
  || { grep -E -A5 "error" "$out/build.log" | head -40; exit 1; }

echo "== pip install --no-build-isolation --no-deps --target $site ."
rm -rf "$site"
if (cd "$root" && $py -m pip install --no-build-isolation --no-deps --no-cache-dir --target "$site" \
      --config-settings=build-dir="$build/skbuild" .) > "$out/pip-install.log" 2>&1; then
  export PYTHONPATH=$site
  echo "installed into $site"
else
  tail -15 "$out/pip-install.log"
  echo "pip install failed (above); using the CMake build's package folder $build/python instead"
  export PYTHONPATH=$build/python
fi
(cd /tmp && $py -c "import h5fz, json; print(json.dumps(h5fz.get_config(), indent=1))") 2>&1 | tee "$out/get_config.json"

echo "== package suite (GPU executor, CuPy arrays)"
(cd /tmp && H5FZ_SOURCE_DIR="$root" H5FZ_BIN="$build/bin/h5fz" H5FZ_FILTER_ID=32770 \
  H5FZ_EXPECT_VERSION="$($py -c 'import h5fz; print(h5fz.__version__)')" H5FZ_PACKAGE_VENV=gpu-machine \
  $py -m pytest -q -rs -p no:cacheprovider "$root/tests/package/test_h5fz_package.py") > "$out/package-suite.log" 2>&1 || status=1
tail -15 "$out/package-suite.log"

echo "== benchmark: >= 1 GiB real float32, h5fz.write from numpy and CuPy vs the filter path"
(cd /tmp && $py "$root/bench/python_fast_path.py" --data "$H5FZ_DATA_DIR" ${H5FZ_PY_BENCH_ARGS:-} \
  --out "$out/python_fast_path.json") > /dev/null 2> "$out/python_fast_path.err" || status=1
cat "$out/python_fast_path.err"
exit $status
