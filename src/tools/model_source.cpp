#include "tools/model_source.h"

#include <cstdio>

#include "model/load_model.h"
#include "tools/random_model.h"
#include "model/shapes.h"

namespace lineage::engine {

Result<std::shared_ptr<const model::Model>> OpenModel(const ModelSource& source) {
  if (!source.path.empty()) {
    model::LoadOptions options;
    if (source.file_order) options.lane_order = false;
    return model::LoadModel(source.path, options);
  }
  if (source.shape.empty()) return InvalidArgument("give a model path or a shape");
  LINEAGE_ASSIGN_OR_RETURN(model::Arch arch, model::ParseArch(source.arch));
  LINEAGE_ASSIGN_OR_RETURN(model::ModelSpec spec, model::LookupShape(arch, source.shape, source.vocab));
  const std::optional<DType> dtype = ParseDType(source.dtype);
  if (!dtype) return InvalidArgument("unknown dtype " + source.dtype);
  return model::MakeRandomModel(spec, *dtype, source.seed);
}

std::string DescribeModel(const model::Model& m) {
  const model::ModelConfig& c = m.config;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %s, %lld layers (%lld attention), hidden %lld, vocab %lld, %s",
                c.source_path.empty() ? "in-memory" : c.source_path.c_str(), model::ArchName(c.arch),
                static_cast<long long>(c.num_layers), static_cast<long long>(c.num_full_layers()),
                static_cast<long long>(c.hidden), static_cast<long long>(c.vocab),
                std::string(Info(m.weights.embed.dtype).name).c_str());
  std::string out = buf;
  if (c.moe()) {
    out += ", " + std::to_string(c.experts.count) + " experts of " + std::to_string(c.experts.width) + " (top " +
           std::to_string(c.experts.per_token) + ") + shared " + std::to_string(c.experts.shared_width);
  }
  return out;
}

}  // namespace lineage::engine
