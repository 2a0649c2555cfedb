# embed_ops.cmake - the op headers of device_ops/ as one C source with two
# parallel arrays (include name, text), handed to NVRTC as headers, so no
# source tree is needed at run time.
#   cmake -DOUTPUT=out.c -DHEADERS="a.h|b.h" -P embed_ops.cmake
string(REPLACE "|" ";" HEADERS "${HEADERS}")
set(names "")
set(texts "")
set(i 0)
foreach(h ${HEADERS})
  get_filename_component(base ${h} NAME)
  file(READ "${h}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " bytes "${bytes}")
  string(APPEND texts "static const char op_text_${i}[] = {\n  ${bytes}0x00\n};\n")
  string(APPEND names "  \"${base}\",\n")
  math(EXPR i "${i} + 1")
endforeach()
set(ptrs "")
math(EXPR last "${i} - 1")
foreach(k RANGE ${last})
  string(APPEND ptrs "  op_text_${k},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
  "/* Generated from the device_ops headers by device_ops/embed_ops.cmake; do not edit. */\n"
  "#include <stddef.h>\n${texts}\n"
  "static const char *const op_names[] = {\n${names}};\n"
  "static const char *const op_texts[] = {\n${ptrs}};\n"
  "void h5fz_embedded_headers(size_t *count, const char *const **names, const char *const **sources)\n"
  "{\n  *count = sizeof op_names / sizeof op_names[0];\n  *names = op_names;\n  *sources = op_texts;\n}\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
