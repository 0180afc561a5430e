#include "sim/policy.h"

#include "sim/policies/lineage_adapter.h"
#include "sim/policies/llama_server.h"
#include "sim/policies/marconi.h"
#include "sim/policies/oracle.h"
#include "sim/policies/periodic.h"

namespace lineage::sim {

std::vector<std::string> PolicyNames() { return {"oracle", "lineage", "exact", "llama-server", "periodic", "marconi"}; }

Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name, const ModelShape& shape,
                                           const PolicyOptions& options) {
  if (name == "oracle") return std::unique_ptr<Policy>(new OraclePolicy(shape));
  if (name == "lineage") return std::unique_ptr<Policy>(new LineagePolicy(shape, options, false));
  if (name == "exact") return std::unique_ptr<Policy>(new LineagePolicy(shape, options, true));
  if (name == "llama-server") return std::unique_ptr<Policy>(new LlamaServerPolicy(shape, options));
  if (name == "periodic") return std::unique_ptr<Policy>(new PeriodicPolicy(shape, options));
  if (name == "marconi") return std::unique_ptr<Policy>(new MarconiPolicy(shape, options));
  std::string known;
  for (const std::string& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
  return NotFound("unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace lineage::sim
