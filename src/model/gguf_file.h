// GgufFile: a read-only, memory-mapped GGUF (v2/v3) file: metadata and
// tensor directory, every size checked against the file before use.
//
// Layout (little-endian): magic "GGUF", u32 version, u64 tensor_count,
// u64 kv_count, kv_count x {string key, u32 type, value}, tensor_count x
// {string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset},
// padding to `general.alignment` (default 32), then tensor data; each
// tensor's offset is relative to the data start and aligned.
//
// Values are decoded lazily from the mapping: arrays stay in place until a
// getter copies them out. The object keeps the mapping alive; TensorViews it
// returns point into it and share its lifetime through `file()`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "core/tensor_view.h"

namespace lineage::model {

enum class GgufType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};

// GGML tensor type ids as stored in the file (the ones Lineage reads; see
// docs/model-files.md, "Block types").
enum class GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ2_K = 10,
  kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kIQ4_NL = 20, kIQ4_XS = 23, kBF16 = 30, kMXFP4 = 39,
};

struct GgufValue {
  GgufType type = GgufType::kUint8;
  // Scalars (the one matching `type` is set; integers also fill `as_double`).
  int64_t as_int = 0;
  uint64_t as_uint = 0;
  double as_double = 0;
  bool as_bool = false;
  std::string_view as_string;          // points into the mapping
  // Arrays: element type, count and the first element's bytes in the mapping.
  GgufType elem_type = GgufType::kUint8;
  uint64_t count = 0;
  const uint8_t* elems = nullptr;
  const uint8_t* elems_end = nullptr;  // one past the array's last byte
};

struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;
  std::vector<int64_t> ne;             // ggml order: ne[0] is the contiguous dimension
  uint64_t offset = 0;                 // from the start of the data section
  int64_t nbytes = 0;
};

class GgufFile {
 public:
  // Opens and validates `path`: header, every key/value, the tensor directory,
  // and that every tensor's bytes lie inside the file.
  static Result<GgufFile> Open(const std::string& path);

  uint32_t version() const { return version_; }
  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<MappedFile>& file() const { return file_; }
  uint64_t alignment() const { return alignment_; }

  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return kv_; }
  const GgufValue* Find(std::string_view key) const;

  // Typed getters: NotFound when absent, InvalidArgument on a type mismatch.
  Result<int64_t> GetInt(std::string_view key) const;
  Result<double> GetFloat(std::string_view key) const;
  Result<bool> GetBool(std::string_view key) const;
  Result<std::string> GetString(std::string_view key) const;
  Result<std::vector<std::string>> GetStringArray(std::string_view key) const;
  Result<std::vector<int64_t>> GetIntArray(std::string_view key) const;
  Result<std::vector<double>> GetFloatArray(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* FindTensor(std::string_view name) const;
  // A view with the shape in PyTorch order (ggml ne reversed). Unsupported
  // tensor types are reported by name.
  Result<TensorView> Tensor(std::string_view name) const;

 private:
  std::shared_ptr<MappedFile> file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue, std::less<>> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

// Size in bytes of one element of a scalar GGUF type; 0 for string/array.
size_t GgufScalarSize(GgufType t);
// Maps a GGML type id to ours; nullopt when unsupported (the tensor is then
// refused by name when bound; see GgufFile::Tensor).
std::optional<DType> DTypeFromGgml(uint32_t ggml_type);
uint32_t GgmlFromDType(DType t);
std::string GgmlTypeName(uint32_t ggml_type);

}  // namespace lineage::model
