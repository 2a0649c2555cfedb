# devdata.sh - sourced by the GPU-machine scripts (tests/gpu/run.sh,
# run_python.sh, bench/mpi/run.sh, bench/suite/run_gpu.sh,
# run_peers_gpu.sh): the real fields for a machine without ../shared.
#
# h5fz_use_devdata ROOT: when H5FZ_DATA_DIR is unset and ROOT/.devdata
# exists (copies of ../shared/data, plain or gzipped, that
# .git/info/exclude keeps out of git and the device tool carries), unpack
# them into /tmp/h5fz-devdata and export H5FZ_DATA_DIR there.
h5fz_use_devdata() {
  [ -z "${H5FZ_DATA_DIR:-}" ] && [ -d "$1/.devdata" ] || return 0
  export H5FZ_DATA_DIR=/tmp/h5fz-devdata
  mkdir -p "$H5FZ_DATA_DIR"
  local f
  for f in "$1"/.devdata/*; do
    case "$f" in
      *.gz) gunzip -c "$f" > "$H5FZ_DATA_DIR/$(basename "${f%.gz}")" ;;
      *) cp "$f" "$H5FZ_DATA_DIR/" ;;
    esac
  done
}
