#include "model/mxfp4_checkpoint.h"

#include "core/quant_blocks.h"

namespace lineage::model {

Result<bool> ReadMxfp4Quantization(const JsonField& config) {
  // At the top, or in a multimodal checkpoint's text_config.
  JsonField q = config["quantization_config"];
  if (!q.present() && config["text_config"].is_object()) q = config["text_config"]["quantization_config"];
  if (!q.present()) return false;
  LINEAGE_ASSIGN_OR_RETURN(std::string method, q["quant_method"].String());
  std::string fmt;
  if (q["format"].present()) {
    LINEAGE_ASSIGN_OR_RETURN(fmt, q["format"].String());
  }
  if (method == "compressed-tensors" && fmt == "mxfp4-pack-quantized") return true;
  const std::string what = "quant_method '" + method + "'" + (fmt.empty() ? "" : " format '" + fmt + "'");
  return Unsupported(q.file() + ": " + q.path() + ": " + what +
                     " is not read (supported: unquantized weights, or compressed-tensors mxfp4-pack-quantized)");
}

Mxfp4Names Mxfp4NamesFor(const std::string& weight_name) {
  const std::string suffix = ".weight";
  const size_t n = weight_name.size();
  if (n <= suffix.size() || weight_name.compare(n - suffix.size(), suffix.size(), suffix) != 0) return {};
  return {weight_name + "_packed", weight_name + "_scale"};
}

Result<std::vector<uint8_t>> RepackMxfp4(const std::string& name, const RawTensor& packed, const RawTensor& scale) {
  auto bad = [&](const std::string& what) { return InvalidArgument("tensor '" + name + "': " + what); };
  if (packed.dtype != "U8" || scale.dtype != "U8")
    return bad("MXFP4 codes and scales must be U8 (have " + packed.dtype + " and " + scale.dtype + ")");
  if (packed.shape.size() != 2 || scale.shape.size() != 2) return bad("MXFP4 codes and scales must be 2-D");
  const int64_t rows = packed.shape[0], cols = 2 * packed.shape[1];
  if (cols % quant::kQK != 0) return bad("an MXFP4 row of " + std::to_string(cols) + " values is not whole blocks of 32");
  const int64_t blocks = cols / quant::kQK;
  if (scale.shape[0] != rows || scale.shape[1] != blocks)
    return bad("MXFP4 scales of shape [" + std::to_string(scale.shape[0]) + ", " + std::to_string(scale.shape[1]) +
               "] do not match codes for [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
  std::vector<uint8_t> out(static_cast<size_t>(rows * blocks) * sizeof(quant::BlockMXFP4));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* src = packed.data + (r * blocks + b) * 16;  // elements 2i, 2i+1 in byte i
      auto* dst = reinterpret_cast<quant::BlockMXFP4*>(out.data() + (r * blocks + b) * sizeof(quant::BlockMXFP4));
      dst->e = scale.data[r * blocks + b];
      auto code = [&](int i) { return (src[i / 2] >> (4 * (i % 2))) & 15; };
      for (int j = 0; j < 16; ++j) dst->qs[j] = static_cast<uint8_t>(code(j) | code(j + 16) << 4);
    }
  }
  return out;
}

void UnpackMxfp4Row(const uint8_t* blocks, int64_t cols, uint8_t* codes, uint8_t* scales) {
  for (int64_t b = 0; b < cols / quant::kQK; ++b) {
    const auto* blk = reinterpret_cast<const quant::BlockMXFP4*>(blocks + b * sizeof(quant::BlockMXFP4));
    scales[b] = blk->e;
    auto code = [&](int i) { return i < 16 ? blk->qs[i] & 15 : blk->qs[i - 16] >> 4; };
    for (int i = 0; i < 16; ++i) codes[b * 16 + i] = static_cast<uint8_t>(code(2 * i) | code(2 * i + 1) << 4);
  }
}

}  // namespace lineage::model
