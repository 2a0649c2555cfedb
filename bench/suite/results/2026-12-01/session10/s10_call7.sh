#!/usr/bin/env bash
# tenth session, device call 7: the MPI tests with the GPU executor at the final code (chunk-cache and create fixes)
t0=$(date +%s); root=$PWD; b=$root/build-mpi-bench; log=/tmp/c7; rm -rf $log; mkdir -p $log
. bench/mpi/phdf5_env.sh; h5fz_phdf5_setup .devrun/phdf5 $b > $log/phdf5.txt || { cat $log/phdf5.txt; exit 1; }
. tests/gpu/devdata.sh; h5fz_use_devdata "$root"; data=${H5FZ_DATA_DIR}
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$data" -DH5FZ_EMBED_KERNELS=OFF "${h5fz_phdf5_cmake_args[@]}" -DH5FZ_PYTHON="$(command -v python3)" > $log/cmake.log 2>&1 || { tail $log/cmake.log; exit 1; }
cmake --build $b -j16 --target h5fz_plugin h5fz_mpi_tests > $log/build.log 2>&1 || { tail $log/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export H5FZ_CACHE_DIR=$b/jit-cache
echo "built after $(( $(date +%s) - t0 )) s"
H5FZ_DEVICE=gpu timeout 200 ctest --test-dir $b -L mpi -R '^mpi[.]api_' --output-on-failure -V > $log/ctest-mpi-api.log 2>&1
echo "ctest api (GPU) rc $?: $(grep -c ' Passed ' $log/ctest-mpi-api.log) passed; $(grep -o 'cached reads between writes: [^(]*\|abs_slabs_device_pieces: rank 0 wrote [^,]*' $log/ctest-mpi-api.log | sort -u | tr '\n' ';')"
grep -h '\*\*\*\|FAIL' $log/ctest-mpi-api.log | head -5
H5FZ_DEVICE=gpu H5FZ_DEVICE_STRICT=1 timeout 120 ctest --test-dir $b -L mpi -E '^mpi[.]api_' --output-on-failure > $log/ctest-mpi.log 2>&1
echo "ctest mpi non-api (GPU strict) rc $?: $(grep -c ' Passed' $log/ctest-mpi.log) passed, $(grep -c '\*\*\*Skipped' $log/ctest-mpi.log) skipped"
echo "total $(( $(date +%s) - t0 )) s"
tar czf $OUT/c7.tgz -C $log ctest-mpi-api.log ctest-mpi.log
