#include "tools/gguf_writer.h"

#include <cstring>

namespace lineage::model {
namespace {

template <typename T>
void Put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void PutString(std::vector<uint8_t>& out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

}  // namespace

void GgufWriter::Key(const std::string& key, GgufType type) {
  PutString(kv_bytes_, key);
  Put<uint32_t>(kv_bytes_, static_cast<uint32_t>(type));
  ++kv_count_;
}

template <typename T>
void GgufWriter::AddScalar(const std::string& key, GgufType type, T v) {
  Key(key, type);
  Put<T>(kv_bytes_, v);
}

template <typename T>
void GgufWriter::AddArray(const std::string& key, GgufType elem_type, const std::vector<T>& v) {
  Key(key, GgufType::kArray);
  Put<uint32_t>(kv_bytes_, static_cast<uint32_t>(elem_type));
  Put<uint64_t>(kv_bytes_, v.size());
  for (const T& x : v) Put<T>(kv_bytes_, x);
}

void GgufWriter::AddUint8(const std::string& k, uint8_t v) { AddScalar(k, GgufType::kUint8, v); }
void GgufWriter::AddInt8(const std::string& k, int8_t v) { AddScalar(k, GgufType::kInt8, v); }
void GgufWriter::AddUint16(const std::string& k, uint16_t v) { AddScalar(k, GgufType::kUint16, v); }
void GgufWriter::AddInt16(const std::string& k, int16_t v) { AddScalar(k, GgufType::kInt16, v); }
void GgufWriter::AddUint32(const std::string& k, uint32_t v) {
  AddScalar(k, GgufType::kUint32, v);
  if (k == "general.alignment" && v != 0) alignment_ = v;
}
void GgufWriter::AddInt32(const std::string& k, int32_t v) { AddScalar(k, GgufType::kInt32, v); }
void GgufWriter::AddUint64(const std::string& k, uint64_t v) { AddScalar(k, GgufType::kUint64, v); }
void GgufWriter::AddInt64(const std::string& k, int64_t v) { AddScalar(k, GgufType::kInt64, v); }
void GgufWriter::AddFloat32(const std::string& k, float v) { AddScalar(k, GgufType::kFloat32, v); }
void GgufWriter::AddFloat64(const std::string& k, double v) { AddScalar(k, GgufType::kFloat64, v); }
void GgufWriter::AddBool(const std::string& k, bool v) { AddScalar<uint8_t>(k, GgufType::kBool, v ? 1 : 0); }
void GgufWriter::AddString(const std::string& k, const std::string& v) {
  Key(k, GgufType::kString);
  PutString(kv_bytes_, v);
}
void GgufWriter::AddStringArray(const std::string& k, const std::vector<std::string>& v) {
  Key(k, GgufType::kArray);
  Put<uint32_t>(kv_bytes_, static_cast<uint32_t>(GgufType::kString));
  Put<uint64_t>(kv_bytes_, v.size());
  for (const std::string& s : v) PutString(kv_bytes_, s);
}
void GgufWriter::AddUint8Array(const std::string& k, const std::vector<uint8_t>& v) { AddArray(k, GgufType::kUint8, v); }
void GgufWriter::AddInt8Array(const std::string& k, const std::vector<int8_t>& v) { AddArray(k, GgufType::kInt8, v); }
void GgufWriter::AddUint16Array(const std::string& k, const std::vector<uint16_t>& v) { AddArray(k, GgufType::kUint16, v); }
void GgufWriter::AddInt16Array(const std::string& k, const std::vector<int16_t>& v) { AddArray(k, GgufType::kInt16, v); }
void GgufWriter::AddUint32Array(const std::string& k, const std::vector<uint32_t>& v) { AddArray(k, GgufType::kUint32, v); }
void GgufWriter::AddInt32Array(const std::string& k, const std::vector<int32_t>& v) { AddArray(k, GgufType::kInt32, v); }
void GgufWriter::AddUint64Array(const std::string& k, const std::vector<uint64_t>& v) { AddArray(k, GgufType::kUint64, v); }
void GgufWriter::AddInt64Array(const std::string& k, const std::vector<int64_t>& v) { AddArray(k, GgufType::kInt64, v); }
void GgufWriter::AddFloat32Array(const std::string& k, const std::vector<float>& v) { AddArray(k, GgufType::kFloat32, v); }
void GgufWriter::AddFloat64Array(const std::string& k, const std::vector<double>& v) { AddArray(k, GgufType::kFloat64, v); }
void GgufWriter::AddBoolArray(const std::string& k, const std::vector<bool>& v) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  AddArray(k, GgufType::kBool, bytes);
}

void GgufWriter::AddTensor(const std::string& name, std::vector<int64_t> ne, uint32_t ggml_type,
                           uint64_t nbytes, Producer producer) {
  tensors_.push_back({name, std::move(ne), ggml_type, nbytes, std::move(producer)});
}

Status GgufWriter::WriteFile(const std::string& path) const {
  std::vector<uint8_t> head;
  head.insert(head.end(), {'G', 'G', 'U', 'F'});
  Put<uint32_t>(head, 3);
  Put<uint64_t>(head, tensors_.size());
  Put<uint64_t>(head, kv_count_);
  head.insert(head.end(), kv_bytes_.begin(), kv_bytes_.end());
  auto align = [&](uint64_t x) { return (x + alignment_ - 1) / alignment_ * alignment_; };
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    PutString(head, t.name);
    Put<uint32_t>(head, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) Put<uint64_t>(head, static_cast<uint64_t>(d));
    Put<uint32_t>(head, t.ggml_type);
    Put<uint64_t>(head, offset);
    offset = align(offset + t.nbytes);
  }

  FileSink sink(path);
  LINEAGE_RETURN_IF_ERROR(sink.Open());
  LINEAGE_RETURN_IF_ERROR(sink.Write(head.data(), head.size()));
  LINEAGE_RETURN_IF_ERROR(sink.WriteZeros(align(head.size()) - head.size()));
  for (const Tensor& t : tensors_) {
    const uint64_t start = sink.bytes_written();
    LINEAGE_RETURN_IF_ERROR(t.producer(sink));
    const uint64_t wrote = sink.bytes_written() - start;
    if (wrote != t.nbytes)
      return Internal(path + ": tensor '" + t.name + "' producer wrote " + std::to_string(wrote) +
                      " bytes, expected " + std::to_string(t.nbytes));
    LINEAGE_RETURN_IF_ERROR(sink.WriteZeros(align(wrote) - wrote));
  }
  return sink.Commit();
}

}  // namespace lineage::model
