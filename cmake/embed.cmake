# Writes OUTPUT: a C++ source defining SYMBOL (the bytes of INPUT) and
# SYMBOL##Size, so that a page is part of the binary with nothing to install.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${name} at build time (cmake/embed.cmake).\n"
  "#include <cstddef>\n\nnamespace lineage::server {\n"
  "extern const unsigned char ${SYMBOL}[] = {${bytes} 0};\n"
  "extern const size_t ${SYMBOL}Size = sizeof(${SYMBOL}) - 1;\n"
  "}  // namespace lineage::server\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
