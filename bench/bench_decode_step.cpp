// bench_decode_step: where a decode step's time goes, measured so that a
// shared machine disturbs it little.
//
// Usage: bench_decode_step (--model PATH | --shape NAME [--dtype D]) [--threads N]
//                          [--steps N] [--passes N] [--prompt N] [--isa avx512|avx2|avx2-novnni]
//
// Prints, for one sequence after a prompt of --prompt tokens (16):
//   step     each decode step timed alone: best and median ms (the best
//            step is the one that ran least disturbed)
//   gemv     the step's projections replayed exactly as the forward pass
//            calls them (MultiGemm / Gemm with the engine's pool, the same
//            weights), each call timed alone over --passes passes: the sum
//            of every call's best time, and of its median
//   read     the same bytes read with plain vector loads (SecondsToRead,
//            walked as FastestReadPattern found best), split over the pool the same way,
//            in a pass of their own after the products
//            (so neither finds the other's bytes in cache): the floor the
//            memory system allows
//   copy     the STREAM-like copy bandwidth `lineage bench` divides by
// so best step - gemv best = the step's other work (norms, conv, delta
// rule, attention, sampling, barriers), and gemv / read = the kernels'
// efficiency on the mapped weights. --passes 0 times the steps alone (for a
// sampling profiler: nothing but decode steps runs after the prompt).
#include <span>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_machine.h"
#include "mapping_backing.h"
#include "core/gemm_multi.h"
#include "core/kernels.h"
#include "core/roofline.h"
#include "tools/bench_workload.h"
#include "engine/engine.h"
#include "tools/model_source.h"
#include "engine/sampler.h"

