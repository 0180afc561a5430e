// The disk tier with the real engine on a tiny random qwen3.5: a conversation
// committed through LineageCache in one run is restored from disk by the next
// run (a new tier and a new cache on the same directory), and the logits
// after the restore equal a cold prefill of the whole prompt — and equal,
// bit for bit, a restore of the same snapshot from RAM.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include <sys/stat.h>

#include <chrono>

#include "cache/disk/file_disk_tier.h"
#include "cache/disk_faulty_env.h"
#include "cache/lineage_cache.h"
#include "engine/disk_codec.h"
#include "engine_test_util.h"
#include "fresh_dir.h"

namespace lineage::engine {
namespace {

using testing::MaxRelError;
constexpr double kTol = 1e-4;

// This file's directories: engine_<name> (FreshDir removes them at exit).
std::string FreshDir(const std::string& name) { return lineage::testing::FreshDir("engine_" + name); }

struct Turn {
  cache::EntryId entry = cache::kNoEntry;
  cache::RestorePoint restore;
  std::vector<float> logits;
  Snapshot snap;
};

// One request through the cache and the engine, as the server drives it.
Turn RunTurn(Engine& e, cache::LineageCache& c, const std::vector<int32_t>& prompt) {
  Turn out;
  auto lr = c.Lookup(prompt);
  EXPECT_TRUE(lr.ok()) << lr.status().ToString();
  out.restore = lr->restore;
  Sequence seq = e.NewSequence();
  if (lr->restore.length > 0) {
    auto admitted = e.Admit(*lr->restore.kv, lr->restore.state.get());
    EXPECT_TRUE(admitted.ok()) << admitted.status().ToString();
    seq = std::move(*admitted);
  }
  std::vector<int64_t> at;
  for (const cache::PlannedCapture& p : lr->captures) at.push_back(p.n);
  PrefillResult r;
  const std::span<const int32_t> rest = std::span(prompt).subspan(static_cast<size_t>(lr->restore.length));
  Status st = e.Prefill(seq, rest, {.capture_at = at}, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  out.logits = r.logits;
  out.snap = seq.Snap();
  cache::CommitRequest req;
  req.prompt = prompt;
  req.kv = out.snap.kv;
  req.state = out.snap.recurrent;
  for (const cache::PlannedCapture& p : lr->captures) {
    for (const Capture& cap : r.captures) {
      if (cap.num_tokens == p.n) req.captured.push_back({p.n, p.kind, cap.recurrent});
    }
  }
  req.lease = std::move(lr->lease);
  auto committed = c.Commit(std::move(req));
  EXPECT_TRUE(committed.ok()) << committed.status().ToString();
  out.entry = committed.ok() ? committed->entry : cache::kNoEntry;
  return out;
}

std::unique_ptr<cache::disk::FileDiskTier> OpenTier(const std::string& dir,
                                                    std::shared_ptr<const cache::disk::StateCodec> codec) {
  cache::disk::FileDiskTierOptions o;
  o.dir = dir;
  auto t = cache::disk::FileDiskTier::Open(o, std::move(codec));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(*t) : nullptr;
}

// Dense and MoE hybrids: the cache and its files never look inside the FFN;
// kda_dsa stores its indexer keys in the pages beside the latent rows.
class DiskRestoreArch : public ::testing::TestWithParam<model::Arch> {};

TEST_P(DiskRestoreArch, ANewRunRestoresFromDiskWithTheLogitsOfAColdPrefill) {
  auto model = testing::TinyModel(GetParam());
  auto engine = testing::MakeEngine(model);
  auto codec = EngineDiskCodec::For(*engine);
  const std::string dir = FreshDir(std::string("restart_") + model::ArchName(GetParam()));
  const auto vocab = engine->config().vocab;
  const std::vector<int32_t> turn1 = testing::Tokens(150, vocab, 1);
  std::vector<int32_t> turn2 = turn1;
  for (int32_t t : testing::Tokens(45, vocab, 2)) turn2.push_back(t);

  Snapshot stored;
  {
    auto tier = OpenTier(dir, codec);
    cache::LineageCache cache({}, tier.get());
    Turn t1 = RunTurn(*engine, cache, turn1);
    EXPECT_EQ(t1.restore.length, 0);
    stored = t1.snap;
    tier->Flush();
    EXPECT_EQ(tier->Stats().entries, 1);
  }

  auto tier = OpenTier(dir, codec);
  cache::LineageCache cache({}, tier.get());
  auto lr = cache.Lookup(turn2);
  ASSERT_TRUE(lr.ok());
  ASSERT_EQ(lr->restore.tier, cache::Tier::kDisk);
  ASSERT_EQ(lr->restore.length, 150);
  // The bytes that come back are the bytes that went in.
  const auto* rs = dynamic_cast<const RecurrentState*>(lr->restore.state.get());
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(std::memcmp(rs->conv(0), stored.recurrent->conv(0), static_cast<size_t>(rs->bytes())), 0);
  const auto* kv = dynamic_cast<const cache::PagedKv*>(lr->restore.kv.get());
  ASSERT_NE(kv, nullptr);
  const cache::KvLayout& l = engine->kv_layout();
  for (int64_t pos = 0; pos < 150; ++pos) {
    const auto& a = *kv->pages()[pos / l.page_tokens];
    const auto& b = *stored.kv->pages()[pos / l.page_tokens];
    for (int64_t layer = 0; layer < l.num_layers; ++layer) {
      for (int64_t h = 0; h < l.num_kv_heads; ++h) {
        const int64_t off = (pos % l.page_tokens) * l.head_dim;
        ASSERT_EQ(std::memcmp(static_cast<const float*>(a.k(layer, h)) + off, static_cast<const float*>(b.k(layer, h)) + off,
                              l.head_dim * 4),
                  0)
            << pos;
        ASSERT_EQ(std::memcmp(static_cast<const float*>(a.v(layer, h)) + off, static_cast<const float*>(b.v(layer, h)) + off,
                              l.head_dim * 4),
                  0)
            << pos;
      }
    }
  }
  lr->lease.Release();

  Turn t2 = RunTurn(*engine, cache, turn2);
  EXPECT_EQ(t2.restore.tier, cache::Tier::kDisk);
  EXPECT_EQ(t2.restore.length, 150);
  const std::vector<float> cold = testing::ColdPrefill(*engine, turn2);
  EXPECT_LT(MaxRelError(t2.logits, cold), kTol);
  // From RAM: the same snapshot, the same suffix, the same logits, bit for bit.
  auto from_ram = engine->Admit(*stored.kv, stored.recurrent.get());
  ASSERT_TRUE(from_ram.ok());
  PrefillResult r;
  ASSERT_TRUE(engine->Prefill(*from_ram, std::span(turn2).subspan(150), {}, &r).ok());
  EXPECT_EQ(r.logits, t2.logits);

  // Turn 2's commit absorbed the disk entry: one entry on disk, sharing turn 1's full pages.
  tier->Flush();
  EXPECT_EQ(tier->Stats().entries, 1);
}

INSTANTIATE_TEST_SUITE_P(Archs, DiskRestoreArch,
                         ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3_5Moe, model::Arch::kQwen3Next,
                                           model::Arch::kKimiLinear, model::Arch::kKdaDsa),
                         [](const auto& info) { return std::string(model::ArchName(info.param)); });

TEST(DiskRestore, Bf16KvPagesRoundTripAndAreForeignToAnF32Engine) {
  auto model = testing::TinyModel(model::Arch::kQwen3_5);
  auto engine = testing::MakeEngine(model, 2, 16, DType::kBF16);
  const std::string dir = FreshDir("bf16kv");
  const auto vocab = engine->config().vocab;
  const std::vector<int32_t> turn1 = testing::Tokens(100, vocab, 4);
  std::vector<int32_t> turn2 = turn1;
  for (int32_t t : testing::Tokens(20, vocab, 5)) turn2.push_back(t);
  Snapshot stored;
  {
    auto tier = OpenTier(dir, EngineDiskCodec::For(*engine));
    cache::LineageCache cache({}, tier.get());
    stored = RunTurn(*engine, cache, turn1).snap;
    tier->Flush();
  }
  {
    // An fp32-KV engine of the same model must not read bf16 pages.
    auto f32_engine = testing::MakeEngine(model);
    auto tier = OpenTier(dir, EngineDiskCodec::For(*f32_engine));
    EXPECT_EQ(tier->Counters().skipped_foreign, 1);
  }
  auto tier = OpenTier(dir, EngineDiskCodec::For(*engine));
  cache::LineageCache cache({}, tier.get());
  Turn t2 = RunTurn(*engine, cache, turn2);
  EXPECT_EQ(t2.restore.tier, cache::Tier::kDisk);
  EXPECT_EQ(t2.restore.length, 100);
  // Restoring the same snapshot from RAM gives the same logits, bit for bit.
  auto from_ram = engine->Admit(*stored.kv, stored.recurrent.get());
  ASSERT_TRUE(from_ram.ok());
  PrefillResult r;
  ASSERT_TRUE(engine->Prefill(*from_ram, std::span(turn2).subspan(100), {}, &r).ok());
  EXPECT_EQ(r.logits, t2.logits);
}

TEST(DiskRestore, FingerprintsTellModelsApart) {
  auto a = testing::TinyModel(model::Arch::kQwen3_5, DType::kF32, 11);
  auto a2 = testing::TinyModel(model::Arch::kQwen3_5, DType::kF32, 11);
  auto b = testing::TinyModel(model::Arch::kQwen3_5, DType::kF32, 12);
  auto c = testing::TinyModel(model::Arch::kQwen3, DType::kF32, 11);
  EXPECT_EQ(ModelFingerprint(*a), ModelFingerprint(*a2));
  EXPECT_NE(ModelFingerprint(*a), ModelFingerprint(*b)) << "same shape, other weights";
  EXPECT_NE(ModelFingerprint(*a), ModelFingerprint(*c));
  // MoE models: the same trunk with other expert weights is another model.
  auto m = testing::TinyModel(model::Arch::kQwen3_5Moe, DType::kF32, 11);
  auto m2 = testing::TinyModel(model::Arch::kQwen3_5Moe, DType::kF32, 12);
  EXPECT_NE(ModelFingerprint(*m), ModelFingerprint(*a));
  EXPECT_NE(ModelFingerprint(*m), ModelFingerprint(*m2));
}

TEST(DiskRestore, AnotherModelsEntriesAreNeverServed) {
  auto engine_a = testing::MakeEngine(testing::TinyModel(model::Arch::kQwen3_5, DType::kF32, 11));
  auto engine_b = testing::MakeEngine(testing::TinyModel(model::Arch::kQwen3_5, DType::kF32, 12));
  const std::string dir = FreshDir("foreign");
  const std::vector<int32_t> prompt = testing::Tokens(80, engine_a->config().vocab, 3);
  {
    auto tier = OpenTier(dir, EngineDiskCodec::For(*engine_a));
    cache::LineageCache cache({}, tier.get());
    RunTurn(*engine_a, cache, prompt);
  }
  auto tier = OpenTier(dir, EngineDiskCodec::For(*engine_b));
  EXPECT_EQ(tier->Counters().skipped_foreign, 1);
  cache::LineageCache cache({}, tier.get());
  std::vector<int32_t> longer = prompt;
  longer.push_back(5);
  auto lr = cache.Lookup(longer);
  ASSERT_TRUE(lr.ok());
  EXPECT_EQ(lr->restore.length, 0);
}

// A FIFO put in place of a page file while the server runs, and a read that
// stalls past its deadline: each restore gives up promptly and the request
// is prefilled cold, with a cold prefill's logits.
TEST(DiskRestore, AFifoInPlaceOfAPageOrAStalledReadFallsBackToAColdPrefill) {
  auto model = testing::TinyModel(model::Arch::kQwen3_5);
  auto engine = testing::MakeEngine(model);
  auto codec = EngineDiskCodec::For(*engine);
  const auto vocab = engine->config().vocab;
  const std::vector<int32_t> turn1 = testing::Tokens(150, vocab, 6);
  std::vector<int32_t> turn2 = turn1;
  for (int32_t t : testing::Tokens(30, vocab, 7)) turn2.push_back(t);
  const std::vector<float> cold = testing::ColdPrefill(*engine, turn2);
  auto write_turn1 = [&](const std::string& dir) {
    auto tier = OpenTier(dir, codec);
    cache::LineageCache cache({}, tier.get());
    RunTurn(*engine, cache, turn1);
    tier->Flush();
    EXPECT_EQ(tier->Stats().entries, 1);
  };
  using Clock = std::chrono::steady_clock;

  {
    const std::string dir = FreshDir("fifo_page");
    write_turn1(dir);
    auto tier = OpenTier(dir, codec);
    std::string page;
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir + "/pages")) {
      if (f.is_regular_file()) page = f.path().string();
    }
    ASSERT_FALSE(page.empty());
    std::filesystem::remove(page);
    ASSERT_EQ(::mkfifo(page.c_str(), 0644), 0);
    cache::LineageCache cache({}, tier.get());
    const auto t0 = Clock::now();
    Turn t2 = RunTurn(*engine, cache, turn2);
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(t2.restore.length, 0);
    EXPECT_EQ(tier->Counters().corrupt_loads, 1);
    EXPECT_LT(MaxRelError(t2.logits, cold), kTol);
  }
  {
    const std::string dir = FreshDir("stalled_read");
    write_turn1(dir);
    cache::disk::testing::StallingReadEnv env;
    env.Set(true);  // start-up reads the entry file
    cache::disk::FileDiskTierOptions o;
    o.dir = dir;
    o.env = &env;
    o.load_deadline_ms = 200;
    o.load_ms_per_gib = 0;
    o.log = [](const std::string&) {};
    auto tier = cache::disk::FileDiskTier::Open(o, codec);
    ASSERT_TRUE(tier.ok()) << tier.status().ToString();
    env.Set(false);
    cache::LineageCache cache({}, tier->get());
    const auto t0 = Clock::now();
    Turn t2 = RunTurn(*engine, cache, turn2);
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(t2.restore.length, 0);
    EXPECT_EQ((*tier)->Counters().late_loads, 1);
    EXPECT_LT(MaxRelError(t2.logits, cold), kTol);
    env.Set(true);  // the late read ends before the tier does
  }
}

}  // namespace
}  // namespace lineage::engine
