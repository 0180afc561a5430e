// SafetensorsWriter: writes tensors as one .safetensors file or as shards
// `model-0000i-of-0000n.safetensors` plus `model.safetensors.index.json`
// ({"metadata": {"total_size": N}, "weight_map": {name: shard}}), the
// layout of Hugging Face checkpoints. Data is streamed tensor by tensor from
// producers. The JSON header is padded with spaces to a multiple of 8 bytes
// and records "__metadata__": {"format": "pt"}. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "tools/file_sink.h"

namespace lineage::model {

class SafetensorsWriter {
 public:
  using Producer = std::function<Status(FileSink& sink)>;
  // `dtype` is F32, F16 or BF16; the producer writes numel * size bytes.
  void AddTensor(const std::string& name, DType dtype, std::vector<int64_t> shape, Producer producer);
  // A U8 tensor (compressed-tensors' codes and scales); numel bytes.
  void AddBytes(const std::string& name, std::vector<int64_t> shape, Producer producer);

  // Everything in `path`.
  Status WriteFile(const std::string& path) const;
  // Shards of at most `max_shard_bytes` of data each (a larger tensor gets a
  // shard of its own) in directory `dir`, plus the index. Returns the shard count.
  Result<int> WriteSharded(const std::string& dir, uint64_t max_shard_bytes) const;

 private:
  struct Tensor {
    std::string name;
    std::string dtype;  // the header's name
    std::vector<int64_t> shape;
    uint64_t nbytes;
    Producer producer;
  };
  Status WriteShard(const std::string& path, size_t begin, size_t end) const;
  std::vector<Tensor> tensors_;
};

}  // namespace lineage::model
