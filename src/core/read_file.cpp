#include "core/read_file.h"

namespace lineage {

Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes, FileEnv* env) {
  return env->ReadBounded(path, max_bytes);
}

}  // namespace lineage
