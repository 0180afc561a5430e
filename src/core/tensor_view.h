// TensorView: a typed, read-only view of weights stored elsewhere (usually a
// memory-mapped model file). It never owns its bytes.
//
// Shapes are in PyTorch order, row-major: a linear layer's weight is
// [out_features, in_features] and row r is `in_features` contiguous elements
// (a GGUF tensor with ggml ne = {in, out} has exactly this layout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace lineage {

struct TensorView {
  std::string name;             // name in the file, for error messages
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;   // PyTorch order
  const void* data = nullptr;   // points into the mapped file
  int64_t nbytes = 0;
  // The tiled (prefill) path multiplies this matrix with activations
  // quantised to 16 bits, not 8: the layer's recurrent state integrates its
  // outputs, so their rounding stays in every later token (docs/engine.md).
  bool wide_activations = false;

  int64_t rows() const { return shape.empty() ? 0 : shape.front(); }
  int64_t cols() const { return shape.empty() ? 0 : shape.back(); }  // for 2-D weights
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  const uint8_t* row_ptr(int64_t r) const {
    return static_cast<const uint8_t*>(data) + r * RowBytes(dtype, cols());
  }
  bool valid() const { return data != nullptr; }
};

// v, multiplied in the tiled path with 16-bit activations (wide_activations).
inline TensorView WithWideActivations(TensorView v) {
  v.wide_activations = true;
  return v;
}

// Decodes element range [begin, begin + n) of `t` (flat index) into fp32.
void DecodeToFloat(const TensorView& t, int64_t begin, int64_t n, float* out);

}  // namespace lineage
