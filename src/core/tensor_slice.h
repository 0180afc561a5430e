// RowSlice: a view of consecutive rows of a weight, without copying. Rows of
// a TensorView are contiguous and whole blocks of its dtype, so rows
// [first, first + n) of a matrix, or of a 3-D tensor [A, B, cols] read as
// A * B rows (an expert's matrix is rows [e B, (e + 1) B)), are one span.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor_view.h"

namespace lineage {

// REQUIRES: t.valid(), 0 <= first, first + n <= the number of rows of t.
inline TensorView RowSlice(const TensorView& t, int64_t first, int64_t n, const std::string& name_suffix = "") {
  const int64_t row_bytes = RowBytes(t.dtype, t.cols());
  TensorView out;
  out.name = name_suffix.empty() ? t.name : t.name + name_suffix;
  out.dtype = t.dtype;
  out.shape = {n, t.cols()};
  out.data = static_cast<const uint8_t*>(t.data) + first * row_bytes;
  out.nbytes = n * row_bytes;
  return out;
}

}  // namespace lineage
