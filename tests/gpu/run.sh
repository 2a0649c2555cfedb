#!/usr/bin/env bash
# Build h5fz and run every GPU-side test and the GPU benchmark, on a machine
# with an NVIDIA GPU (exit 77 at once without one). Logs go to $OUT (the
# device tool's folder) or build-gpu/logs. Data: $H5FZ_DATA_DIR, else
# .devdata/ (gzipped copies of ../shared/data that .git/info/exclude keeps
# out of git, for machines without ../shared), else ../shared/data.
# H5FZ_PYTHON: the Python with h5py for the h5py check (default python3).
set -uo pipefail
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "tests/gpu/run.sh: no NVIDIA GPU here (nvidia-smi -L failed); run it on a machine with one" >&2
  exit 77
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${H5FZ_GPU_BUILD:-$root/build-gpu}
out=${OUT:-$build/logs}
mkdir -p "$out"
. "$root/tests/gpu/devdata.sh"
h5fz_use_devdata "$root"
H5FZ_DATA_DIR=${H5FZ_DATA_DIR:-$root/../shared/data}
export H5FZ_DATA_DIR
export H5FZ_CACHE_DIR=${H5FZ_CACHE_DIR:-$build/jit-cache}
status=0
{ nvidia-smi; nvidia-smi --query-gpu=name,clocks.max.memory,pcie.link.gen.current,pcie.link.width.current --format=csv; } > "$out/nvidia-smi.txt" 2>&1
echo "== configure + build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5FZ_DATA_DIR="$H5FZ_DATA_DIR" \
  -DH5FZ_PYTHON="${H5FZ_PYTHON:-$(command -v python3)}" > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" > "$out/build.log" 2>&1 || { grep -E -A5 "error" "$out/build.log" | head -60; exit 1; }
echo "== h5fz plan"
"$build/bin/h5fz" plan 2>&1 | tee "$out/plan.txt"
echo "== GPU tests (byte identity with the CPU, codegen) and C tests with the GPU executor forced"
ctest --test-dir "$build" -R "${H5FZ_GPU_TESTS:-gpu\.|core\.|api\.}" -V > "$out/ctest-gpu.log" 2>&1 || status=1
grep -E "(ok|FAIL|SKIP) |passed|failed|GPU chunks|tests passed|Test +#|out of bound" "$out/ctest-gpu.log" | grep -v "^.*: ok  " | tail -40
grep -cE ": ok +.*identical" "$out/ctest-gpu.log" | sed 's/^/identical cases: /'
cp "$build/tests/gpu/gpu_written_v1.h5" "$out/" 2>/dev/null
H5FZ_DEVICE=gpu H5FZ_DEVICE_STRICT=1 ctest --test-dir "$build" -R '^filter_' --output-on-failure > "$out/ctest-filter-gpu.log" 2>&1 || status=1
tail -12 "$out/ctest-filter-gpu.log"
echo "== big-endian datasets and in-range fill values through the plugin on the GPU (h5py, h5repack, from-raw; strict: no CPU fallback)"
H5FZ_DEVICE=gpu H5FZ_DEVICE_STRICT=1 ctest --test-dir "$build" -R 'python_test_big_endian|python_test_h5py_filter' \
  --output-on-failure > "$out/ctest-big-endian-fill-gpu.log" 2>&1 || status=1
tail -4 "$out/ctest-big-endian-fill-gpu.log"
echo "== appending in new processes on the GPU, and a GPU that cannot take the chunks (4 KiB memory limit): never a failed chunk"
H5FZ_DEVICE=gpu ctest --test-dir "$build" -R 'python_test_append_new_process' --output-on-failure > "$out/ctest-append-gpu.log" 2>&1 || status=1
H5FZ_DEVICE=gpu H5FZ_GPU_MEMORY_LIMIT=4096 ctest --test-dir "$build" -R 'python_test_append_new_process|^api\.dataset_small$' \
  --output-on-failure > "$out/ctest-gpu-oom-fallback.log" 2>&1 || status=1
tail -n 3 "$out/ctest-append-gpu.log" "$out/ctest-gpu-oom-fallback.log"
echo "== the installed tree (libh5fz_core.so / libh5fz_dataset.so from cmake --install) and h5fz compress on the GPU"
H5FZ_DEVICE=gpu H5FZ_DEVICE_STRICT=1 ctest --test-dir "$build" -R '^install_tree$|^python_test_compress$|^python_test_netcdf$|^example_fortran$' \
  --output-on-failure > "$out/ctest-install-compress-gpu.log" 2>&1 || status=1
grep -E "Test +#|tests passed|SKIP" "$out/ctest-install-compress-gpu.log" | tail -8
echo "== h5py (the machine's python3) through the plugin on the GPU"
HDF5_PLUGIN_PATH="$build/plugin" "${H5FZ_PYTHON:-python3}" "$root/tests/gpu/h5py_gpu_check.py" "$build/bin/h5fz" \
  "$root/tests/data/mitgcm_deep_convection_theta_float32_50x100x100.f32" 50 100 100 /tmp/h5py_gpu.h5 2>&1 | tail -15
echo "== dataset API on >= 64 MiB of real data (byte identity with the filter, bound)"
HDF5_PLUGIN_PATH="$build/plugin" "$build/tests/api/test_dataset_api" big "$H5FZ_DATA_DIR" /tmp/api_64mib.h5 2>&1 | tee "$out/api_64mib.log" | tail -6
[ "${PIPESTATUS[0]}" = 0 ] || status=1
echo "== first chunk of a fresh process, empty JIT cache (cold-start phases; the filter under auto and gpu)"
cold=$(mktemp -d /tmp/h5fz-cold-XXXXXX)
H5FZ_CACHE_DIR="$cold" "$build/bin/h5fz_bench_gpu" --data "$H5FZ_DATA_DIR" --jit-only > "$out/bench_cold_start.json" 2> "$out/bench_cold_start.err" || status=1
cat "$out/bench_cold_start.json"
HDF5_PLUGIN_PATH="$build/plugin" "$build/bin/h5fz_bench_first_chunk" > "$out/bench_first_chunk.json" 2> "$out/bench_first_chunk.err" || status=1
HDF5_PLUGIN_PATH="$build/plugin" "$build/bin/h5fz_bench_first_chunk" --chunk-mib 16 > "$out/bench_first_chunk_16mib.json" 2>> "$out/bench_first_chunk.err" || status=1
cat "$out/bench_first_chunk.json" "$out/bench_first_chunk_16mib.json"; tail -3 "$out/bench_first_chunk.err"
rm -rf "$cold"
if [ "${H5FZ_SKIP_DATASET_BENCH:-0}" != 1 ]; then
  echo "== dataset API benchmark (>= 1 GiB, API vs filter path)"
  HDF5_PLUGIN_PATH="$build/plugin" "$build/bin/h5fz_bench_dataset" --data "$H5FZ_DATA_DIR" ${H5FZ_DATASET_BENCH_ARGS:-} \
    > "$out/bench_dataset.json" 2> "$out/bench_dataset.err" || status=1
  cat "$out/bench_dataset.json"; tail -4 "$out/bench_dataset.err"
fi
if [ "${H5FZ_SKIP_BENCH:-0}" != 1 ]; then
  echo "== benchmark"
  "$build/bin/h5fz_bench_gpu" --data "$H5FZ_DATA_DIR" ${H5FZ_BENCH_ARGS:-} > "$out/bench_gpu.json" 2> "$out/bench_gpu.err" || status=1
  cat "$out/bench_gpu.json"; tail -5 "$out/bench_gpu.err"
fi
exit $status
