# Which GPU architectures the build compiles the embedded kernels for
# (H5FZ_EMBED_ARCHS, docs/gpu.md "Kernels embedded at build time"):
#
#   native  (default) the GPUs of the build machine, as nvidia-smi reports
#           them; none found: nothing is compiled at build time, the JIT
#           compiles each kernel on first use and its disk cache keeps it
#   all     every architecture of the kernel-class registry (packaging,
#           CI: a kernel source that does not compile fails the build)
#   90;80   these compute capabilities (also "90,80")
#
# Kept apart from fusion/CMakeLists.txt so tests/gpu/test_embed_archs.cmake
# can run the functions with a stand-in nvidia-smi.

# The compute capabilities of this machine's GPUs (9.0 -> 90), unique, in
# nvidia-smi's order, into out; empty when smi is not there, fails, or
# prints something other than "M.m" lines (no GPU, no driver, a driver too
# old for --query-gpu=compute_cap, 510 and newer have it). why: one line
# saying what was found.
function(h5fz_gpu_archs_present smi out why)
  set(archs "")
  if(NOT smi OR NOT EXISTS "${smi}")
    set(${out} "" PARENT_SCOPE)
    set(${why} "no nvidia-smi found" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${smi}" --query-gpu=compute_cap --format=csv,noheader
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_QUIET TIMEOUT 20)
  if(NOT rc EQUAL 0)
    set(${out} "" PARENT_SCOPE)
    set(${why} "nvidia-smi found no usable GPU (exit status ${rc})" PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  foreach(line ${lines})
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    if(NOT line MATCHES "^([1-9][0-9]?)\\.([0-9])$")
      set(${out} "" PARENT_SCOPE)
      set(${why} "nvidia-smi printed '${line}', not a compute capability (driver older than 510?)" PARENT_SCOPE)
      return()
    endif()
    math(EXPR a "${CMAKE_MATCH_1} * 10 + ${CMAKE_MATCH_2}")
    list(APPEND archs ${a})
  endforeach()
  list(REMOVE_DUPLICATES archs)
  set(${out} "${archs}" PARENT_SCOPE)
  if(archs)
    set(${why} "GPUs of compute capability ${archs} found by nvidia-smi" PARENT_SCOPE)
  else()
    set(${why} "nvidia-smi lists no GPU" PARENT_SCOPE)
  endif()
endfunction()

# Resolve the H5FZ_EMBED_ARCHS request into out: "all", a list of compute
# capabilities, or empty (nothing to embed); why: one line for the
# configure message. A request that is none of the three forms is a
# configure error.
function(h5fz_resolve_embed_archs request smi out why)
  string(REPLACE "," ";" request "${request}")
  if(request STREQUAL "all")
    set(${out} all PARENT_SCOPE)
    set(${why} "H5FZ_EMBED_ARCHS=all: every architecture of the registry" PARENT_SCOPE)
  elseif(request STREQUAL "native")
    h5fz_gpu_archs_present("${smi}" archs found)
    set(${out} "${archs}" PARENT_SCOPE)
    set(${why} "H5FZ_EMBED_ARCHS=native: ${found}" PARENT_SCOPE)
  else()
    foreach(a ${request})
      if(NOT a MATCHES "^[1-9][0-9][0-9]?$" OR a LESS 30 OR a GREATER 199)
        message(FATAL_ERROR "H5FZ_EMBED_ARCHS='${request}': want native, all, or compute capabilities such as 90;80")
      endif()
    endforeach()
    if(NOT request)
      message(FATAL_ERROR "H5FZ_EMBED_ARCHS is empty: want native, all, or compute capabilities such as 90;80")
    endif()
    set(${out} "${request}" PARENT_SCOPE)
    set(${why} "H5FZ_EMBED_ARCHS=${request}" PARENT_SCOPE)
  endif()
endfunction()
