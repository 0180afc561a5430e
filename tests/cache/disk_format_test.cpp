// The disk format (docs/disk-format.md): keys, entry and blob files round
// trip, and every damaged section is rejected.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <gtest/gtest.h>

#include <cstring>

#include "cache/disk/blob_file.h"
#include "cache/disk/entry_file.h"
#include "cache/disk/keys.h"
#include "disk_test_codec.h"

namespace lineage::cache::disk::testing {
namespace {

Key128 Fp(uint8_t v) {
  Key128 k;
  k.bytes.fill(v);
  return k;
}

Tokens Seq(int64_t n, TokenId first = 1) {
  Tokens t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = first + static_cast<TokenId>(i);
  return t;
}

// The key chain written out directly from the document's grammar.
Key128 DocKey(const Key128& fp, uint32_t page, const Tokens& t, int64_t p, int64_t rows) {
  uint8_t seed[20];
  std::memcpy(seed, fp.bytes.data(), 16);
  std::memcpy(seed + 16, &page, 4);
  XXH128_hash_t h = XXH3_128bits(seed, 20);
  for (int64_t q = 0; q <= p; ++q) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    const uint32_t r = q == p ? static_cast<uint32_t>(rows) : page;
    std::vector<uint8_t> buf(c.digest, c.digest + 16);
    buf.insert(buf.end(), reinterpret_cast<const uint8_t*>(&r), reinterpret_cast<const uint8_t*>(&r) + 4);
    const auto* tok = reinterpret_cast<const uint8_t*>(t.data() + q * page);
    buf.insert(buf.end(), tok, tok + r * 4);
    h = XXH3_128bits(buf.data(), buf.size());
  }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  Key128 k;
  std::memcpy(k.bytes.data(), c.digest, 16);
  return k;
}

TEST(DiskKeys, FollowTheDocumentedChain) {
  const Tokens t = Seq(21);
  const KeyChain chain(Fp(7), 8, t);
  ASSERT_EQ(chain.num_pages(), 3);
  EXPECT_EQ(chain.PageKey(0), DocKey(Fp(7), 8, t, 0, 8));
  EXPECT_EQ(chain.PageKey(1), DocKey(Fp(7), 8, t, 1, 8));
  EXPECT_EQ(chain.PageKey(2), DocKey(Fp(7), 8, t, 2, 5));
  EXPECT_EQ(chain.PageKeyAt(1, 12), DocKey(Fp(7), 8, t, 1, 4));
}

TEST(DiskKeys, EqualOnlyForEqualPrefixes) {
  const Tokens a = Seq(40);
  Tokens b = a;
  b[20] = 999;  // differs inside page 2
  const KeyChain ca(Fp(1), 8, a), cb(Fp(1), 8, b), other_model(Fp(2), 8, a), other_page(Fp(1), 16, a);
  EXPECT_EQ(ca.PageKey(0), cb.PageKey(0));
  EXPECT_EQ(ca.PageKey(1), cb.PageKey(1));
  EXPECT_NE(ca.PageKey(2), cb.PageKey(2));
  EXPECT_NE(ca.PageKey(4), cb.PageKey(4)) << "the chain carries the difference forward";
  EXPECT_NE(ca.PageKey(0), other_model.PageKey(0));
  EXPECT_NE(ca.PageKey(0), other_page.PageKey(0));
  // A partial last page never shares the key of the full page of a longer sequence.
  const KeyChain shorter(Fp(1), 8, TokenSpan(a).first(20));
  EXPECT_NE(shorter.PageKey(2), ca.PageKey(2));
  EXPECT_EQ(shorter.PageKey(1), ca.PageKey(1));
  // States: one key per prefix length, shared by sequences with that prefix.
  EXPECT_EQ(ca.StateKey(20), cb.StateKey(20));
  EXPECT_NE(ca.StateKey(21), cb.StateKey(21));
  EXPECT_NE(ca.StateKey(16), ca.StateKey(17));
  EXPECT_NE(ca.StateKey(16), ca.PageKey(1)) << "states and pages never share a key";
}

EntryMeta SampleMeta() {
  EntryMeta m;
  m.file_id = 0x0123456789abcdefull;
  m.fingerprint = Fp(3);
  m.anchor = true;
  m.page_tokens = 8;
  m.created_ms = 1700000000123;
  m.tokens = Seq(21, 100);
  const KeyChain chain(m.fingerprint, 8, m.tokens);
  for (int64_t p = 0; p < chain.num_pages(); ++p) m.pages.push_back(chain.PageKey(p));
  m.states = {{9, PointKind::kGuard, chain.StateKey(9)}, {21, PointKind::kEntryEnd, chain.StateKey(21)}};
  return m;
}

TEST(DiskEntryFile, RoundTripsWithTheDocumentedSize) {
  const EntryMeta m = SampleMeta();
  const std::vector<uint8_t> bytes = EncodeEntry(m);
  EXPECT_EQ(bytes.size(), 80u + 21 * 4 + 3 * 16 + 2 * 32 + 8);
  EXPECT_EQ(std::memcmp(bytes.data(), "LNENTRY1", 8), 0);
  Result<EntryMeta> back = DecodeEntry(bytes, "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->file_id, m.file_id);
  EXPECT_EQ(back->fingerprint, m.fingerprint);
  EXPECT_TRUE(back->anchor);
  EXPECT_EQ(back->created_ms, m.created_ms);
  EXPECT_EQ(back->tokens, m.tokens);
  EXPECT_EQ(back->pages, m.pages);
  ASSERT_EQ(back->states.size(), 2u);
  EXPECT_EQ(back->states[0].n, 9);
  EXPECT_EQ(back->states[0].kind, PointKind::kGuard);
  EXPECT_EQ(back->states[1].key, m.states[1].key);
}

TEST(DiskEntryFile, RejectsEveryFlippedByteAndEveryTruncation) {
  const std::vector<uint8_t> good = EncodeEntry(SampleMeta());
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x20;
    Result<EntryMeta> r = DecodeEntry(bad, "x");
    ASSERT_FALSE(r.ok()) << "flipped byte " << i << (i < 80 ? " (header)" : " (body)");
    EXPECT_EQ(r.status().code(), i >= 8 && i < 12 ? StatusCode::kUnsupported : StatusCode::kCorrupt) << i;
  }
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeEntry(std::span(good).first(n), "x").ok()) << "truncated to " << n;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_FALSE(DecodeEntry(longer, "x").ok());
}

