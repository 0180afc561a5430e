// GgufWriter: builds a GGUF v3 file (the layout gguf_file.h reads):
// metadata of every GGUF value type, a tensor directory, padding to the
// alignment (32 unless general.alignment says otherwise), then tensor data
// streamed tensor by tensor from producers, so a model larger than RAM can
// be written. Keys and tensors keep the order they were added in.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "tools/file_sink.h"
#include "model/gguf_file.h"

namespace lineage::model {

class GgufWriter {
 public:
  // Scalars.
  void AddUint8(const std::string& key, uint8_t v);
  void AddInt8(const std::string& key, int8_t v);
  void AddUint16(const std::string& key, uint16_t v);
  void AddInt16(const std::string& key, int16_t v);
  void AddUint32(const std::string& key, uint32_t v);
  void AddInt32(const std::string& key, int32_t v);
  void AddUint64(const std::string& key, uint64_t v);
  void AddInt64(const std::string& key, int64_t v);
  void AddFloat32(const std::string& key, float v);
  void AddFloat64(const std::string& key, double v);
  void AddBool(const std::string& key, bool v);
  void AddString(const std::string& key, const std::string& v);
  // Arrays.
  void AddStringArray(const std::string& key, const std::vector<std::string>& v);
  void AddUint8Array(const std::string& key, const std::vector<uint8_t>& v);
  void AddInt8Array(const std::string& key, const std::vector<int8_t>& v);
  void AddUint16Array(const std::string& key, const std::vector<uint16_t>& v);
  void AddInt16Array(const std::string& key, const std::vector<int16_t>& v);
  void AddUint32Array(const std::string& key, const std::vector<uint32_t>& v);
  void AddInt32Array(const std::string& key, const std::vector<int32_t>& v);
  void AddUint64Array(const std::string& key, const std::vector<uint64_t>& v);
  void AddInt64Array(const std::string& key, const std::vector<int64_t>& v);
  void AddFloat32Array(const std::string& key, const std::vector<float>& v);
  void AddFloat64Array(const std::string& key, const std::vector<double>& v);
  void AddBoolArray(const std::string& key, const std::vector<bool>& v);

  // Writes exactly the tensor's bytes to the sink.
  using Producer = std::function<Status(FileSink& sink)>;
  // `ne` in ggml order (ne[0] contiguous). `nbytes` must equal what the
  // producer writes; WriteFile checks it.
  void AddTensor(const std::string& name, std::vector<int64_t> ne, uint32_t ggml_type, uint64_t nbytes,
                 Producer producer);

  Status WriteFile(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t ggml_type;
    uint64_t nbytes;
    Producer producer;
  };
  template <typename T>
  void AddScalar(const std::string& key, GgufType type, T v);
  template <typename T>
  void AddArray(const std::string& key, GgufType elem_type, const std::vector<T>& v);
  void Key(const std::string& key, GgufType type);

  std::vector<uint8_t> kv_bytes_;  // serialized key/value pairs
  uint64_t kv_count_ = 0;
  uint64_t alignment_ = 32;
  std::vector<Tensor> tensors_;
};

}  // namespace lineage::model
