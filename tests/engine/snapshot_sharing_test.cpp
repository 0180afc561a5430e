// The recurrent state is copy-on-write: a snapshot shares the running buffer
// (no copy at commit), the sequence copies it when it runs again, and the
// snapshot never sees what the sequence does after it.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "engine/engine_test_util.h"

namespace lineage::engine {
namespace {

using testing::MakeEngine;
using testing::TinyModel;
using testing::Tokens;

std::vector<float> Values(const RecurrentState& s) { return std::vector<float>(s.data(), s.data() + s.bytes() / 4); }

// A sequence of n prefilled tokens.
Sequence Prefilled(Engine& engine, int64_t n) {
  Sequence seq = engine.NewSequence();
  PrefillResult r;
  EXPECT_TRUE(engine.Prefill(seq, Tokens(n, engine.config().vocab), {}, &r).ok());
  return seq;
}

TEST(SnapshotSharing, SnapSharesTheStateUntilTheSequenceRunsAgain) {
  auto engine = MakeEngine(TinyModel(model::Arch::kQwen3_5));
  const int64_t vocab = engine->config().vocab;
  Sequence seq = Prefilled(*engine, 40);
  PrefillResult r;
  const Snapshot snap = seq.Snap();
  ASSERT_NE(snap.recurrent, nullptr);
  EXPECT_EQ(snap.recurrent.get(), &std::as_const(seq).recurrent()) << "a snapshot copies nothing";
  const std::vector<float> at_snap = Values(*snap.recurrent);

  ASSERT_TRUE(engine->Prefill(seq, Tokens(10, vocab, 5), {}, &r).ok());
  EXPECT_NE(snap.recurrent.get(), &std::as_const(seq).recurrent()) << "running again took a private copy";
  EXPECT_EQ(Values(*snap.recurrent), at_snap) << "the snapshot saw the sequence move on";
  EXPECT_NE(Values(seq.recurrent()), at_snap);

  // Once nothing shares it, the sequence keeps writing its own buffer.
  const RecurrentState* own = &std::as_const(seq).recurrent();
  ASSERT_TRUE(engine->Prefill(seq, Tokens(3, vocab, 6), {}, &r).ok());
  EXPECT_EQ(own, &std::as_const(seq).recurrent());
}

TEST(SnapshotSharing, AdmissionCopiesTheStateOnce) {
  auto engine = MakeEngine(TinyModel(model::Arch::kQwen3_5));
  const int64_t vocab = engine->config().vocab;
  const Sequence seq = Prefilled(*engine, 30);
  PrefillResult r;
  const Snapshot snap = seq.Snap();
  auto admitted = engine->Admit(*snap.kv, snap.recurrent.get());
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
  const RecurrentState* own = &std::as_const(*admitted).recurrent();
  EXPECT_NE(own, snap.recurrent.get());
  EXPECT_EQ(Values(*own), Values(*snap.recurrent));
  // The admitted sequence owns its copy: running it copies nothing more.
  ASSERT_TRUE(engine->Prefill(*admitted, Tokens(5, vocab, 3), {}, &r).ok());
  EXPECT_EQ(own, &std::as_const(*admitted).recurrent());
  EXPECT_NE(Values(*own), Values(*snap.recurrent));
}

}  // namespace
}  // namespace lineage::engine
