// SafetensorsFile: a read-only, memory-mapped .safetensors file.
//
// Layout: u64 little-endian N, then N bytes of JSON header
//   {"__metadata__": {str: str}, NAME: {"dtype": "BF16", "shape": [..],
//    "data_offsets": [begin, end]}, ...}
// then the data section; offsets are relative to its start (8 + N).
// Open() validates the header (every value read through JsonField, every
// size product overflow-checked) and that every tensor's byte range lies
// inside the file and matches its shape and dtype. Tensors of dtypes other than
// F32/F16/BF16 are listed but reported as unsupported when looked up as
// weights; Raw() gives any tensor's bytes.
// TensorViews point into the mapping, which `file()` keeps alive.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "core/tensor_view.h"
#include "model/json_field.h"

namespace lineage::model {

// A tensor's bytes as stored, of any dtype the header may name.
struct RawTensor {
  std::string dtype;  // as written in the header ("U8", "BF16", ...)
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  int64_t nbytes = 0;
};

class SafetensorsFile {
 public:
  static Result<SafetensorsFile> Open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<MappedFile>& file() const { return file_; }
  std::vector<std::string> names() const;
  bool Has(const std::string& name) const { return entries_.count(name) != 0; }
  // The tensor's view; NotFound / Unsupported errors name the file and tensor.
  Result<TensorView> Tensor(const std::string& name) const;
  // The tensor's bytes whatever its dtype (compressed-tensors' U8 codes).
  Result<RawTensor> Raw(const std::string& name) const;

 private:
  struct Entry {
    std::string dtype;             // as written in the header
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;   // absolute file offsets
  };
  static constexpr size_t kMaxTensorDims = 8;
  // The safetensors format's own cap on the JSON header (100 MB).
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;
  // Checks one header entry against the data section [data_start, +data_bytes).
  Status AddEntry(const std::string& name, const JsonField& e, uint64_t data_start, uint64_t data_bytes);

  std::shared_ptr<MappedFile> file_;
  std::map<std::string, Entry> entries_;
};

// Byte size of one element of a safetensors dtype name; 0 when unknown.
int64_t SafetensorsDTypeSize(const std::string& dtype);
// "F32" / "F16" / "BF16" for our plain dtypes.
const char* SafetensorsDTypeName(DType t);

}  // namespace lineage::model
