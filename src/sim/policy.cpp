#include "sim/policy.h"

#include "sim/policies/oracle.h"

namespace lineage::sim {

std::vector<std::string> PolicyNames() { return {"oracle"}; }

Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name, const ModelShape& shape,
                                           const PolicyOptions& options) {
  if (name == "oracle") return std::unique_ptr<Policy>(new OraclePolicy(shape));
  std::string known;
  for (const std::string& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
  return NotFound("unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace lineage::sim
