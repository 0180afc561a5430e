// SiTU's betas (situ_config.h) as Kimi K3's files store them (spec
// latent-attention §2.4, §3.3): GGUF activation.situ_*, config.json
// hidden_act "situ" with activation_situ_*.
#include "kinds/dense_ffn/situ_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::dense_ffn {
namespace {

using namespace model;

Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (c->arch != Arch::kKimiK3) return Status::Ok();
  LINEAGE_ASSIGN_OR_RETURN(c->situ.beta, g.GetFloat(a + "activation.situ_beta"));
  LINEAGE_ASSIGN_OR_RETURN(c->situ.linear_beta, g.GetFloat(a + "activation.situ_linear_beta"));
  return Status::Ok();
}

Status ReadHf(const JsonField& j, ModelConfig* c) {
  if (c->arch != Arch::kKimiK3) return Status::Ok();
  LINEAGE_ASSIGN_OR_RETURN(std::string act, j["hidden_act"].String());
  if (act != "situ") return j["hidden_act"].Error("\"situ\" (Kimi K3's activation)");
  LINEAGE_ASSIGN_OR_RETURN(c->situ.beta, j["activation_situ_beta"].PositiveFloat(1e6));
  const JsonField linear_beta = j["activation_situ_linear_beta"];
  if (!linear_beta.present() || !linear_beta.raw()->is_number()) return linear_beta.Error("a number");
  c->situ.linear_beta = linear_beta.raw()->get<double>();
  return Status::Ok();
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (c.situ.beta <= 0) return {};
  return {{a + "activation.situ_beta", static_cast<float>(c.situ.beta)},
          {a + "activation.situ_linear_beta", static_cast<float>(c.situ.linear_beta)}};
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (c.situ.beta <= 0) return;
  t["activation_situ_beta"] = c.situ.beta;
  t["activation_situ_linear_beta"] = c.situ.linear_beta;
  t["hidden_act"] = "situ";
}

// K3 activates with SiTU; no other architecture does.
Status Validate(const ModelConfig& c) {
  const SituConfig& s = c.situ;
  const bool k3 = c.arch == Arch::kKimiK3;
  if (!k3 && s.beta == 0) return Status::Ok();
  if (!k3 || !(s.beta > 0 && s.beta < 1e6) || !(s.linear_beta < 1e6))
    return InvalidArgument(c.source_path + ": SiTU betas " + std::to_string(s.beta) + " / " +
                           std::to_string(s.linear_beta) + ", expected a positive beta on Kimi K3 only");
  return Status::Ok();
}

std::vector<double> Fingerprint(const ModelConfig& c) { return {c.situ.beta, c.situ.linear_beta}; }

}  // namespace

extern const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint};

}  // namespace lineage::kinds::dense_ffn
