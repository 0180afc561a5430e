// RequestDriver: the one cache-side request path the server and the
// simulator share (lookup, captures, commit, partial commit, extension).
#include "cache/request_driver.h"

#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

struct Live {
  RequestDriver driver;
  std::shared_ptr<CountedSequence> seq;
};

Live Begin(Harness& h, const Tokens& prompt, LookupHints hints = {}) {
  Result<RequestDriver> d = RequestDriver::Begin(h.cache(), prompt, hints);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  Live r{std::move(d).value(), std::make_shared<CountedSequence>(&h.pages(), h.shape())};
  EXPECT_TRUE(VerifyRestore(prompt, r.driver.restore(), h.shape().recurrent()).ok());
  r.seq->Admit(prompt, r.driver.restore());
  return r;
}

// Prefills up to n tokens, handing every planned capture to the driver.
void PrefillTo(Live& r, const Tokens& prompt, int64_t n) {
  for (int64_t at : r.driver.CapturesIn(r.seq->length(), n)) {
    r.seq->Append(TokenSpan(prompt).subspan(r.seq->tokens().size(), at - r.seq->length()));
    EXPECT_TRUE(r.driver.Captured(at, r.seq->State()));
  }
  r.seq->Append(TokenSpan(prompt).subspan(r.seq->tokens().size(), n - r.seq->length()));
}

TEST(RequestDriver, ARequestRunsLookupCapturesCommitAndExtension) {
  Harness h(EventPointsOnly());
  TokenSource src;
  const Tokens prompt = src.Fresh(1000);
  Live r = Begin(h, prompt);
  EXPECT_EQ(r.driver.restore().length, 0);
  EXPECT_EQ(r.driver.CapturesIn(0, 1000), std::vector<int64_t>{984});
  EXPECT_FALSE(r.driver.Captured(500, r.seq->State())) << "an unplanned length is ignored";
  PrefillTo(r, prompt, 1000);
  ASSERT_TRUE(r.driver.Commit(r.seq->Kv(), r.seq->State()).ok());
  ASSERT_NE(r.driver.entry(), kNoEntry);
  EXPECT_FALSE(r.driver.Commit(r.seq->Kv(), r.seq->State()).ok()) << "a second commit is refused";
  r.seq->Append(src.Fresh(40));
  EXPECT_TRUE(r.driver.Extend(r.seq->tokens(), r.seq->Kv(), r.seq->State()).ok());
  // The next turn restores past the reply.
  const Tokens next = Cat({r.seq->tokens(), src.Fresh(20)});
  Live n = Begin(h, next);
  EXPECT_EQ(n.driver.restore().length, 1040);
  h.Check();
}

TEST(RequestDriver, ACancelledPrefillKeepsWhatItPrefilled) {
  Harness h;
  TokenSource src;
  const Tokens prompt = src.Fresh(2000);
  Live r = Begin(h, prompt);
  PrefillTo(r, prompt, 1200);
  Result<CommitResult> kept = r.driver.CommitPartial(1200, r.seq->Kv(), r.seq->State());
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_NE(r.driver.entry(), kNoEntry);
  // The client's retry lands on the prefilled part.
  Live retry = Begin(h, prompt);
  EXPECT_EQ(retry.driver.restore().length, 1200);
  // Cancelled before any token was prefilled: nothing to keep, the lease goes.
  Result<CommitResult> none = retry.driver.CommitPartial(1200, retry.seq->Kv(), retry.seq->State());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(retry.driver.entry(), kNoEntry);
  EXPECT_EQ(h.cache().Stats().live_leases, 0);
  h.Check();
}

TEST(RequestDriver, ExtendingAnEntryThatLeftRamIsNotAnError) {
  CacheOptions o;
  o.ram_budget_bytes = 20 * 64 * 1024;
  Harness h(o);
  TokenSource src;
  const Tokens prompt = src.Fresh(600);
  Live r = Begin(h, prompt);
  PrefillTo(r, prompt, 600);
  ASSERT_TRUE(r.driver.Commit(r.seq->Kv(), r.seq->State()).ok());
  for (int i = 0; i < 4; ++i) h.Run(src.Fresh(600));  // pushes it out of RAM
  r.seq->Append(src.Fresh(10));
  EXPECT_TRUE(r.driver.Extend(r.seq->tokens(), r.seq->Kv(), r.seq->State()).ok());
  // Tokens that do not continue the entry are the caller's bug: reported.
  Live s = Begin(h, src.Fresh(300));
  PrefillTo(s, s.driver.prompt(), 300);
  ASSERT_TRUE(s.driver.Commit(s.seq->Kv(), s.seq->State()).ok());
  ASSERT_NE(s.driver.entry(), kNoEntry);
  Tokens wrong = Cat({src.Fresh(300), src.Fresh(5)});
  CountedSequence other(&h.pages(), h.shape());
  other.Append(wrong);
  EXPECT_FALSE(s.driver.Extend(wrong, other.Kv(), other.State()).ok());
}

}  // namespace
}  // namespace lineage::cache::testing
