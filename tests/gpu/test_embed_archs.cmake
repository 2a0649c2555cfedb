# cmake -DSOURCE_DIR=... -DWORK_DIR=... -P test_embed_archs.cmake
# H5FZ_EMBED_ARCHS resolved as fusion/gpu/embed_archs.cmake resolves it,
# with a stand-in nvidia-smi for each case a machine can show: GPUs of two
# kinds (one twice), no GPU (nvidia-smi fails), a driver too old for the
# compute_cap field, no nvidia-smi at all; and all, a list, a bad request.
include(${SOURCE_DIR}/fusion/gpu/embed_archs.cmake)
file(MAKE_DIRECTORY ${WORK_DIR})
set(failures 0)

function(fake_smi name body)
  file(WRITE ${WORK_DIR}/${name}.sh "#!/bin/sh\n${body}\n")
  file(CHMOD ${WORK_DIR}/${name}.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endfunction()

function(expect request smi want)
  h5fz_resolve_embed_archs("${request}" "${smi}" got why)
  if(NOT "${got}" STREQUAL "${want}")
    message("FAIL: ${request} with ${smi}: got '${got}' (${why}), want '${want}'")
    math(EXPR f "${failures} + 1")
    set(failures ${f} PARENT_SCOPE)
  else()
    message("ok: ${request} with ${smi}: '${got}' (${why})")
  endif()
endfunction()

fake_smi(two_kinds "[ \"$1\" = --query-gpu=compute_cap ] || exit 2\nprintf '9.0\\n9.0\\n8.6\\n'")
fake_smi(no_gpu "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'; exit 9")
fake_smi(old_driver "echo 'Field \"compute_cap\" is not a valid field to query.'; exit 0")
fake_smi(empty "exit 0")

expect(native ${WORK_DIR}/two_kinds.sh "90;86")
expect(native ${WORK_DIR}/no_gpu.sh "")
expect(native ${WORK_DIR}/old_driver.sh "")
expect(native ${WORK_DIR}/empty.sh "")
expect(native "H5FZ_NVIDIA_SMI-NOTFOUND" "")
expect(native ${WORK_DIR}/absent.sh "")
expect(all ${WORK_DIR}/two_kinds.sh "all")
expect(all "" "all")
expect("90,80" ${WORK_DIR}/no_gpu.sh "90;80")
expect("90;120" "" "90;120")

# a request that is none of the forms stops the configure
foreach(bad "sm_90" "" "9.0" "native;90")
  file(WRITE ${WORK_DIR}/bad.cmake
       "include(${SOURCE_DIR}/fusion/gpu/embed_archs.cmake)\nh5fz_resolve_embed_archs(\"${bad}\" \"\" a w)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -P ${WORK_DIR}/bad.cmake RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "want native, all, or compute capabilities")
    message("FAIL: H5FZ_EMBED_ARCHS='${bad}' was accepted (${rc}: ${err})")
    math(EXPR failures "${failures} + 1")
  else()
    message("ok: H5FZ_EMBED_ARCHS='${bad}' refused")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "${failures} failures")
endif()
