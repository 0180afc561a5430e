// Small synthetic model state for the disk-tier tests: real PagedKv pages
// (tiny layout, 8-token pages) and a float-array recurrent blob, both filled
// from the tokens they stand for, so any restored payload can be checked
// against its own tokens independently of the tier that stored it.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cache/disk/codec.h"
#include "cache/disk/paged_kv_codec.h"
#include "cache/disk_tier.h"
#include "cache/kv_pages.h"
#include "fresh_dir.h"

namespace lineage::cache::disk::testing {

using lineage::testing::FreshDir;

inline KvLayout TestKvLayout() { return {/*layers*/ 2, /*kv heads*/ 1, /*head_dim*/ 4, /*page_tokens*/ 8}; }
inline constexpr int64_t kStateFloats = 24;

// Running hash of tokens [0, pos]: the "model" the test payloads come from.
inline std::vector<uint64_t> PrefixHashes(TokenSpan tokens) {
  std::vector<uint64_t> h(tokens.size());
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < tokens.size(); ++i) {
    x = (x ^ static_cast<uint32_t>(tokens[i])) * 0x100000001b3ull;
    x ^= x >> 29;
    h[i] = x;
  }
  return h;
}

inline float RowValue(uint64_t h, int64_t layer, int64_t kv, int64_t d) {
  return static_cast<float>((h >> ((layer * 8 + kv * 4 + d) % 48)) & 0xffff) / 16.0f;
}

class FloatBlob final : public RecurrentBlob {
 public:
  explicit FloatBlob(std::vector<float> v) : v_(std::move(v)) {}
  int64_t bytes() const override { return static_cast<int64_t>(v_.size()) * 4; }
  const std::vector<float>& values() const { return v_; }

 private:
  std::vector<float> v_;
};

// The state after tokens[0, n).
inline std::shared_ptr<const FloatBlob> ExpectedState(TokenSpan tokens, int64_t n) {
  const uint64_t h = PrefixHashes(tokens.first(static_cast<size_t>(n))).back();
  std::vector<float> v(kStateFloats);
  for (int64_t i = 0; i < kStateFloats; ++i) v[i] = static_cast<float>((h >> (i % 50)) & 0xfff) + static_cast<float>(n);
  return std::make_shared<FloatBlob>(std::move(v));
}

// KV for tokens, appended to `table` (which may already hold a prefix).
inline std::shared_ptr<const PagedKv> AppendKv(PageTable& table, TokenSpan tokens) {
  const KvLayout l = table.layout();
  const int64_t start = table.num_tokens();
  const int64_t n = static_cast<int64_t>(tokens.size()) - start;
  const std::vector<uint64_t> h = PrefixHashes(tokens);
  table.Reserve(n);
  for (int64_t pos = start; pos < start + n; ++pos) {
    for (int64_t layer = 0; layer < l.num_layers; ++layer) {
      std::vector<float> k(static_cast<size_t>(l.head_dim)), v(static_cast<size_t>(l.head_dim));
      for (int64_t d = 0; d < l.head_dim; ++d) {
        k[d] = RowValue(h[pos], layer, 0, d);
        v[d] = RowValue(h[pos], layer, 1, d);
      }
      table.WriteRow(layer, 0, pos, k.data(), v.data());
    }
  }
  table.Commit(n);
  return table.Share();
}

inline std::shared_ptr<const PagedKv> MakeKv(TokenSpan tokens) {
  PageTable t(TestKvLayout());
  return AppendKv(t, tokens);
}

