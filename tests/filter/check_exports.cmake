# The plugin's dynamic interface (run with cmake -DPLUGIN=<libh5fz.so> -P):
#  - it exports exactly H5PLget_plugin_type, H5PLget_plugin_info,
#    init_filter, h5fz_plugin_version, h5fz_plugin_prepared (the
#    collective API's containers, filter/h5fz_prepared.h) and
#    h5fz_plugin_settings (settings handed to the plugin's copy after its
#    snapshot, filter/h5fz_plugin_settings.h); the codec stays
#    private: no clash with another copy;
#  - it is not linked to libhdf5 (it binds to the loading libhdf5 at run
#    time; docs/filter.md, "Self-binding").
find_program(NM nm REQUIRED)
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only ${PLUGIN}
                OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${PLUGIN}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${syms}")
set(names "")
foreach(l ${lines})
  string(REGEX REPLACE "^.* " "" n "${l}")
  list(APPEND names ${n})
endforeach()
list(SORT names)
set(want H5PLget_plugin_info H5PLget_plugin_type h5fz_plugin_prepared h5fz_plugin_settings h5fz_plugin_version init_filter)
if(NOT names STREQUAL want)
  message(FATAL_ERROR "libh5fz.so exports [${names}], expected exactly [${want}]")
endif()
execute_process(COMMAND ${READELF} -d ${PLUGIN} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d failed on ${PLUGIN}")
endif()
if(dyn MATCHES "NEEDED[^\n]*libhdf5")
  message(FATAL_ERROR "libh5fz.so is linked to libhdf5; it must bind at run time:\n${dyn}")
endif()
message(STATUS "exports: ${names}; no libhdf5 in NEEDED")
