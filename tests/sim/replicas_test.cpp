// Replicas in the simulator (sim/replicas.h): one replica is the plain
// lineage policy; with several, routing a session to one replica restores
// more than routing at random, and at random a shared disk tier restores
// more than private ones (another replica's turn is on the shared disk).
#include <gtest/gtest.h>

#include "sim/policies/lineage_adapter.h"
#include "sim/replay.h"
#include "sim/replicas.h"
#include "sim/shapes.h"
#include "sim/tracegen/scenarios.h"
#include "sim_test_util.h"

namespace lineage::sim {
namespace {

struct ReplicaCase {
  Trace trace;
  ModelShape shape;
  PolicyOptions per_replica;
};

ReplicaCase Make() {
  ReplicaCase s;
  Result<Trace> t = GenerateTrace("coding", 5, 300);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  s.trace = std::move(*t);
  Result<ModelShape> shape = FindShape("glm-5.3-flash");
  EXPECT_TRUE(shape.ok());
  s.shape = *shape;
  s.per_replica = {s.shape.ram_budget_bytes, s.shape.disk_budget_bytes};
  return s;
}

int64_t Cached(const ReplicaCase& s, const ReplicaOptions& o) {
  ReplicaSetPolicy p(s.shape, s.per_replica, o);
  Result<ReplayResult> r = Replay(s.trace, s.shape, p);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->cached_tokens : -1;
}

TEST(SimReplicas, OneReplicaIsTheLineagePolicy) {
  const ReplicaCase s = Make();
  LineagePolicy plain(s.shape, s.per_replica, /*exact=*/false);
  Result<ReplayResult> r = Replay(s.trace, s.shape, plain);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Cached(s, {1, Routing::kSessionHash, false, 1}), r->cached_tokens);
  EXPECT_EQ(Cached(s, {1, Routing::kSessionHash, true, 1}), r->cached_tokens);
}

TEST(SimReplicas, AffinityAndASharedDiskEachRestoreMore) {
  const ReplicaCase s = Make();
  const int64_t hash_private = Cached(s, {4, Routing::kSessionHash, false, 1});
  const int64_t random_private = Cached(s, {4, Routing::kRandom, false, 1});
  const int64_t random_shared = Cached(s, {4, Routing::kRandom, true, 1});
  std::printf("  4 replicas: hash/private %lld, random/private %lld, random/shared %lld tokens restored\n",
              static_cast<long long>(hash_private), static_cast<long long>(random_private),
              static_cast<long long>(random_shared));
  EXPECT_GT(hash_private, random_private);
  EXPECT_GT(random_shared, random_private);
}


// Replicas number their pages alike unless they share one allocator: a
// shared disk tier then took replica 1's page 7 for replica 0's page 7 and
// never wrote it. Sessions with nothing in common write as many bytes to one
// shared tier as to private ones.
TEST(SimReplicas, ASharedDiskWritesEveryReplicasOwnPages) {
  ReplicaCase s = Make();
  s.trace = Trace{};
  for (uint32_t i = 0; i < 16; ++i) {
    s.trace.sessions.push_back("s" + std::to_string(i));
    Request r = testing::MakeRequest(1000 * i, {{1000 + i, 3000}}, 5000 + i, 20);
    r.session = i;
    s.trace.requests.push_back(r);
  }
  auto written = [&](bool shared) {
    ReplicaSetPolicy p(s.shape, s.per_replica, {2, Routing::kSessionHash, shared, 1});
    Result<ReplayResult> r = Replay(s.trace, s.shape, p);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return p.counters().disk_written_bytes;
  };
  const int64_t private_bytes = written(false);
  EXPECT_GT(private_bytes, 0);
  EXPECT_EQ(written(true), private_bytes);
}

}  // namespace
}  // namespace lineage::sim