// OK iff kv holds rows [0, n) of `tokens` and state (if any) follows them.
inline ::testing::AssertionResult PayloadMatches(TokenSpan tokens, int64_t n, const KvPtr& kv,
                                                 const RecurrentPtr& state, bool expect_state = true) {
  const auto* paged = dynamic_cast<const PagedKv*>(kv.get());
  if (paged == nullptr || paged->num_tokens() != n) return ::testing::AssertionFailure() << "KV length differs";
  const std::vector<uint64_t> h = PrefixHashes(tokens.first(static_cast<size_t>(n)));
  const KvLayout l = paged->layout();
  for (int64_t pos = 0; pos < n; ++pos) {
    const KvPage& page = *paged->pages()[static_cast<size_t>(pos / l.page_tokens)];
    for (int64_t layer = 0; layer < l.num_layers; ++layer) {
      const float* k = static_cast<const float*>(page.k(layer, 0)) + (pos % l.page_tokens) * l.head_dim;
      const float* v = static_cast<const float*>(page.v(layer, 0)) + (pos % l.page_tokens) * l.head_dim;
      for (int64_t d = 0; d < l.head_dim; ++d) {
        if (k[d] != RowValue(h[pos], layer, 0, d) || v[d] != RowValue(h[pos], layer, 1, d)) {
          return ::testing::AssertionFailure() << "KV row " << pos << " layer " << layer << " differs";
        }
      }
    }
  }
  if (!expect_state) return ::testing::AssertionSuccess();
  const auto* blob = dynamic_cast<const FloatBlob*>(state.get());
  if (blob == nullptr) return ::testing::AssertionFailure() << "no state";
  if (blob->values() != ExpectedState(tokens, n)->values()) return ::testing::AssertionFailure() << "state differs";
  return ::testing::AssertionSuccess();
}

class TestCodec final : public StateCodec {
 public:
  explicit TestCodec(uint8_t model = 1, bool recurrent = true) : recurrent_(recurrent) {
    fp_.bytes.fill(model);
  }
  const Key128& fingerprint() const override { return fp_; }
  int64_t page_tokens() const override { return TestKvLayout().page_tokens; }
  int64_t page_payload_bytes(int64_t rows) const override { return PagedKvPayloadBytes(TestKvLayout(), rows); }
  int64_t state_bytes() const override { return recurrent_ ? kStateFloats * 4 : 0; }
  Status EncodePage(const KvView& kv, int64_t p, int64_t rows, std::vector<uint8_t>* out) const override {
    return EncodePagedKvPage(TestKvLayout(), kv, p, rows, out);
  }
  std::unique_ptr<KvBuilder> NewKvBuilder(int64_t n) const override { return NewPagedKvBuilder(TestKvLayout(), n); }
  Status EncodeState(const RecurrentBlob& s, std::vector<uint8_t>* out) const override {
    const auto* b = dynamic_cast<const FloatBlob*>(&s);
    if (b == nullptr || b->bytes() != state_bytes()) return InvalidArgument("not a test state");
    const size_t at = out->size();
    out->resize(at + static_cast<size_t>(b->bytes()));
    std::memcpy(out->data() + at, b->values().data(), static_cast<size_t>(b->bytes()));
    return Status::Ok();
  }
  Result<RecurrentPtr> DecodeState(std::span<const uint8_t> bytes) const override {
    if (static_cast<int64_t>(bytes.size()) != state_bytes()) return Corrupt("test state size");
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return RecurrentPtr(std::make_shared<FloatBlob>(std::move(v)));
  }

 private:
  Key128 fp_;
  bool recurrent_;
};

// A record for entry `id` over `tokens` with checkpoints at `points`.
inline DiskRecord MakeRecord(EntryId id, const Tokens& tokens, std::vector<int64_t> points = {}, bool anchor = false,
                             KvPtr kv = nullptr) {
  DiskRecord r;
  r.id = id;
  r.tokens = tokens;
  r.kv = kv ? kv : MakeKv(tokens);
  r.state = ExpectedState(tokens, static_cast<int64_t>(tokens.size()));
  for (int64_t n : points) r.checkpoints.push_back({n, PointKind::kGuard, ExpectedState(tokens, n)});
  r.anchor = anchor;
  return r;
}

// Bytes of every regular file under `dir` whose path contains `part`.
inline int64_t BytesUnder(const std::string& dir, const std::string& part = "") {
  int64_t total = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (f.is_regular_file() && f.path().string().find(part) != std::string::npos) {
      total += static_cast<int64_t>(f.file_size());
    }
  }
  return total;
}

inline int64_t FilesUnder(const std::string& dir, const std::string& ext) {
  int64_t n = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (f.is_regular_file() && f.path().extension() == ext) ++n;
  }
  return n;
}

}  // namespace lineage::cache::disk::testing
