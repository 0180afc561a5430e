#include "model/safetensors_file.h"

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/checked_math.h"

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
  if (header_bytes > kMaxHeaderBytes)
    return Corrupt(path + ": header length " + std::to_string(header_bytes) + " is over the format's limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  if (header_bytes > size - 8)
    return Corrupt(path + ": header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes; truncated file?)");
  const char* text = reinterpret_cast<const char*>(s.file_->data() + 8);
  nlohmann::json header = nlohmann::json::parse(text, text + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Corrupt(path + ": bad header JSON");
  const uint64_t data_start = 8 + header_bytes;
  const uint64_t data_bytes = size - data_start;
  LINEAGE_RETURN_IF_ERROR(JsonField(header, path).ForEachMember([&](const std::string& name, const JsonField& e) {
    return name == "__metadata__" ? Status::Ok() : s.AddEntry(name, e, data_start, data_bytes);
  }));
  return s;
}

Status SafetensorsFile::AddEntry(const std::string& name, const JsonField& e, uint64_t data_start,
                                 uint64_t data_bytes) {
  auto bad = [&](const std::string& what) { return Corrupt(e.file() + ": tensor '" + name + "': " + what); };
  if (!e.is_object()) return e.Error("an object with dtype, shape and data_offsets");
  Entry entry;
  LINEAGE_ASSIGN_OR_RETURN(entry.dtype, e["dtype"].String());
  // A dimension above 2^40 cannot be backed by a file; the product is checked too.
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  int64_t numel = 1;
  LINEAGE_RETURN_IF_ERROR(e["shape"].ForEachItem([&](const JsonField& d) -> Status {
    if (entry.shape.size() >= kMaxTensorDims) return e["shape"].Error("at most " + std::to_string(kMaxTensorDims) + " dimensions");
    LINEAGE_ASSIGN_OR_RETURN(int64_t v, d.Int(0, kMaxDim));
    std::optional<int64_t> n = CheckedMul(numel, v);
    if (!n) return bad("the element count of its shape overflows 64 bits");
    numel = *n;
    entry.shape.push_back(v);
    return Status::Ok();
  }));
  const JsonField off = e["data_offsets"];
  if (!off.is_array() || off.raw()->size() != 2) return off.Error("[begin, end]");
  LINEAGE_ASSIGN_OR_RETURN(int64_t b, off.Item(0).Int(0, std::numeric_limits<int64_t>::max()));
  LINEAGE_ASSIGN_OR_RETURN(int64_t en, off.Item(1).Int(0, std::numeric_limits<int64_t>::max()));
  if (b > en) return bad("data_offsets are reversed");
  if (static_cast<uint64_t>(en) > data_bytes)
    return bad("data ends at byte " + std::to_string(data_start + static_cast<uint64_t>(en)) + " but the file has " +
               std::to_string(data_start + data_bytes) + " (truncated file?)");
  const int64_t elem = SafetensorsDTypeSize(entry.dtype);
  std::optional<int64_t> need = CheckedMul(numel, elem);
  if (elem > 0 && (!need || en - b != *need))
    return bad("holds " + std::to_string(en - b) + " bytes but shape and dtype " + entry.dtype + " need " +
               (need ? std::to_string(*need) : std::string("more than 2^63")));
  entry.begin = data_start + static_cast<uint64_t>(b);
  entry.end = data_start + static_cast<uint64_t>(en);
  entries_.emplace(name, std::move(entry));
  return Status::Ok();
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : entries_) out.push_back(name);
  return out;
}

Result<RawTensor> SafetensorsFile::Raw(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFound(path() + ": tensor '" + name + "' is missing");
  const Entry& e = it->second;
  return RawTensor{e.dtype, e.shape, file_->data() + e.begin, static_cast<int64_t>(e.end - e.begin)};
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
