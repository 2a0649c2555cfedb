# lib/pkgconfig/h5fz.pc (included by package/CMakeLists.txt).
#
# Relocatable: prefix is found from the .pc file's own folder (${pcfiledir}),
# so `cmake --install build --prefix P` at install time gives a correct
# file whatever CMAKE_INSTALL_PREFIX was at configure time.
#
# HDF5: Requires names the pkg-config module of the HDF5 this build used,
# `hdf5-serial` on Debian (its plain `hdf5` module is an alternative that
# points at the MPI build once libhdf5-openmpi-dev is installed). Where no
# module matches the build's HDF5, its flags are written in directly.
set(H5FZ_PKGCONFIG_HDF5 "" CACHE STRING
    "pkg-config module h5fz.pc requires for HDF5 (empty: detect; 'none': write the build's HDF5 flags into h5fz.pc)")

set(h5fz_pc_requires "")
set(h5fz_pc_hdf5_cflags "")
set(h5fz_pc_hdf5_libs "")
set(h5fz_pc_hdf5 "${H5FZ_PKGCONFIG_HDF5}")
if(h5fz_pc_hdf5 STREQUAL "")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    foreach(candidate hdf5-serial hdf5)
      execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --cflags-only-I ${candidate}
                      OUTPUT_VARIABLE flags RESULT_VARIABLE rc ERROR_QUIET
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(rc EQUAL 0)
        # The module must describe the HDF5 of this build: the same headers.
        string(REGEX REPLACE "-I" "" dirs "${flags}")
        separate_arguments(dirs)
        set(same FALSE)
        foreach(d ${dirs})
          foreach(h ${HDF5_C_INCLUDE_DIRS})
            get_filename_component(d_real "${d}" REALPATH)
            get_filename_component(h_real "${h}" REALPATH)
            if(d_real STREQUAL h_real)
              set(same TRUE)
            endif()
          endforeach()
        endforeach()
        if(same)
          set(h5fz_pc_hdf5 ${candidate})
          break()
        endif()
      endif()
    endforeach()
  endif()
endif()
if(h5fz_pc_hdf5 STREQUAL "" OR h5fz_pc_hdf5 STREQUAL "none")
  foreach(d ${HDF5_C_INCLUDE_DIRS})
    string(APPEND h5fz_pc_hdf5_cflags " -I${d}")
  endforeach()
  foreach(l ${HDF5_C_LIBRARIES})
    string(APPEND h5fz_pc_hdf5_libs " ${l}")
  endforeach()
  message(STATUS "h5fz.pc: no pkg-config module matches this build's HDF5; its flags are written in")
else()
  set(h5fz_pc_requires "${h5fz_pc_hdf5}")
  message(STATUS "h5fz.pc: requires ${h5fz_pc_hdf5}")
endif()
foreach(def ${HDF5_C_DEFINITIONS})
  string(APPEND h5fz_pc_hdf5_cflags " ${def}")
endforeach()

# ${pcfiledir} is <prefix>/<libdir>/pkgconfig: one ".." per component.
set(h5fz_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(h5fz_pc_up "\${pcfiledir}")
string(REPLACE "/" ";" h5fz_pc_parts "${h5fz_pc_dir}")
foreach(part ${h5fz_pc_parts})
  string(APPEND h5fz_pc_up "/..")
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "h5fz.pc needs a CMAKE_INSTALL_LIBDIR relative to the prefix, got ${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${H5FZ_PLUGIN_INSTALL_DIR}")
  set(h5fz_pc_plugindir "${H5FZ_PLUGIN_INSTALL_DIR}")
else()
  set(h5fz_pc_plugindir "\${prefix}/${H5FZ_PLUGIN_INSTALL_DIR}")
endif()
if(H5FZ_INSTALL_SHARED)
  set(h5fz_pc_libs_private "Libs.private: -lz -lpthread -ldl -lm")
  set(h5fz_pc_libs_static "")
else()
  # A static archive needs its dependencies on every link line.
  set(h5fz_pc_libs_private "")
  set(h5fz_pc_libs_static " -lz -lpthread -ldl -lm")
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/h5fz.pc.in ${CMAKE_CURRENT_BINARY_DIR}/h5fz.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/h5fz.pc DESTINATION ${h5fz_pc_dir})
