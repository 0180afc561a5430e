#include "model/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>

#include "core/checked_math.h"

namespace lineage::model {
namespace {

constexpr uint64_t kMaxStringBytes = 1ull << 30;
constexpr uint64_t kMaxDims = 4;

// Bounds-checked little-endian reader over the mapping.
class Cursor {
 public:
  Cursor(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end), begin_(begin) {}
  uint64_t pos() const { return static_cast<uint64_t>(p_ - begin_); }
  const uint8_t* ptr() const { return p_; }
  bool Skip(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) return false;
    p_ += n;
    return true;
  }
  template <typename T>
  bool Read(T* out) {
    if (sizeof(T) > static_cast<size_t>(end_ - p_)) return false;
    std::memcpy(out, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool ReadString(std::string_view* out) {
    uint64_t n;
    if (!Read(&n) || n > kMaxStringBytes || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
};

bool ValidType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

// Reads one scalar of type t into v.
bool ReadScalar(Cursor& c, GgufType t, GgufValue* v) {
  auto as_int = [&](auto x) {
    v->as_int = static_cast<int64_t>(x);
    v->as_uint = static_cast<uint64_t>(x);
    v->as_double = static_cast<double>(x);
    return true;
  };
  switch (t) {
    case GgufType::kUint8: { uint8_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kInt8: { int8_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kUint16: { uint16_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kInt16: { int16_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kUint32: { uint32_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kInt32: { int32_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kUint64: { uint64_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kInt64: { int64_t x; return c.Read(&x) && as_int(x); }
    case GgufType::kFloat32: { float x; if (!c.Read(&x)) return false; v->as_double = x; return true; }
    case GgufType::kFloat64: { double x; if (!c.Read(&x)) return false; v->as_double = x; return true; }
    case GgufType::kBool: {
      uint8_t x;
      if (!c.Read(&x) || x > 1) return false;
      v->as_bool = x != 0;
      v->as_int = x;
      return true;
    }
    case GgufType::kString: return c.ReadString(&v->as_string);
    case GgufType::kArray: return false;
  }
  return false;
}

}  // namespace

size_t GgufScalarSize(GgufType t) {
  switch (t) {
    case GgufType::kUint8: case GgufType::kInt8: case GgufType::kBool: return 1;
    case GgufType::kUint16: case GgufType::kInt16: return 2;
    case GgufType::kUint32: case GgufType::kInt32: case GgufType::kFloat32: return 4;
    case GgufType::kUint64: case GgufType::kInt64: case GgufType::kFloat64: return 8;
    default: return 0;
  }
}

namespace {
// GGML type id <-> DType, one table for both directions.
struct GgmlPair {
  GgmlType ggml;
  DType dtype;
};
constexpr GgmlPair kGgmlPairs[] = {
    {GgmlType::kF32, DType::kF32},       {GgmlType::kF16, DType::kF16},     {GgmlType::kBF16, DType::kBF16},
    {GgmlType::kQ4_0, DType::kQ4_0},     {GgmlType::kQ4_1, DType::kQ4_1},   {GgmlType::kQ5_0, DType::kQ5_0},
    {GgmlType::kQ5_1, DType::kQ5_1},     {GgmlType::kQ8_0, DType::kQ8_0},   {GgmlType::kQ2_K, DType::kQ2_K},
    {GgmlType::kQ3_K, DType::kQ3_K},     {GgmlType::kQ4_K, DType::kQ4_K},   {GgmlType::kQ5_K, DType::kQ5_K},
    {GgmlType::kQ6_K, DType::kQ6_K},     {GgmlType::kIQ4_NL, DType::kIQ4_NL}, {GgmlType::kIQ4_XS, DType::kIQ4_XS},
    {GgmlType::kMXFP4, DType::kMXFP4},
};
// The two lane-order types (core/lane_order.h) exist in memory only.
static_assert(std::size(kGgmlPairs) == kNumDTypes - 2, "every file DType has a GGML id");
}  // namespace

std::optional<DType> DTypeFromGgml(uint32_t t) {
  for (const GgmlPair& p : kGgmlPairs)
    if (static_cast<uint32_t>(p.ggml) == t) return p.dtype;
  return std::nullopt;
}

uint32_t GgmlFromDType(DType t) {
  for (const GgmlPair& p : kGgmlPairs)
    if (p.dtype == t) return static_cast<uint32_t>(p.ggml);
  return 0;
}

std::string GgmlTypeName(uint32_t t) {
  static const char* kNames[] = {"F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1",
                                 "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K",
                                 "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",
                                 "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M",
                                 "BF16", "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0",
                                 "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  if (t < sizeof(kNames) / sizeof(kNames[0])) return kNames[t];
  return "type " + std::to_string(t);
}

Result<GgufFile> GgufFile::Open(const std::string& path) {
  LINEAGE_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::Open(path));
  GgufFile g;
  g.file_ = std::make_shared<MappedFile>(std::move(mapped));
  const uint8_t* begin = g.file_->data();
  const uint64_t size = g.file_->size();
  Cursor c(begin, begin + size);
  auto corrupt = [&](const std::string& what) {
    return Corrupt(path + ": " + what + " (at byte " + std::to_string(c.pos()) + " of " +
                   std::to_string(size) + ")");
  };

  char magic[4];
  if (!c.Read(&magic)) return corrupt("file too short for a GGUF header");
  if (std::memcmp(magic, "GGUF", 4) != 0) return corrupt("not a GGUF file (bad magic)");
  if (!c.Read(&g.version_)) return corrupt("truncated header");
  if (g.version_ < 2 || g.version_ > 3)
    return Unsupported(path + ": GGUF version " + std::to_string(g.version_) + " (2 and 3 are supported)");
  uint64_t n_tensors, n_kv;
  if (!c.Read(&n_tensors) || !c.Read(&n_kv)) return corrupt("truncated header");
  // Each key/value takes at least 8+0+4+1 bytes and each tensor entry at least 8+4+4+8.
  if (n_kv > size / 13 || n_tensors > size / 24) return corrupt("implausible key or tensor count");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string_view key;
    if (!c.ReadString(&key)) return corrupt("truncated key of metadata entry " + std::to_string(i));
    uint32_t type;
    if (!c.Read(&type) || !ValidType(type))
      return corrupt("metadata '" + std::string(key) + "': bad value type");
    GgufValue v;
    v.type = static_cast<GgufType>(type);
    if (v.type == GgufType::kArray) {
      uint32_t et;
      if (!c.Read(&et) || !ValidType(et) || static_cast<GgufType>(et) == GgufType::kArray)
        return corrupt("metadata '" + std::string(key) + "': bad array element type");
      v.elem_type = static_cast<GgufType>(et);
      if (!c.Read(&v.count)) return corrupt("metadata '" + std::string(key) + "': truncated array");
      v.elems = c.ptr();
      if (v.elem_type == GgufType::kString) {
        for (uint64_t j = 0; j < v.count; ++j) {
          std::string_view s;
          if (!c.ReadString(&s))
            return corrupt("metadata '" + std::string(key) + "': truncated string " + std::to_string(j));
        }
      } else {
        uint64_t es = GgufScalarSize(v.elem_type);
        if (v.count > size / es || !c.Skip(v.count * es))
          return corrupt("metadata '" + std::string(key) + "': array runs past the end of the file");
      }
      v.elems_end = c.ptr();
    } else if (!ReadScalar(c, v.type, &v)) {
      return corrupt("metadata '" + std::string(key) + "': truncated or invalid value");
    }
    if (!g.kv_.emplace(std::string(key), v).second)
      return corrupt("metadata key '" + std::string(key) + "' appears twice");
  }

  if (const GgufValue* a = g.Find("general.alignment")) {
    if (a->type != GgufType::kUint32 || a->as_uint == 0 || (a->as_uint & (a->as_uint - 1)) != 0)
      return corrupt("general.alignment must be a power of two (u32)");
    g.alignment_ = a->as_uint;
  }

  // The count is bounded by the file size only; reserving it whole would let
  // a corrupt count allocate gigabytes before the first entry fails to parse.
  g.tensors_.reserve(std::min<uint64_t>(n_tensors, 1u << 16));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    std::string_view name;
    if (!c.ReadString(&name)) return corrupt("truncated name of tensor " + std::to_string(i));
    t.name = std::string(name);
    uint32_t n_dims;
    if (!c.Read(&n_dims) || n_dims == 0 || n_dims > kMaxDims)
      return corrupt("tensor '" + t.name + "': bad number of dimensions");
    int64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne;
      if (!c.Read(&ne)) return corrupt("tensor '" + t.name + "': truncated shape");
      if (ne == 0 || ne > (1ull << 40) || static_cast<uint64_t>(numel) > (1ull << 62) / ne)
        return corrupt("tensor '" + t.name + "': implausible dimension " + std::to_string(ne));
      t.ne.push_back(static_cast<int64_t>(ne));
      numel *= static_cast<int64_t>(ne);
    }
    if (!c.Read(&t.ggml_type) || !c.Read(&t.offset))
      return corrupt("tensor '" + t.name + "': truncated entry");
    if (auto dt = DTypeFromGgml(t.ggml_type)) {
      int64_t block = Info(*dt).block_elements;
      if (t.ne[0] % block != 0)
        return corrupt("tensor '" + t.name + "': row of " + std::to_string(t.ne[0]) +
                       " elements is not a multiple of the " + GgmlTypeName(t.ggml_type) +
                       " block size " + std::to_string(block));
      std::optional<int64_t> nbytes = CheckedMul(numel / block, Info(*dt).block_bytes);
      if (!nbytes) return corrupt("tensor '" + t.name + "': byte size overflows 64 bits");
      t.nbytes = *nbytes;
    } else {
      t.nbytes = -1;  // unknown type: reported when the tensor is used
    }
    if (t.offset % g.alignment_ != 0)
      return corrupt("tensor '" + t.name + "': data offset " + std::to_string(t.offset) + " is not aligned");
    if (!g.tensor_index_.emplace(t.name, g.tensors_.size()).second)
      return corrupt("tensor '" + t.name + "' appears twice");
    g.tensors_.push_back(std::move(t));
  }

  g.data_offset_ = (c.pos() + g.alignment_ - 1) / g.alignment_ * g.alignment_;
  for (const GgufTensorInfo& t : g.tensors_) {
    if (t.nbytes < 0) continue;
    if (!RangeInside(g.data_offset_, t.offset, size) ||
        !RangeInside(g.data_offset_ + t.offset, static_cast<uint64_t>(t.nbytes), size))
      return Corrupt(path + ": tensor '" + t.name + "' needs " + std::to_string(t.nbytes) + " bytes at offset " +
                     std::to_string(t.offset) + " of the data section starting at byte " +
                     std::to_string(g.data_offset_) + ", but the file has " + std::to_string(size) +
                     " (truncated file?)");
  }
  // GGUF stores no byte sizes: a type or shape that does not match the bytes
  // the writer laid out shows as a tensor running into the next one.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : g.tensors_)
    if (t.nbytes >= 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 0; i + 1 < by_offset.size(); ++i) {
    const GgufTensorInfo& t = *by_offset[i];
    const GgufTensorInfo& next = *by_offset[i + 1];
    if (t.offset + static_cast<uint64_t>(t.nbytes) > next.offset)
      return Corrupt(path + ": tensor '" + t.name + "' (" + GgmlTypeName(t.ggml_type) + ", " +
                     std::to_string(t.nbytes) + " bytes for its shape) overlaps tensor '" + next.name +
                     "' at data offset " + std::to_string(next.offset) +
                     ": its type or shape does not match its bytes");
  }
  return g;
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

namespace {
bool IsIntType(GgufType t) {
  return t != GgufType::kFloat32 && t != GgufType::kFloat64 && t != GgufType::kString &&
         t != GgufType::kArray && t != GgufType::kBool;
}
}  // namespace

Result<int64_t> GgufFile::GetInt(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (!IsIntType(v->type) && v->type != GgufType::kBool)
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not an integer");
  return v->as_int;
}

Result<double> GgufFile::GetFloat(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (v->type == GgufType::kString || v->type == GgufType::kArray || v->type == GgufType::kBool)
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not a number");
  return v->as_double;
}

Result<bool> GgufFile::GetBool(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (v->type != GgufType::kBool)
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not a bool");
  return v->as_bool;
}

Result<std::string> GgufFile::GetString(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (v->type != GgufType::kString)
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not a string");
  return std::string(v->as_string);
}

Result<std::vector<std::string>> GgufFile::GetStringArray(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (v->type != GgufType::kArray || v->elem_type != GgufType::kString)
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not a string array");
  std::vector<std::string> out;
  out.reserve(v->count);
  Cursor c(v->elems, v->elems_end);
  for (uint64_t i = 0; i < v->count; ++i) {
    std::string_view s;
    if (!c.ReadString(&s)) return Internal("validated array no longer parses");
    out.emplace_back(s);
  }
  return out;
}

Result<std::vector<int64_t>> GgufFile::GetIntArray(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (v->type != GgufType::kArray || !(IsIntType(v->elem_type) || v->elem_type == GgufType::kBool))
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not an integer array");
  std::vector<int64_t> out(v->count);
  Cursor c(v->elems, v->elems_end);
  for (uint64_t i = 0; i < v->count; ++i) {
    GgufValue e;
    if (!ReadScalar(c, v->elem_type, &e)) return Internal("validated array no longer parses");
    out[i] = e.as_int;
  }
  return out;
}

Result<std::vector<double>> GgufFile::GetFloatArray(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v) return NotFound(path() + ": metadata key '" + std::string(key) + "' is missing");
  if (v->type != GgufType::kArray || v->elem_type == GgufType::kString || v->elem_type == GgufType::kBool)
    return InvalidArgument(path() + ": metadata '" + std::string(key) + "' is not a numeric array");
  std::vector<double> out(v->count);
  Cursor c(v->elems, v->elems_end);
  for (uint64_t i = 0; i < v->count; ++i) {
    GgufValue e;
    if (!ReadScalar(c, v->elem_type, &e)) return Internal("validated array no longer parses");
    out[i] = e.as_double;
  }
  return out;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<TensorView> GgufFile::Tensor(std::string_view name) const {
  const GgufTensorInfo* t = FindTensor(name);
  if (!t) return NotFound(path() + ": tensor '" + std::string(name) + "' is missing");
  auto dt = DTypeFromGgml(t->ggml_type);
  if (!dt)
    return Unsupported(path() + ": tensor '" + t->name + "' has type " + GgmlTypeName(t->ggml_type) +
                       " (id " + std::to_string(t->ggml_type) +
                       "; supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, "
                       "Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4)");
  TensorView v;
  v.name = t->name;
  v.dtype = *dt;
  v.shape.assign(t->ne.rbegin(), t->ne.rend());
  v.data = file_->data() + data_offset_ + t->offset;
  v.nbytes = t->nbytes;
  return v;
}

}  // namespace lineage::model
