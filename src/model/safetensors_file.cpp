#include "model/safetensors_file.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace lineage::model {

int64_t SafetensorsDTypeSize(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

const char* SafetensorsDTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    default: return "?";
  }
}

Result<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  LINEAGE_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::Open(path));
  SafetensorsFile s;
  s.file_ = std::make_shared<MappedFile>(std::move(mapped));
  const uint64_t size = s.file_->size();
  if (size < 8) return Corrupt(path + ": file too short for a safetensors header (" + std::to_string(size) + " bytes)");
  uint64_t header_bytes;
  std::memcpy(&header_bytes, s.file_->data(), 8);
  if (header_bytes > size - 8)
    return Corrupt(path + ": header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes; truncated file?)");
  const char* text = reinterpret_cast<const char*>(s.file_->data() + 8);
  nlohmann::json header = nlohmann::json::parse(text, text + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Corrupt(path + ": bad header JSON");
  const uint64_t data_start = 8 + header_bytes;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string& name = it.key();
    const nlohmann::json& e = it.value();
    auto bad = [&](const std::string& what) { return Corrupt(path + ": tensor '" + name + "': " + what); };
    if (!e.is_object() || !e.contains("dtype") || !e["dtype"].is_string() || !e.contains("shape") ||
        !e["shape"].is_array() || !e.contains("data_offsets") || !e["data_offsets"].is_array() ||
        e["data_offsets"].size() != 2)
      return bad("header entry lacks dtype, shape or data_offsets");
    Entry entry;
    entry.dtype = e["dtype"].get<std::string>();
    int64_t numel = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned()) return bad("shape has a non-integer dimension");
      uint64_t v = d.get<uint64_t>();
      if (v > (1ull << 40) || (v != 0 && static_cast<uint64_t>(numel) > (1ull << 62) / v))
        return bad("implausible dimension " + std::to_string(v));
      entry.shape.push_back(static_cast<int64_t>(v));
      numel *= static_cast<int64_t>(v);
    }
    const auto& off = e["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) return bad("data_offsets are not integers");
    uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
    if (b > en) return bad("data_offsets are reversed");
    if (en > size - data_start)
      return bad("data ends at byte " + std::to_string(data_start + en) + " but the file has " +
                 std::to_string(size) + " (truncated file?)");
    int64_t elem = SafetensorsDTypeSize(entry.dtype);
    if (elem > 0 && en - b != static_cast<uint64_t>(numel * elem))
      return bad("holds " + std::to_string(en - b) + " bytes but shape and dtype " + entry.dtype + " need " +
                 std::to_string(numel * elem));
    entry.begin = data_start + b;
    entry.end = data_start + en;
    s.entries_.emplace(name, std::move(entry));
  }
  return s;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : entries_) out.push_back(name);
  return out;
}

Result<TensorView> SafetensorsFile::Tensor(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFound(path() + ": tensor '" + name + "' is missing");
  const Entry& e = it->second;
  TensorView v;
  if (e.dtype == "F32") v.dtype = DType::kF32;
  else if (e.dtype == "F16") v.dtype = DType::kF16;
  else if (e.dtype == "BF16") v.dtype = DType::kBF16;
  else return Unsupported(path() + ": tensor '" + name + "' has dtype " + e.dtype + " (supported: F32, F16, BF16)");
  v.name = name;
  v.shape = e.shape;
  v.data = file_->data() + e.begin;
  v.nbytes = static_cast<int64_t>(e.end - e.begin);
  return v;
}

}  // namespace lineage::model
