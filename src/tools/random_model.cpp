#include "tools/random_model.h"

#include <cmath>
#include <map>
#include <string>
#include <string_view>

#include "model/bind_weights.h"
#include "model/encode.h"

namespace lineage::model {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : s) h = (h ^ static_cast<uint8_t>(ch)) * 0x100000001b3ull;
  return h;
}

// Uniform in [lo, hi).
struct Range {
  double lo, hi;
};

Range UniformWithStd(double stddev) {
  double half = std::sqrt(3.0) * stddev;
  return {-half, half};
}

Range RangeFor(Arch arch, const PlannedTensor& p) {
  const double fan_in = static_cast<double>(p.hf_shape.back());
  switch (p.values) {
    case Values::kEmbedding:
      return UniformWithStd(2.0 / std::sqrt(static_cast<double>(p.hf_shape[1])));
    case Values::kNorm: case Values::kPlainNorm: {
      // Zero-centred norms store w (scale 1 + w); plain ones store the scale.
      Range r = UniformWithStd(0.1);
      if (!IsZeroCentredNorm(p, arch)) r = {1 + r.lo, 1 + r.hi};
      return r;
    }
    case Values::kDtBias:
      return {-1.0, 1.0};
    case Values::kALog:
      return {-0.7, 1.4};
    case Values::kBias:
      return UniformWithStd(0.1);
    case Values::kScores:
      // A router bias small next to the spread of the sigmoid scores, as
      // trained biases are; AttnRes scores of a few units over the hidden
      // width: a soft mix.
      return UniformWithStd(0.05);
    case Values::kOutMatrix:
      return UniformWithStd(0.25 / std::sqrt(fan_in));
    case Values::kMatrix: case Values::kF32Matrix: case Values::kVector:
      return UniformWithStd(1.0 / std::sqrt(fan_in));
  }
  return UniformWithStd(1.0 / std::sqrt(fan_in));
}

double Uniform(uint64_t key, int64_t index, Range r) {
  uint64_t bits = SplitMix64(key + static_cast<uint64_t>(index) * 0xd1b54a32d192ed03ull);
  double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
  return r.lo + (r.hi - r.lo) * u;
}

// Routed experts: values keyed by (layer, expert, matrix) and the index
// inside that expert's matrix, so every layout (tensor_plan.h) of the same
// model holds the same numbers.
void FillExperts(const PlannedTensor& p, uint64_t seed, int64_t begin, int64_t n, float* out) {
  const std::vector<int64_t>& s = p.hf_shape;
  const int64_t cols = s.back(), rows = s[s.size() - 2];
  const int64_t per_expert = rows * cols;
  const Range range = UniformWithStd(1.0 / std::sqrt(static_cast<double>(cols)));
  int64_t cached_expert = -1;
  const char* cached_kind = nullptr;
  uint64_t key = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t idx = begin + i;
    int64_t e = p.expert >= 0 ? p.expert : idx / per_expert, within = idx % per_expert;
    const char* kind = p.role == Role::kExpGate ? "gate" : p.role == Role::kExpUp ? "up" : "down";
    if (p.role == Role::kExpGateUp) {  // [2 I, H]: gate rows, then up rows
      const int64_t half = rows / 2, row = within / cols;
      kind = row < half ? "gate" : "up";
      within = (row % half) * cols + within % cols;
    }
    if (e != cached_expert || kind != cached_kind) {  // a new matrix: its key
      cached_expert = e;
      cached_kind = kind;
      key = SplitMix64(seed ^ Fnv1a("layers." + std::to_string(p.layer) + ".experts." + std::to_string(e) + "." + kind));
    }
    out[i] = static_cast<float>(Uniform(key, within, range));
  }
}

}  // namespace

void FillRandom(Arch arch, const PlannedTensor& p, uint64_t seed, int64_t begin, int64_t n, float* out) {
  if (IsExpertRole(p.role)) return FillExperts(p, seed, begin, n, out);
  const uint64_t key = SplitMix64(seed ^ Fnv1a(p.hf_name));
  const Range r = RangeFor(arch, p);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(Uniform(key, begin + i, r));
}

