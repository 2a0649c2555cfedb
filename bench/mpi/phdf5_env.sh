# shellcheck shell=bash
# Sourced by bench/mpi/run.sh: make a self-built parallel HDF5 (an install
# prefix carried to a machine that has Open MPI but no parallel HDF5,
# docs/mpi.md "A self-built parallel HDF5") usable from another path.
#
#   h5fz_phdf5_setup SRC BUILD   (SRC: the install prefix, e.g. .devrun/phdf5)
#
# Copies SRC to $TMPDIR/h5fz-phdf5-<hash of BUILD> (outside the source and
# build trees: h5fz's installed CMake package names HDF5's include folder,
# and CMake refuses such a path inside either), re-creates the library links a
# copy may have lost, points h5pcc at its new prefix, and checks that the
# MPI C compiler can include mpi.h; where it cannot (Ubuntu's openmpi-bin
# ships mpicc but mpi.h is in libopenmpi-dev), writes BUILD/mpi-shim/mpicc,
# a wrapper around cc with the Open MPI headers carried in SRC/openmpi-include
# and the machine's libmpi.so.40. Sets PATH, LD_LIBRARY_PATH, HDF5_CC and
# h5fz_phdf5_prefix (the copy) and h5fz_phdf5_cmake_args (the CMake options
# of the h5fz MPI build).
# Returns 1 with a line saying what is missing.
h5fz_phdf5_setup() {
  local src=$1 build=$2 dst lib so real major
  dst=${TMPDIR:-/tmp}/h5fz-phdf5-$(printf '%s' "$build" | cksum | cut -d' ' -f1)
  if [ ! -f "$src/include/hdf5.h" ] || ! grep -q '^#define H5_HAVE_PARALLEL 1' "$src/include/H5pubconf.h" 2> /dev/null; then
    echo "phdf5: $src is not a parallel HDF5 install (no include/hdf5.h with H5_HAVE_PARALLEL)"
    return 1
  fi
  mkdir -p "$build"
  rm -rf "$dst"
  cp -a "$src" "$dst" || { echo "phdf5: cannot copy $src to $dst"; return 1; }
  # libhdf5.so -> libhdf5.so.310 -> libhdf5.so.310.5.0 (and _hl): a carried copy may hold the files only
  for real in "$dst"/lib/lib*.so.*.*.*; do
    [ -f "$real" ] || continue
    lib=$(basename "$real")
    so=${real%.so.*}.so
    major=${lib#*.so.}
    major=${major%%.*}
    [ -e "$so.$major" ] || ln -s "$lib" "$so.$major"
    [ -e "$so" ] || ln -s "$lib" "$so"
  done
  [ -e "$dst/lib/libhdf5.so" ] || { echo "phdf5: no libhdf5.so in $dst/lib"; return 1; }
  sed -i "s|^prefix=.*|prefix=\"$dst\"|" "$dst/bin/h5pcc"
  export PATH="$dst/bin:$PATH" LD_LIBRARY_PATH="$dst/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # shellcheck disable=SC2034 # read by run.sh
  h5fz_phdf5_prefix=$dst
  # its h5pcc, never a system hdf5-config.cmake (a serial HDF5 may be installed too)
  h5fz_phdf5_cmake_args=(-DHDF5_ROOT="$dst" -DHDF5_C_COMPILER_EXECUTABLE="$dst/bin/h5pcc" -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON)
  local probe=$build/mpi-probe.c
  printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' > "$probe"
  # H5FZ_PHDF5_SHIM=1: use the stand-in even where mpicc works (to test it)
  if [ "${H5FZ_PHDF5_SHIM:-0}" = 0 ] && command -v mpicc > /dev/null && mpicc "$probe" -o "$build/mpi-probe" > /dev/null 2>&1; then
    echo "phdf5: HDF5 $(sed -n 's/^#define H5_VERSION "\(.*\)"/\1/p' "$dst/include/H5pubconf.h") at $dst; mpicc: $(command -v mpicc) (includes mpi.h)"
    return 0
  fi
  # mpicc missing or without mpi.h: a wrapper with the carried headers
  local libmpi shim=$build/mpi-shim
  libmpi=$(ldconfig -p 2> /dev/null | awk '/libmpi\.so\.40 .*x86-64/ {print $NF; exit}')
  for so in /usr/lib/x86_64-linux-gnu/libmpi.so.40 /usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40; do
    if [ -z "$libmpi" ] && [ -f "$so" ]; then libmpi=$so; fi
  done
  if [ -z "$libmpi" ] || [ ! -f "$src/openmpi-include/mpi.h" ]; then
    echo "phdf5: no usable MPI C compiler: mpicc $(command -v mpicc > /dev/null && echo 'cannot include mpi.h' || echo 'missing')," \
      "libmpi.so.40 ${libmpi:-missing}, carried headers $src/openmpi-include/mpi.h $([ -f "$src/openmpi-include/mpi.h" ] && echo found || echo missing)" \
      "(Ubuntu: apt-get install libopenmpi-dev)"
    return 1
  fi
  mkdir -p "$shim/lib" "$shim/include"
  cp "$src"/openmpi-include/*.h "$shim/include/"
  ln -sf "$libmpi" "$shim/lib/libmpi.so"
  cat > "$shim/mpicc" << EOF
#!/bin/sh
# Written by bench/mpi/phdf5_env.sh: Open MPI's mpicc, for a machine with its libmpi.so.40 but no mpi.h.
case "\$1" in
  -showme:compile|--showme:compile) echo "-I$shim/include"; exit 0 ;;
  -showme:link|--showme:link) echo "-L$shim/lib -Wl,-rpath,$(dirname "$libmpi") -lmpi"; exit 0 ;;
  -showme:incdirs|--showme:incdirs) echo "$shim/include"; exit 0 ;;
  -showme:libdirs|--showme:libdirs) echo "$shim/lib"; exit 0 ;;
  -showme:libs|--showme:libs) echo "mpi"; exit 0 ;;
  -showme:version|--showme:version) echo "mpicc: Open MPI (h5fz shim, headers 4.1.4)"; exit 0 ;;
  -showme|--showme) echo "cc -I$shim/include -L$shim/lib -lmpi"; exit 0 ;;
esac
exec cc -I"$shim/include" "\$@" -L"$shim/lib" -Wl,-rpath,"$(dirname "$libmpi")" -lmpi
EOF
  chmod +x "$shim/mpicc"
  if ! "$shim/mpicc" "$probe" -o "$build/mpi-probe" > /dev/null 2>&1; then
    echo "phdf5: the mpicc shim ($shim/mpicc, $libmpi) cannot build an MPI program"
    return 1
  fi
  export PATH="$shim:$PATH" HDF5_CC="$shim/mpicc"
  h5fz_phdf5_cmake_args+=(-DMPI_C_COMPILER="$shim/mpicc")
  echo "phdf5: HDF5 $(sed -n 's/^#define H5_VERSION "\(.*\)"/\1/p' "$dst/include/H5pubconf.h") at $dst; no mpicc with mpi.h here, using $shim/mpicc ($libmpi, carried Open MPI 4.1.4 headers)"
}
