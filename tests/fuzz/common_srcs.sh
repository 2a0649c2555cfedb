# common_srcs.sh - sourced by build.sh / run_regressions.sh / gen_seeds.sh:
# the library sources (fusion/ + planner/ + errors/ + device_ops/' CPU fast
# forms, as their CMakeLists.txt list them) and the two generated sources, made in $gen.
#   needs: root (repo root), gen (folder for generated sources)
h5fz_fuzz_gen_sources() {
  mkdir -p "$gen"
  local hdrs="" h
  # the word ops' include list, as device_ops/CMakeLists.txt makes it
  cmake -DH5FZ_OP_LIST_DIR="$root/device_ops" -DH5FZ_OP_LIST_OUTPUT="$gen/h5fz_ops_list.h" \
        -P "$root/device_ops/op_list.cmake"
  for h in h5fz_dev.h h5fz_detmath.h h5fz_ops.h h5fz_ops_words.h op_rze.h \
           $(sed -n 's/^#include "\(op_[a-z0-9_]*\.h\)"$/\1/p' "$gen/h5fz_ops_list.h"); do
    hdrs="${hdrs:+$hdrs|}$root/device_ops/$h"
  done
  hdrs="$hdrs|$gen/h5fz_ops_list.h|$root/fusion/gpu/h5fz_gpu_tail.h"
  cmake -DOUTPUT="$gen/h5fz_embedded_ops.c" "-DHEADERS=$hdrs" -P "$root/device_ops/embed_ops.cmake"
  cmake -DINPUT="$root/planner/registry/kernel_classes.txt" -DOUTPUT="$gen/registry_text.c" \
        -DSYMBOL=h5fz_planner_registry_text -P "$root/planner/embed_text.cmake"
  # the sources the add_library() of fusion/ and planner/ CMakeLists.txt
  # list, read from there so this list cannot fall behind them
  local f lib_srcs=()
  for f in $(sed -n '/^add_library(h5fz_core/,/)/p' "$root/fusion/CMakeLists.txt" | grep -oE '[a-z0-9_/]+\.c'); do
    lib_srcs+=("$root/fusion/$f")
  done
  for f in $(sed -n '/^add_library(h5fz_errors/,/)/p' "$root/errors/CMakeLists.txt" | grep -oE '[a-z0-9_]+\.c'); do
    lib_srcs+=("$root/errors/$f")
  done
  for f in $(sed -n '/^add_library(h5fz_planner/,/)/p' "$root/planner/CMakeLists.txt" | grep -oE '[a-z0-9_]+\.c'); do
    lib_srcs+=("$root/planner/$f")
  done
  # device_ops/CMakeLists.txt takes every op's twin by its name, op_X_cpu.c
  for f in "$root"/device_ops/op_*_cpu.c; do
    lib_srcs+=("$f")
  done
  # the fuzzers need no GPU kernels: the empty table of embedded modules
  H5FZ_FUZZ_SRCS=( "${lib_srcs[@]}" "$root/fusion/gpu/h5fz_jit_embedded_none.c" "$gen/h5fz_embedded_ops.c"
                   "$gen/registry_text.c" )
  H5FZ_FUZZ_INC="-I$root/fusion -I$root/fusion/format -I$root/fusion/cpu -I$root/fusion/gpu -I$root/planner -I$root/errors"
  H5FZ_FUZZ_INC="$H5FZ_FUZZ_INC -I$root/device_ops -I$gen -I$root"
  H5FZ_FUZZ_DEFS="-D_GNU_SOURCE -DH5FZ_FILTER_ID=32770 -DH5FZ_VERSION_STRING=\"fuzz\""
}