std::vector<std::string> HfTensorNames(const PlannedTensor& p) {
  if (p.hf_factor_name.empty()) return {p.hf_name};
  return {p.hf_name, p.hf_factor_name};
}

void FillHfRandom(Arch arch, const PlannedTensor& p, const std::string& name, uint64_t seed, int64_t begin,
                  int64_t n, float* out) {
  static constexpr float kFactors[4] = {1.0f, 2.0f, 0.5f, 4.0f};
  const bool factor = !p.hf_factor_name.empty() && name == p.hf_factor_name;
  if (!factor) FillRandom(arch, p, seed, begin, n, out);
  if (p.hf_factor_name.empty()) return;
  for (int64_t i = 0; i < n; ++i) {
    const float f = kFactors[(begin + i) % 4];
    out[i] = factor ? f : out[i] / f;
  }
}

Status WriteHfRows(Arch arch, const PlannedTensor& p, const std::string& name, uint64_t seed, DType stored,
                   const std::function<Status(const uint8_t* bytes, size_t n)>& write) {
  const int64_t cols = p.hf_shape.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < p.hf_shape.size(); ++i) rows *= p.hf_shape[i];
  std::vector<float> row(static_cast<size_t>(cols));
  std::vector<uint8_t> bytes(static_cast<size_t>(RowBytes(stored, cols)));
  for (int64_t r = 0; r < rows; ++r) {
    FillHfRandom(arch, p, name, seed, r * cols, cols, row.data());
    EncodeRow(row.data(), cols, stored, bytes.data());
    LINEAGE_RETURN_IF_ERROR(write(bytes.data(), bytes.size()));
  }
  return Status::Ok();
}

DType HfStoredDType(const PlannedTensor& p, DType dtype) {
  if (p.values == Values::kALog) return DType::kF32;
  if (dtype == DType::kQ8_0) {
    if (IsSmall(p) || p.values == Values::kF32Matrix) return DType::kF32;  // as the GGUF keeps them
    if (p.hf_shape.back() % 32 != 0) return DType::kF16;
  }
  return dtype;
}

ModelConfig HfConfigFor(const ModelSpec& spec) {
  ModelConfig c = spec.config;
  c.format = FileFormat::kSafetensors;
  c.delta.v_head_order = VHeadOrder::kGrouped;
  c.zero_centred_norms = IsHybrid(c.arch);
  return c;
}

Result<std::shared_ptr<const Model>> MakeRandomModel(const ModelSpec& spec, DType dtype, uint64_t seed) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16 && dtype != DType::kQ8_0)
    return Unsupported("random model: dtype " + std::string(Info(dtype).name) + " (use f32, f16, bf16, q8_0)");
  auto model = std::make_shared<Model>();
  model->config = HfConfigFor(spec);
  model->config.source_path = "<random " + spec.shape + " seed " + std::to_string(seed) + ">";
  std::map<std::string, TensorView> views;
  for (const PlannedTensor& p : PlanTensors(model->config)) {
    const DType stored = HfStoredDType(p, dtype);
    for (const std::string& name : HfTensorNames(p)) {
      auto bytes = std::make_shared<std::vector<uint8_t>>();
      LINEAGE_RETURN_IF_ERROR(WriteHfRows(spec.config.arch, p, name, seed, stored, [&](const uint8_t* b, size_t n) {
        bytes->insert(bytes->end(), b, b + n);
        return Status::Ok();
      }));
      TensorView v;
      v.name = name;
      v.dtype = stored;
      v.shape = p.hf_shape;
      v.data = bytes->data();
      v.nbytes = static_cast<int64_t>(bytes->size());
      views[name] = v;
      model->buffers.push_back(std::move(bytes));
    }
  }
  const std::string label = model->config.source_path;
  auto lookup = [&](const std::string& name) -> Result<FoundTensor> {
    auto it = views.find(name);
    if (it == views.end()) return NotFound(label + ": tensor '" + name + "' is missing");
    return FoundTensor{it->second, label};
  };
  LINEAGE_ASSIGN_OR_RETURN(model->weights, BindWeights(model->config, lookup));
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace lineage::model
