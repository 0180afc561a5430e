// Re-serializes a GGUF file through GgufWriter with some metadata replaced:
// the way tests make a file that is well-formed but declares absurd values
// (a u64 where the original had a u32, a key the original lacked).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "model/gguf_file.h"
#include "tools/gguf_writer.h"

namespace lineage::model::testing_util {

// key -> what to write instead of the original value (or in addition, for a
// key the file lacks). An empty function drops the key.
using GgufOverrides = std::map<std::string, std::function<void(GgufWriter&)>>;

inline void CopyValue(const GgufFile& g, const std::string& key, const GgufValue& v, GgufWriter& w) {
  switch (v.type) {
    case GgufType::kUint8: w.AddUint8(key, static_cast<uint8_t>(v.as_uint)); return;
    case GgufType::kInt8: w.AddInt8(key, static_cast<int8_t>(v.as_int)); return;
    case GgufType::kUint16: w.AddUint16(key, static_cast<uint16_t>(v.as_uint)); return;
    case GgufType::kInt16: w.AddInt16(key, static_cast<int16_t>(v.as_int)); return;
    case GgufType::kUint32: w.AddUint32(key, static_cast<uint32_t>(v.as_uint)); return;
    case GgufType::kInt32: w.AddInt32(key, static_cast<int32_t>(v.as_int)); return;
    case GgufType::kUint64: w.AddUint64(key, v.as_uint); return;
    case GgufType::kInt64: w.AddInt64(key, v.as_int); return;
    case GgufType::kFloat32: w.AddFloat32(key, static_cast<float>(v.as_double)); return;
    case GgufType::kFloat64: w.AddFloat64(key, v.as_double); return;
    case GgufType::kBool: w.AddBool(key, v.as_bool); return;
    case GgufType::kString: w.AddString(key, std::string(v.as_string)); return;
    case GgufType::kArray: break;
  }
  if (v.elem_type == GgufType::kString) {
    w.AddStringArray(key, *g.GetStringArray(key));
  } else if (v.elem_type == GgufType::kFloat32) {
    std::vector<double> d = *g.GetFloatArray(key);
    w.AddFloat32Array(key, std::vector<float>(d.begin(), d.end()));
  } else if (v.elem_type == GgufType::kFloat64) {
    w.AddFloat64Array(key, *g.GetFloatArray(key));
  } else {
    std::vector<int64_t> i = *g.GetIntArray(key);
    switch (v.elem_type) {
      case GgufType::kInt32: w.AddInt32Array(key, std::vector<int32_t>(i.begin(), i.end())); return;
      case GgufType::kUint32: w.AddUint32Array(key, std::vector<uint32_t>(i.begin(), i.end())); return;
      case GgufType::kInt64: w.AddInt64Array(key, i); return;
      case GgufType::kBool: w.AddBoolArray(key, std::vector<bool>(i.begin(), i.end())); return;
      default: FAIL() << "array type of '" << key << "' not handled by the test";
    }
  }
}

// Writes `src` to `dst` with `overrides` applied; tensors are copied as they are.
inline void RewriteGguf(const std::string& src, const std::string& dst, const GgufOverrides& overrides) {
  auto g = GgufFile::Open(src);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  GgufWriter w;
  for (const auto& [key, v] : g->metadata()) {
    auto it = overrides.find(key);
    if (it == overrides.end()) {
      CopyValue(*g, key, v, w);
    } else if (it->second) {
      it->second(w);
    }
  }
  for (const auto& [key, fn] : overrides)
    if (!g->Find(key) && fn) fn(w);
  for (const GgufTensorInfo& t : g->tensors()) {
    const void* data = g->Tensor(t.name)->data;
    const uint64_t n = static_cast<uint64_t>(t.nbytes);
    w.AddTensor(t.name, t.ne, t.ggml_type, n, [data, n](FileSink& sink) { return sink.Write(data, n); });
  }
  Status s = w.WriteFile(dst);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

}  // namespace lineage::model::testing_util
