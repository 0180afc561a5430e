#include "sim/policy.h"

#include "sim/policies/lineage_adapter.h"
#include "sim/policies/llama_server.h"
#include "sim/policies/marconi.h"
#include "sim/policies/omlx.h"
#include "sim/policies/oracle.h"
#include "sim/policies/rapid_mlx.h"
#include "sim/policies/sglang.h"
#include "sim/policies/vllm.h"

namespace lineage::sim {

std::vector<std::string> PolicyNames() {
  return {"oracle",       "lineage",  "lineage-ram", "lineage-seed", "lineage-bytes", "lineage-no-system-end",
          "lineage-no-rungs", "lineage-ram-no-rungs",
          "exact",        "mlx-vlm",  "llama-server", "rapid-mlx",    "marconi",       "omlx",
          "vllm",         "sglang"};
}

Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name, const ModelShape& shape,
                                           const PolicyOptions& options) {
  if (name == "oracle") return std::unique_ptr<Policy>(new OraclePolicy(shape));
  if (name == "lineage") return std::unique_ptr<Policy>(new LineagePolicy(shape, options, false));
  if (name == "lineage-ram") {
    PolicyOptions ram_only = options;
    ram_only.disk_budget_bytes = 0;
    return std::unique_ptr<Policy>(new LineagePolicy(shape, ram_only, false, {}, name));
  }
  // The thinning alternatives of DESIGN.md §3.4, for measurement.
  if (name == "lineage-seed") {
    cache::CacheOptions o;
    o.thin_order = cache::ThinOrder::kSeed;
    return std::unique_ptr<Policy>(new LineagePolicy(shape, options, false, o, name));
  }
  // Without the system-end anchor (LookupHints::system_end_tokens), for measurement.
  if (name == "lineage-no-system-end") {
    cache::CacheOptions o;
    o.capture_system_end = false;
    return std::unique_ptr<Policy>(new LineagePolicy(shape, options, false, o, name));
  }
  // Without rungs inside a new anchor (CacheOptions::anchor_rungs), RAM + disk
  // and RAM only, for measurement.
  if (name == "lineage-no-rungs" || name == "lineage-ram-no-rungs") {
    cache::CacheOptions o;
    o.anchor_rungs = false;
    PolicyOptions po = options;
    if (name == "lineage-ram-no-rungs") po.disk_budget_bytes = 0;
    return std::unique_ptr<Policy>(new LineagePolicy(shape, po, false, o, name));
  }
  if (name == "lineage-bytes") {
    cache::CacheOptions o;
    o.thin_count = cache::ThinCount::kBytes;
    return std::unique_ptr<Policy>(new LineagePolicy(shape, options, false, o, name));
  }
  // The previous behaviour the off switch restores (the seed's exact mode).
  if (name == "exact") return std::unique_ptr<Policy>(new LineagePolicy(shape, options, true, {}, name));
  // mlx-vlm's exact mode is the same rule with its own entry count
  // (mlx_vlm/apc.py: APC_EXACT_CACHE_ENTRIES, 2 by default).
  if (name == "mlx-vlm") {
    cache::CacheOptions o;
    o.exact_max_entries = 2;
    return std::unique_ptr<Policy>(new LineagePolicy(shape, options, true, o, name));
  }
  if (name == "llama-server") return std::unique_ptr<Policy>(new LlamaServerPolicy(shape, options));
  if (name == "rapid-mlx") return std::unique_ptr<Policy>(new RapidMlxPolicy(shape, options));
  if (name == "omlx") return std::unique_ptr<Policy>(new OmlxPolicy(shape, options));
  if (name == "marconi") return std::unique_ptr<Policy>(new MarconiPolicy(shape, options));
  if (name == "vllm") return std::unique_ptr<Policy>(new VllmPolicy(shape, options));
  if (name == "sglang") return std::unique_ptr<Policy>(new SglangPolicy(shape, options));
  std::string known;
  for (const std::string& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
  return NotFound("unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace lineage::sim
