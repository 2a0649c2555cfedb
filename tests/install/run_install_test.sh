#!/usr/bin/env bash
# install_tree: the installed tree as a packager and a user see it.
#
#   run_install_test.sh BUILD_DIR SOURCE_DIR VERSION WORK_DIR [FC]
#
# FC: the build's Fortran compiler, given where the build has the Fortran
# module (api/fortran); then step 5 too.
#
# 1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix, and every file of
#    docs/install.md is there;
# 2. an outside CMake project (consumer/) with find_package(h5fz): builds,
#    and runs with HDF5_PLUGIN_PATH = the plugin folder the package names
#    (every element checked against the bound); find_package(h5fz 99) fails;
# 3. the same program built with `pkg-config --cflags --libs h5fz` and run;
# 4. the installed bin/h5fz verifies what the program wrote, through the
#    installed plugin;
# 5. with FC: the Fortran example (h5_examples/fortran/h5fz_fortran.f90,
#    `use h5fz`) built against the installed module, by an outside CMake
#    project (consumer_fortran/, find_package(h5fz COMPONENTS fortran)) and
#    by FC with `pkg-config --cflags --libs h5fz-fortran` (and by HDF5's h5fc, static libhdf5, where
#    there is one), each run in
#    library mode (no plugin) and its file read by the installed bin/h5fz.
# Nothing from the build tree is on any path the programs use.
set -euo pipefail
build=$1 src=$2 version=$3 work=$4 fc=${5:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
unset HDF5_PLUGIN_PATH H5FZ_BIN LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH

step() { printf '\n== %s\n' "$*"; }
die() { echo "install_tree: FAIL: $*" >&2; exit 1; }

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(sed -n 's/^libdir=\${prefix}\///p' "$(find "$prefix" -name h5fz.pc)")
[ -n "$libdir" ] || die "no lib/pkgconfig/h5fz.pc installed"
# shared libraries by default; static archives with -DH5FZ_INSTALL_SHARED=OFF
libext=so
[ -e "$prefix/$libdir/libh5fz_core.so" ] || libext=a
for f in bin/h5fz "$libdir/hdf5/plugin/libh5fz.so" include/h5fz.h include/h5fz_dataset.h \
         "$libdir/libh5fz_core.$libext" "$libdir/libh5fz_dataset.$libext" \
         "$libdir/cmake/h5fz/h5fzConfig.cmake" "$libdir/cmake/h5fz/h5fzConfigVersion.cmake" \
         "$libdir/cmake/h5fz/h5fzTargets.cmake" "$libdir/pkgconfig/h5fz.pc" \
         share/doc/h5fz/LICENSE share/doc/h5fz/CHANGELOG.md; do
  [ -e "$prefix/$f" ] || die "missing $f in the installed tree"
  echo "  $f"
done
if [ -n "$fc" ]; then
  for f in include/h5fz.mod "$libdir/libh5fz_fortran.$libext" "$libdir/pkgconfig/h5fz-fortran.pc"; do
    [ -e "$prefix/$f" ] || die "missing $f in the installed tree (the build has the Fortran module)"
    echo "  $f"
  done
fi
plugin_dir=$prefix/$libdir/hdf5/plugin
installed_version=$("$prefix/bin/h5fz" version)
grep -qx "h5fz $version (filter id [0-9]*)" <<<"$installed_version" ||
  die "installed h5fz version does not say $version: $installed_version"
echo "$installed_version"

step "outside CMake project: find_package(h5fz)"
cmake -S "$here/consumer" -B "$work/cmake-app" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake-app.log" || { cat "$work/cmake-app.log"; die "configure"; }
cmake --build "$work/cmake-app" >>"$work/cmake-app.log" || { cat "$work/cmake-app.log"; die "build"; }
{ read -r found_version; read -r found_plugin_dir; } <"$work/cmake-app/h5fz_found.txt"
[ "$found_version" = "$version" ] || die "find_package found version $found_version"
[ "$(realpath "$found_plugin_dir")" = "$(realpath "$plugin_dir")" ] ||
  die "h5fz_PLUGIN_DIR is $found_plugin_dir, the plugin is in $plugin_dir"
HDF5_PLUGIN_PATH=$found_plugin_dir "$work/cmake-app/consumer" "$work/cmake.h5" "$version"
if [ "$libext" = so ]; then
  # (into a variable first: grep -q closing the pipe early would fail it
  # under pipefail)
  deps=$(ldd "$work/cmake-app/consumer")
  grep -q "$prefix/$libdir/libh5fz_dataset.so" <<<"$deps" ||
    die "the CMake-built program does not use the installed libh5fz_dataset.so: $deps"
fi

step "find_package(h5fz 99) must fail"
if cmake -S "$here/consumer" -B "$work/cmake-app-99" -DCMAKE_PREFIX_PATH="$prefix" \
     -DH5FZ_WANT_VERSION=99 >"$work/cmake-app-99.log" 2>&1; then
  die "find_package(h5fz 99) succeeded against $version"
fi
grep -q 'h5fzConfig.cmake, version: '"$version" "$work/cmake-app-99.log" ||
  die "find_package(h5fz 99) failed for another reason than the version: see $work/cmake-app-99.log"
echo "  refused: the installed config says version $version"

step "an HDF5 that is gone: find_package(h5fz) says which file"
broken=$work/prefix-broken
cp -a "$prefix" "$broken"
sed -i 's|^set(_h5fz_hdf5_files "|set(_h5fz_hdf5_files "/nonexistent/libhdf5.so;|' "$broken/$libdir/cmake/h5fz/h5fzConfig.cmake"
if cmake -S "$here/consumer" -B "$work/cmake-app-broken" -DCMAKE_PREFIX_PATH="$broken" \
     >"$work/cmake-app-broken.log" 2>&1; then
  die "find_package(h5fz) accepted a config whose HDF5 is missing"
fi
grep -q "/nonexistent/libhdf5.so, which no longer" "$work/cmake-app-broken.log" ||
  die "find_package(h5fz) failed without naming the missing HDF5 file: see $work/cmake-app-broken.log"
echo "  refused, naming /nonexistent/libhdf5.so"

step "outside program: pkg-config --cflags --libs h5fz"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[ "$(pkg-config --modversion h5fz)" = "$version" ] || die "pkg-config --modversion h5fz"
pc_plugin_dir=$(pkg-config --variable=plugindir h5fz)
filter_id=$(pkg-config --variable=filter_id h5fz)
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
cc -std=c11 -Wall -Wextra -Werror -o "$work/pc-app" "$here/consumer/consumer.c" \
  -DH5FZ_FILTER_ID_INSTALLED="$filter_id" $(pkg-config --cflags --libs h5fz) -ldl -lm \
  -Wl,-rpath,"$prefix/$libdir"
echo "  cc ... $(pkg-config --cflags --libs h5fz)"
HDF5_PLUGIN_PATH=$pc_plugin_dir "$work/pc-app" "$work/pc.h5" "$version"

step "installed bin/h5fz reads the files through the installed plugin"
HDF5_PLUGIN_PATH=$plugin_dir "$prefix/bin/h5fz" inspect "$work/pc.h5" --summary >/dev/null
HDF5_PLUGIN_PATH=$plugin_dir "$prefix/bin/h5fz" verify "$work/cmake.h5" "$work/pc.h5" --lossless \
  --require-filter
if [ -n "$fc" ]; then
  step "Fortran: the example against the installed module"
  program=$src/h5_examples/fortran/h5fz_fortran.f90
  mkdir -p "$work/no-plugins"
  cmake -S "$here/consumer_fortran" -B "$work/cmake-fortran" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_Fortran_COMPILER="$fc" -DH5FZ_FORTRAN_PROGRAM="$program" -DCMAKE_BUILD_TYPE=Release \
    >"$work/cmake-fortran.log" 2>&1 || { cat "$work/cmake-fortran.log"; die "configure (Fortran)"; }
  cmake --build "$work/cmake-fortran" >>"$work/cmake-fortran.log" 2>&1 ||
    { cat "$work/cmake-fortran.log"; die "build (Fortran)"; }
  HDF5_PLUGIN_PATH=$work/no-plugins "$work/cmake-fortran/fortran_consumer" "$work/cmake-fortran.h5" |
    tee "$work/cmake-fortran.out"
  grep -q "h5fz_fortran: OK" "$work/cmake-fortran.out" || die "the CMake-built Fortran program"
  if [ "$libext" = so ]; then
    deps=$(ldd "$work/cmake-fortran/fortran_consumer")
    grep -q "$prefix/$libdir/libh5fz_fortran.so" <<<"$deps" ||
      die "the CMake-built Fortran program does not use the installed libh5fz_fortran.so: $deps"
  fi
  # shellcheck disable=SC2046  # pkg-config prints several words on purpose
  "$fc" -o "$work/pc-fortran" "$program" $(pkg-config --cflags --libs h5fz-fortran) \
    -Wl,-rpath,"$prefix/$libdir"
  echo "  $fc ... $(pkg-config --cflags --libs h5fz-fortran)"
  HDF5_PLUGIN_PATH=$work/no-plugins "$work/pc-fortran" "$work/pc-fortran.h5" | tee "$work/pc-fortran.out"
  grep -q "h5fz_fortran: OK" "$work/pc-fortran.out" || die "the pkg-config-built Fortran program"
  HDF5_PLUGIN_PATH=$plugin_dir "$prefix/bin/h5fz" verify "$work/cmake-fortran.h5" "$work/pc-fortran.h5" \
    --lossless --require-filter
  # HDF5's own Fortran wrapper, where there is one: Debian's h5fc links libhdf5 statically into the
  # program, so the installed module's library mode must register with the program's copy
  if command -v h5fc >/dev/null 2>&1; then
    h5fc -I"$prefix/include" -o "$work/h5fc-fortran" "$program" -L"$prefix/$libdir" -lh5fz_fortran \
      -Wl,-rpath,"$prefix/$libdir" >"$work/h5fc-fortran.log" 2>&1 ||
      { cat "$work/h5fc-fortran.log"; die "build with h5fc (static libhdf5)"; }
    echo "  h5fc -I$prefix/include ... -lh5fz_fortran"
    HDF5_PLUGIN_PATH=$work/no-plugins "$work/h5fc-fortran" "$work/h5fc-fortran.h5" | tee "$work/h5fc-fortran.out"
    grep -q "h5fz_fortran: OK" "$work/h5fc-fortran.out" || die "the h5fc-built Fortran program"
    HDF5_PLUGIN_PATH=$plugin_dir "$prefix/bin/h5fz" verify "$work/cmake-fortran.h5" "$work/h5fc-fortran.h5" \
      --lossless --require-filter
  fi
fi

echo
echo "install_tree: OK"
