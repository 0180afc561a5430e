// ModelSource: where a command-line tool gets its model — a file or
// directory on disk (memory-mapped by the model loader), or a random-weight
// model of a named shape built in memory (for benchmarks and demos before any
// file exists; same weights as `lineage mkmodel` would write for the seed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "model/weights.h"

namespace lineage::engine {

struct ModelSource {
  std::string path;             // non-empty: load from disk
  std::string arch = "qwen3_5"; // in-memory: architecture name
  std::string shape;            // in-memory: shape name (model/shapes.h)
  std::string dtype = "bf16";   // in-memory: weight dtype
  int64_t vocab = 0;            // in-memory: vocabulary override (0: the shape's)
  uint64_t seed = 1;
  bool file_order = false;      // from disk: Q4_K / Q6_K kept as stored (model::LoadOptions)
};

Result<std::shared_ptr<const model::Model>> OpenModel(const ModelSource& source);

// One line naming the model: where it came from, arch, dtype, size.
std::string DescribeModel(const model::Model& m);

}  // namespace lineage::engine