namespace {

using namespace lineage;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Timings {
  std::vector<double> ms;
  double Best() const { return *std::min_element(ms.begin(), ms.end()); }
  double Median() const {
    std::vector<double> v = ms;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
};

// One projection call of a decode step: the weights it reads (several for a
// MultiGemm) and its input width.
struct Call {
  std::string name;
  std::vector<const TensorView*> ws;
  int64_t in = 0, bytes = 0;
  Timings gemv, read;
};

std::vector<Call> DecodeCalls(const model::Model& m) {
  std::vector<Call> calls;
  auto add = [&](std::string name, std::vector<const TensorView*> ws) {
    Call c;
    c.name = std::move(name), c.ws = std::move(ws);
    c.in = c.ws.front()->cols();
    for (const TensorView* w : c.ws) c.bytes += w->nbytes;
    calls.push_back(std::move(c));
  };
  for (const model::LayerWeights& l : m.weights.layers) {
    if (l.kind == model::LayerKind::kLinearAttention) {
      add("gdn in_proj", {&l.linear.in_proj_qkv, &l.linear.in_proj_z, &l.linear.in_proj_b, &l.linear.in_proj_a});
      add("gdn out_proj", {&l.linear.out_proj});
    } else {
      add("attn q/k/v", {&l.full.q_proj, &l.full.k_proj, &l.full.v_proj});
      add("attn o_proj", {&l.full.o_proj});
    }
    if (m.config.moe()) {
      // The router, then gate|up of the shared expert and of k routed experts
      // in one pass (as the forward pass calls them for one row), then the
      // k + 1 down projections one call each (the forward pass runs them as
      // one pass of row blocks). Experts 0..k-1 stand for the chosen ones:
      // every expert has the same shape and type.
      const int64_t k = m.config.experts.per_token;
      add("moe router", {&l.moe.router});
      std::vector<const TensorView*> gate_up = {&l.moe.shared_gate, &l.moe.shared_up};
      for (int64_t e = 0; e < k; ++e) {
        gate_up.push_back(&l.moe.gate[e]);
        gate_up.push_back(&l.moe.up[e]);
      }
      add("moe gate/up", gate_up);
      add("moe down", {&l.moe.shared_down});
      for (int64_t e = 0; e < k; ++e) add("moe down", {&l.moe.down[e]});
    } else {
      add("ffn gate/up", {&l.gate_proj, &l.up_proj});
      add("ffn down", {&l.down_proj});
    }
  }
  add("lm_head", {&m.weights.lm_head});
  return calls;
}

void RunGemv(Call& c, ThreadPool& pool, const float* x, float* y) {
  const auto t0 = Clock::now();
  if (c.ws.size() == 1) {
    kernels::Gemm(*c.ws[0], x, c.in, y, c.ws[0]->rows(), 1, &pool);
  } else {
    std::vector<kernels::GemmTarget> targets;  // what engine::MultiGemm passes on
    int64_t off = 0;
    for (const TensorView* w : c.ws) {
      targets.push_back({w, y + off, w->rows()});
      off += w->rows();
    }
    kernels::GemmMulti(targets, x, c.in, 1, &pool);
  }
  c.gemv.ms.push_back(Ms(t0));
}

// The same bytes read by the roofline's read loop (the active ISA's widest
// loads), in a pass of its own: read right after its product, a call of a
// few MiB would come from the last-level cache.
void RunRead(Call& c, ThreadPool& pool, ReadPattern pattern) {
  std::vector<std::span<const uint8_t>> ranges;
  for (const TensorView* w : c.ws) ranges.emplace_back(static_cast<const uint8_t*>(w->data), w->nbytes);
  c.read.ms.push_back(1e3 * SecondsToRead(pool, ranges, pattern));
}

}  // namespace

int main(int argc, char** argv) {
  engine::ModelSource source;
  int threads = 2, steps = 32, passes = 8, prompt_tokens = 16;
  for (int i = 1; i < argc; ++i) {
    const bool v = i + 1 < argc;
    if (!std::strcmp(argv[i], "--model") && v) {
      source.path = argv[++i];
    } else if (!std::strcmp(argv[i], "--shape") && v) {
      source.shape = argv[++i];
    } else if (!std::strcmp(argv[i], "--dtype") && v) {
      source.dtype = argv[++i];
    } else if (!std::strcmp(argv[i], "--threads") && v) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--steps") && v) {
      steps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--isa") && v) {
      const std::string isa = argv[++i];
      if (!kernels::ForceIsaByName(isa)) {
        std::fprintf(stderr, "--isa %s: unknown or not on this CPU (%s)\n", isa.c_str(), kernels::kIsaNames);
        return 1;
      }
    } else if (!std::strcmp(argv[i], "--passes") && v) {
      passes = std::max(0, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--prompt") && v) {
      prompt_tokens = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: %s (--model PATH | --shape NAME [--dtype D]) [--threads N] [--steps N] [--passes N] "
                   "[--prompt N] [--isa avx512|avx2|avx2-novnni]\n",
                   argv[0]);
      return 2;
    }
  }
  if (source.path.empty() && source.shape.empty()) source.shape = "qwen3.5-0.8b";
  auto m = engine::OpenModel(source);
  if (!m.ok()) {
    std::fprintf(stderr, "bench_decode_step: %s\n", m.status().ToString().c_str());
    return 1;
  }
  if (Status st = engine::MapEveryWeightPage(**m); !st.ok()) {
    std::fprintf(stderr, "bench_decode_step: %s\n", st.ToString().c_str());
    return 1;
  }
  engine::EngineOptions eo;
  eo.num_threads = threads;
  auto eng = engine::Engine::Create(*m, eo);
  if (!eng.ok()) {
    std::fprintf(stderr, "bench_decode_step: %s\n", eng.status().ToString().c_str());
    return 1;
  }
  engine::Engine& e = **eng;
  std::printf("%s\ncpu: %s, %s, threads %d; load: %s\n", engine::DescribeModel(**m).c_str(),
              bench::CpuModel().c_str(), kernels::IsaName(kernels::ActiveIsa()), e.pool().size(),
              bench::Shell("cut -d' ' -f1-3 /proc/loadavg").c_str());

  // Decode steps, each timed alone.
  const int64_t vocab = (*m)->config.vocab;
  std::vector<int32_t> prompt;
  for (int i = 0; i < prompt_tokens; ++i) prompt.push_back(static_cast<int32_t>((i * 7919 + 13) % vocab));
  engine::Sequence seq = e.NewSequence();
  engine::PrefillResult pre;
  if (Status st = e.Prefill(seq, prompt, {}, &pre); !st.ok()) {
    std::fprintf(stderr, "bench_decode_step: %s\n", st.ToString().c_str());
    return 1;
  }
  std::vector<float> logits = pre.logits;
  Timings step;
  for (int i = 0; i < steps; ++i) {
    const int32_t next = engine::Argmax(logits);
    engine::Sequence* one[] = {&seq};
    const auto t0 = Clock::now();
    if (Status st = e.Decode(one, std::span(&next, 1), &logits); !st.ok()) {
      std::fprintf(stderr, "bench_decode_step: %s\n", st.ToString().c_str());
      return 1;
    }
    step.ms.push_back(Ms(t0));
  }

