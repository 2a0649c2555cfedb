# The Fortran module for `cmake --install` (included by package/CMakeLists.txt
# after pkgconfig.cmake), where the build made it (api/fortran: gfortran and
# HDF5's Fortran library found; otherwise nothing of it is installed):
#
#   include/h5fz.mod                the compiled module (`use h5fz`); a .mod
#                                   is the compiler's own format: a program
#                                   compiles with the same gfortran version
#   lib/libh5fz_fortran.so          its procedures (libh5fz_fortran.a with
#                                   H5FZ_INSTALL_SHARED=OFF); links
#                                   libh5fz_dataset and HDF5's Fortran library
#   target h5fz::fortran            find_package(h5fz COMPONENTS fortran)
#   lib/pkgconfig/h5fz-fortran.pc   pkg-config h5fz-fortran (requires h5fz)
#
# Made, as the C libraries are, from the object files of the build's own
# library (h5fz_fortran_module), so the module is compiled once.
if(NOT TARGET h5fz_fortran_module)
  set(h5fz_fortran_hdf5_files "")
  return()
endif()
enable_language(Fortran) # per folder (api/fortran): the library links as Fortran

get_target_property(h5fz_f_moddir h5fz_fortran_module Fortran_MODULE_DIRECTORY)
get_target_property(h5fz_f_hdf5_libs h5fz_fortran_module H5FZ_HDF5_FORTRAN_LIBRARIES)
get_target_property(h5fz_f_hdf5_incs h5fz_fortran_module H5FZ_HDF5_FORTRAN_INCLUDE_DIRS)
get_target_property(h5fz_f_hdf5_defs h5fz_fortran_module H5FZ_HDF5_FORTRAN_DEFINITIONS)
if(NOT h5fz_f_hdf5_defs)
  set(h5fz_f_hdf5_defs "")
endif()
# for h5fzConfig.cmake's check that the HDF5 files still exist
set(h5fz_fortran_hdf5_files "${h5fz_f_hdf5_libs};${h5fz_f_hdf5_incs}")

add_library(h5fz_fortran_installed ${h5fz_lib_kind} $<TARGET_OBJECTS:h5fz_fortran_module>)
add_library(h5fz::fortran ALIAS h5fz_fortran_installed)
add_dependencies(h5fz_fortran_installed h5fz_fortran_module)
# The HDF5 Fortran library and its hdf5.mod by absolute path, as
# h5fz::dataset names the C library: no second search that could find
# another HDF5 (docs/install.md).
target_include_directories(h5fz_fortran_installed INTERFACE
  $<BUILD_INTERFACE:${h5fz_f_moddir}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  ${h5fz_f_hdf5_incs})
target_compile_definitions(h5fz_fortran_installed INTERFACE ${h5fz_f_hdf5_defs})
target_link_libraries(h5fz_fortran_installed PUBLIC h5fz_dataset_installed ${h5fz_f_hdf5_libs})
set_target_properties(h5fz_fortran_installed PROPERTIES
  OUTPUT_NAME h5fz_fortran
  LINKER_LANGUAGE Fortran
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  INSTALL_RPATH "$ORIGIN"
  EXPORT_NAME fortran)
if(H5FZ_INSTALL_SHARED)
  target_link_options(h5fz_fortran_installed PRIVATE "LINKER:--no-undefined")
endif()

install(TARGETS h5fz_fortran_installed
  EXPORT h5fzTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${h5fz_f_moddir}/h5fz.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# h5fz-fortran.pc: the module folder, HDF5's module folder and the HDF5
# Fortran libraries that h5fz.pc's HDF5 (libhdf5 itself) does not bring.
set(h5fz_pc_fortran_cflags "")
foreach(d ${h5fz_f_hdf5_incs})
  string(APPEND h5fz_pc_fortran_cflags " -I${d}")
endforeach()
foreach(def ${h5fz_f_hdf5_defs})
  string(APPEND h5fz_pc_fortran_cflags " ${def}")
endforeach()
set(h5fz_pc_fortran_libs "")
foreach(l ${h5fz_f_hdf5_libs})
  if(NOT l IN_LIST HDF5_C_LIBRARIES)
    string(APPEND h5fz_pc_fortran_libs " ${l}")
  endif()
endforeach()
set(h5fz_pc_fortran_compiler "${CMAKE_Fortran_COMPILER_ID} ${CMAKE_Fortran_COMPILER_VERSION}")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/h5fz-fortran.pc.in ${CMAKE_CURRENT_BINARY_DIR}/h5fz-fortran.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/h5fz-fortran.pc DESTINATION ${h5fz_pc_dir})
