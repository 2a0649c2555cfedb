# embed_text.cmake - turn a text file into a C source holding it as a
# NUL-terminated char array (no xxd needed).
#   cmake -DINPUT=in.txt -DOUTPUT=out.c -DSYMBOL=name -P embed_text.cmake
if(NOT INPUT OR NOT OUTPUT OR NOT SYMBOL)
  message(FATAL_ERROR "embed_text.cmake: INPUT, OUTPUT and SYMBOL are required")
endif()
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes per line
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "/* Generated from ${INPUT} by planner/embed_text.cmake; do not edit. */\n"
  "const char ${SYMBOL}[] = {\n  ${bytes}0x00\n};\n")
# replace only when changed, so dependents do not rebuild needlessly
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different
                "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
