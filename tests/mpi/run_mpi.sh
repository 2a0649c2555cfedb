#!/usr/bin/env bash
# run_mpi.sh FOLDER N COMMAND [ARG...]: run COMMAND on N MPI ranks in a
# fresh FOLDER, then the serial readers (check_serial.py) on every dataset
# it listed in FOLDER/manifest.txt. CTest's mpi.* tests (CMakeLists.txt)
# set MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIEXEC_FLAGS, H5FZ_PYTHON, H5FZ_BIN
# and HDF5_PLUGIN_PATH.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$1 n=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
# timeout: a collective call that one rank misses would hang; fail instead
# shellcheck disable=SC2086
timeout 600 "${MPIEXEC:-mpirun}" "${MPIEXEC_NUMPROC_FLAG:--n}" "$n" ${MPIEXEC_FLAGS:-} "$@"
test -s manifest.txt || { echo "run_mpi.sh: $* listed no dataset in manifest.txt" >&2; exit 1; }
"${H5FZ_PYTHON:-python3}" "$here/check_serial.py" manifest.txt