TEST(DiskBlobFile, RoundTripsAndRejectsDamage) {
  const std::string dir = FreshDir("blob");
  FileEnv* env = DefaultFileEnv();
  std::vector<uint8_t> payload(100);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  const BlobHeader h{BlobKind::kPage, Fp(5), Fp(9), 3, payload.size()};
  const std::string path = dir + "/b.kvp";
  ASSERT_TRUE(WriteBlobFile(env, dir + "/b.tmp", path, h, payload).ok());
  std::vector<uint8_t> file;
  Result<BlobHeader> back = ReadBlobFile(env, path, BlobKind::kPage, Fp(5), Fp(9), &file);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->tokens, 3u);
  const auto got = BlobPayload(file, *back);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), payload.begin(), payload.end()));
  EXPECT_FALSE(ReadBlobFile(env, path, BlobKind::kPage, Fp(6), Fp(9), &file).ok()) << "another model";
  EXPECT_FALSE(ReadBlobFile(env, path, BlobKind::kPage, Fp(5), Fp(8), &file).ok()) << "another key";
  EXPECT_FALSE(ReadBlobFile(env, path, BlobKind::kState, Fp(5), Fp(9), &file).ok()) << "another kind";

  std::vector<uint8_t> good(BlobFileBytes(payload.size()));
  ASSERT_TRUE(env->ReadAt(path, 0, good.size(), good.data()).ok());
  for (size_t i = 0; i < good.size(); i += 3) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 1;
    const std::span<const uint8_t> parts[] = {bad};
    ASSERT_TRUE(env->WriteAtomic(dir + "/c.tmp", dir + "/c.kvp", parts).ok());
    EXPECT_FALSE(VerifyBlobFile(env, dir + "/c.kvp", BlobKind::kPage).ok()) << "flipped byte " << i;
  }
  for (size_t n : {size_t{0}, size_t{10}, size_t{64}, good.size() - 1}) {
    const std::span<const uint8_t> parts[] = {std::span<const uint8_t>(good).first(n)};
    ASSERT_TRUE(env->WriteAtomic(dir + "/c.tmp", dir + "/c.kvp", parts).ok());
    Result<BlobHeader> r = VerifyBlobFile(env, dir + "/c.kvp", BlobKind::kPage);
    EXPECT_FALSE(r.ok()) << "truncated to " << n;
  }
}

TEST(DiskPagedKvCodec, RoundTripsRowsBelowTheLength) {
  const Tokens t = Seq(19);
  auto kv = MakeKv(t);
  const KvLayout l = TestKvLayout();
  std::vector<std::vector<uint8_t>> stored(3);
  for (int64_t p = 0; p < 3; ++p) {
    ASSERT_TRUE(EncodePagedKvPage(l, *kv, p, std::min<int64_t>(8, 19 - p * 8), &stored[p]).ok());
  }
  EXPECT_EQ(static_cast<int64_t>(stored[2].size()), PagedKvPayloadBytes(l, 3));
  // Restore 12 rows: pages 0 and 1 (of which rows 8..11 are needed).
  std::vector<PagePayload> pp = {{stored[0], 8}, {stored[1], 8}};
  Result<KvPtr> back = DecodePagedKv(l, pp, 12);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(PayloadMatches(t, 12, *back, nullptr, false));
  pp.push_back({stored[2], 3});
  back = DecodePagedKv(l, pp, 19);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(PayloadMatches(t, 19, *back, nullptr, false));
  EXPECT_FALSE(DecodePagedKv(l, pp, 20).ok()) << "a page holding too few rows";
  pp[1].bytes = std::span(stored[1]).first(10);
  EXPECT_FALSE(DecodePagedKv(l, pp, 19).ok()) << "a payload of the wrong size";
}

}  // namespace
}  // namespace lineage::cache::disk::testing
