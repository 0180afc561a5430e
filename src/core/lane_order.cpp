#include "core/lane_order.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/quant_blocks.h"
#include "core/quant_unpack.h"

namespace lineage::quant {
namespace {

LaneWords MakeWords(DType t) {
  LaneWords w{};
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 16; ++i) {
      const int element = LaneElement(t, r, i, 0) / 4, file = RegisterSlot(t, r, 4 * i) / 4;
      w.file_word[element] = static_cast<uint8_t>(file);
      w.element_word[file] = static_cast<uint8_t>(element);
      w.register_word[16 * r + i] = static_cast<uint8_t>(element);
    }
  return w;
}

using unpack_detail::Load32;
using unpack_detail::Store32;

inline __m256i Lo4Of(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(15)); }
// Byte i: bits 4..5 of v's byte i moved to bits `to`..`to` + 1.
inline __m256i TopBitsTo(__m256i v, int to) {
  const __m256i moved = to > 4 ? _mm256_slli_epi16(v, to - 4) : to < 4 ? _mm256_srli_epi16(v, 4 - to) : v;
  return _mm256_and_si256(moved, _mm256_set1_epi8(static_cast<char>(3 << to)));
}

// The codes (0..15 or 0..63, no offset) of a file-order block in element
// order, by the fast decoders' unpack (quant_unpack.h).
void GetCodes(DType t, const uint8_t* block, int8_t* c) {
  Unpacked u;
  if (t == DType::kQ4_K) {
    UnpackBlock<DType::kQ4_K>(block, &u);
    std::memcpy(c, u.q, 256);
    return;
  }
  UnpackBlock<DType::kQ6_K>(block, &u);
  for (int k = 0; k < 256; k += 32)
    Store32(c + k, _mm256_add_epi8(Load32(reinterpret_cast<const uint8_t*>(u.q + k)), _mm256_set1_epi8(32)));
}

// The inverse: codes in element order into the block's code bytes. Q4_K:
// byte 32 p + l of qs holds element 64 p + l in its low nibble, 64 p + 32 +
// l in its high one. Q6_K: ql byte 64 h + l holds the low 4 bits of
// element 128 h + l and (high nibble) 128 h + 64 + l; qh byte 32 h + l the
// top 2 bits of element 128 h + 32 m + l at bit 2 m.
void SetCodes(DType t, const int8_t* c8, uint8_t* block) {
  const auto* c = reinterpret_cast<const uint8_t*>(c8);
  if (t == DType::kQ4_K) {
    auto& b = *reinterpret_cast<BlockQ4_K*>(block);
    for (int p = 0; p < 4; ++p)
      Store32(reinterpret_cast<int8_t*>(b.qs + 32 * p),
              _mm256_or_si256(Load32(c + 64 * p), _mm256_slli_epi16(Load32(c + 64 * p + 32), 4)));
    return;
  }
  auto& b = *reinterpret_cast<BlockQ6_K*>(block);
  for (int h = 0; h < 2; ++h) {
    for (int k = 0; k < 2; ++k) {
      const __m256i low = Lo4Of(Load32(c + 128 * h + 32 * k)), high = Lo4Of(Load32(c + 128 * h + 64 + 32 * k));
      Store32(reinterpret_cast<int8_t*>(b.ql + 64 * h + 32 * k), _mm256_or_si256(low, _mm256_slli_epi16(high, 4)));
    }
    __m256i high = _mm256_setzero_si256();
    for (int m = 0; m < 4; ++m) high = _mm256_or_si256(high, TopBitsTo(Load32(c + 128 * h + 32 * m), 2 * m));
    Store32(reinterpret_cast<int8_t*>(b.qh + 32 * h), high);
  }
}

// Moves the codes of blocks [begin, end) between the orders: a lane's four
// codes are four elements in a row in both, so each move is a 4-byte word
// (8 gathers of 8 words).
void Permute(DType lane_type, bool to_lanes, const uint8_t* src, int64_t begin, int64_t end, uint8_t* dst) {
  const DType file_type = FileTypeOf(lane_type);
  const LaneWords& w = WordsOf(lane_type);
  // Gather indices: word k of the result comes from word from[k].
  alignas(32) int32_t from[64];
  for (int k = 0; k < 64; ++k) from[k] = to_lanes ? w.element_word[k] : w.file_word[k];
  const int64_t bytes = Info(file_type).block_bytes;
  alignas(32) int8_t in_codes[256], out_codes[256];
  for (int64_t b = begin; b < end; ++b) {
    const uint8_t* in = src + b * bytes;
    uint8_t* out = dst + b * bytes;
    GetCodes(file_type, in, in_codes);
    for (int k = 0; k < 8; ++k) {
      const __m256i at = _mm256_load_si256(reinterpret_cast<const __m256i*>(from + 8 * k));
      Store32(out_codes + 32 * k, _mm256_i32gather_epi32(reinterpret_cast<const int*>(in_codes), at, 4));
    }
    if (out != in) std::memcpy(out, in, static_cast<size_t>(bytes));
    SetCodes(file_type, out_codes, out);
  }
}

// Permute over n blocks, split between threads when there are many: the
// loader copies every Q4_K / Q6_K matrix once.
void PermuteAll(DType lane_type, bool to_lanes, const uint8_t* src, int64_t n, uint8_t* dst) {
  constexpr int64_t kBlocksPerThread = 1 << 16;
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = std::clamp<int64_t>(n / kBlocksPerThread, 1, cores);
  if (threads == 1) return Permute(lane_type, to_lanes, src, 0, n, dst);
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i)
    pool.emplace_back([=] { Permute(lane_type, to_lanes, src, n * i / threads, n * (i + 1) / threads, dst); });
  Permute(lane_type, to_lanes, src, 0, n / threads, dst);
  for (std::thread& t : pool) t.join();
}

}  // namespace

const LaneWords& WordsOf(DType lane_type) {
  static const LaneWords q4 = MakeWords(DType::kQ4_K_LANES), q6 = MakeWords(DType::kQ6_K_LANES);
  return lane_type == DType::kQ6_K_LANES ? q6 : q4;
}

void ToLaneOrder(DType file_type, const uint8_t* src, int64_t n, uint8_t* dst) {
  PermuteAll(LaneTypeOf(file_type), true, src, n, dst);
}

void FromLaneOrder(DType lane_type, const uint8_t* src, int64_t n, uint8_t* dst) {
  PermuteAll(lane_type, false, src, n, dst);
}

void PermuteToLanes(DType lane_type, const int8_t* x, int64_t cols, int8_t* out) {
  const LaneWords& w = WordsOf(lane_type);
  for (int64_t b = 0; b < cols; b += 256)
    for (int k = 0; k < 64; ++k) std::memcpy(out + b + 4 * k, x + b + 4 * w.register_word[k], 4);
}

}  // namespace lineage::quant