  if (passes == 0) {
    std::printf("step   best %.2f ms, median %.2f ms; %d steps\n", step.Best(), step.Median(), steps);
    return 0;
  }

  // The step's projections, call by call.
  std::vector<Call> calls = DecodeCalls(**m);
  int64_t max_in = 0, max_out = 0, step_bytes = 0;
  for (const Call& c : calls) {
    max_in = std::max(max_in, c.in);
    int64_t out = 0;
    for (const TensorView* w : c.ws) out += w->rows();
    max_out = std::max(max_out, out);
    step_bytes += c.bytes;
  }
  std::vector<float> x(static_cast<size_t>(max_in)), y(static_cast<size_t>(max_out));
  for (int64_t i = 0; i < max_in; ++i) x[i] = static_cast<float>((i * 7919) % 113) / 113.0f - 0.5f;
  const ReadPattern read_pattern = passes > 0 ? FastestReadPattern(e.pool()) : ReadPattern{};
  Timings gemv_pass;
  for (int p = 0; p < passes; ++p) {
    const auto t0 = Clock::now();
    for (Call& c : calls) RunGemv(c, e.pool(), x.data(), y.data());
    gemv_pass.ms.push_back(Ms(t0));
    for (Call& c : calls) RunRead(c, e.pool(), read_pattern);
  }
  double gemv_best = 0, gemv_median = 0, read_best = 0, read_median = 0, lm_best = 0;
  for (const Call& c : calls) {
    gemv_best += c.gemv.Best();
    gemv_median += c.gemv.Median();
    read_best += c.read.Best();
    read_median += c.read.Median();
    if (c.name == "lm_head") lm_best = c.gemv.Best();
  }
  const double copy_gbps = MeasureCopyBandwidth(e.pool()) / 1e9;
  const double mib = static_cast<double>(step_bytes) / (1 << 20);
  auto gbps = [&](double ms) { return step_bytes / ms / 1e6; };
  std::printf("weights read per step: %.1f MiB in %zu projection calls; mapping: %s\n", mib, calls.size(),
              bench::MappingBacking((*m)->weights.lm_head.data).c_str());
  std::printf("%-6s %9s %9s   %s\n", "", "best ms", "median ms", "");
  std::printf("%-6s %9.2f %9.2f   %.2f tokens/s at best; %d steps\n", "step", step.Best(), step.Median(),
              1e3 / step.Best(), steps);
  std::printf("%-6s %9.2f %9.2f   %.1f GB/s (sum of per-call best); lm_head %.2f ms = %.1f GB/s\n", "gemv",
              gemv_best, gemv_median, gbps(gemv_best), lm_best,
              (*m)->weights.lm_head.nbytes / lm_best / 1e6);
  std::printf("%-6s %9.2f %9.2f   %.1f GB/s (%s)\n", "read", read_best, read_median, gbps(read_best),
              ReadPatternName(read_pattern).c_str());
  // By kind of call: where the matrix products fall behind a plain read.
  std::vector<std::string> kinds;
  for (const Call& c : calls)
    if (std::find(kinds.begin(), kinds.end(), c.name) == kinds.end()) kinds.push_back(c.name);
  for (const std::string& kind : kinds) {
    double g = 0, r = 0, bytes = 0;
    int n = 0;
    for (const Call& c : calls)
      if (c.name == kind) g += c.gemv.Best(), r += c.read.Best(), bytes += static_cast<double>(c.bytes), ++n;
    std::printf("  %-13s %3d calls %8.1f MiB  gemv %7.2f ms  read %7.2f ms  gemv/read %.2f\n", kind.c_str(), n,
                bytes / (1 << 20), g, r, g / r);
  }
  std::printf("copy   %.1f GB/s -> bound %.2f tokens/s; best step = %.0f%% of it, gemv alone %.0f%%\n", copy_gbps,
              copy_gbps * 1e9 / step_bytes, 100 * step_bytes / (step.Best() * 1e6) / copy_gbps,
              100 * gbps(gemv_best) / copy_gbps);
  return 0;
}
