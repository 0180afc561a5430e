// Re-emitting a GGUF file with edits, for tests that need a file a writer of
// this project would never produce (an MTP block, a corrupt key, another
// tensor layout): every key and tensor of the source is copied unless the
// caller's filter takes it over.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/gguf_file.h"
#include "tools/gguf_writer.h"

namespace lineage::model::testing_util {

// Copies every key of `g` into `w` except those `skip` returns true for.
inline Status CopyGgufMetadata(const GgufFile& g, GgufWriter& w,
                               const std::function<bool(const std::string&)>& skip = {}) {
  for (const auto& [key, v] : g.metadata()) {
    if (skip && skip(key)) continue;
    switch (v.type) {
      case GgufType::kUint32: w.AddUint32(key, static_cast<uint32_t>(v.as_uint)); break;
      case GgufType::kInt32: w.AddInt32(key, static_cast<int32_t>(v.as_int)); break;
      case GgufType::kFloat32: w.AddFloat32(key, static_cast<float>(v.as_double)); break;
      case GgufType::kBool: w.AddBool(key, v.as_bool); break;
      case GgufType::kString: w.AddString(key, std::string(v.as_string)); break;
      case GgufType::kArray:
        if (v.elem_type == GgufType::kString) {
          w.AddStringArray(key, *g.GetStringArray(key));
        } else if (v.elem_type == GgufType::kUint32) {
          const std::vector<int64_t> values = *g.GetIntArray(key);
          std::vector<uint32_t> x(values.begin(), values.end());
          w.AddUint32Array(key, x);
        } else if (v.elem_type == GgufType::kBool) {
          const std::vector<int64_t> values = *g.GetIntArray(key);
          w.AddBoolArray(key, std::vector<bool>(values.begin(), values.end()));
        } else if (v.elem_type == GgufType::kInt32) {
          const std::vector<int64_t> values = *g.GetIntArray(key);
          std::vector<int32_t> x(values.begin(), values.end());
          w.AddInt32Array(key, x);
        } else {
          return Internal("unexpected array type in " + key);
        }
        break;
      default:
        return Internal("unexpected value type in " + key);
    }
  }
  return Status::Ok();
}

// Copies every tensor of `g` into `w` (bytes as stored) except those `skip`
// returns true for. `g` must outlive w.WriteFile.
inline Status CopyGgufTensors(const GgufFile& g, GgufWriter& w,
                              const std::function<bool(const std::string&)>& skip = {}) {
  for (const GgufTensorInfo& t : g.tensors()) {
    if (skip && skip(t.name)) continue;
    auto view = g.Tensor(t.name);
    if (!view.ok()) return view.status();
    const TensorView v = *view;
    w.AddTensor(t.name, t.ne, t.ggml_type, static_cast<uint64_t>(t.nbytes),
                [v](FileSink& sink) { return sink.Write(v.data, static_cast<size_t>(v.nbytes)); });
  }
  return Status::Ok();
}

}  // namespace lineage::model::testing_util
