#include "tools/bench_workload.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <map>
#include <utility>

#include "core/clock.h"
#include "core/read_file.h"
#include "core/isa.h"
#include "core/kernels.h"
#include "core/percentile.h"
#include "core/roofline.h"
#include "core/tensor_slice.h"
#include "engine/layer_table.h"
#include "engine/sampler.h"

namespace lineage::engine {
namespace {

using Clock = std::chrono::steady_clock;

// User + system CPU seconds of the whole process so far.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// Sum of f(view) over the matrices one decode step streams, by part: every
// layer's, plus the output head (the embedding is read one row at a time).
// A MoE layer streams its router, its shared expert and k routed experts
// (all experts of a layer have the same size, so any k stand for the ones
// a token picks).
template <typename F>
ActiveBytes SumDecodeMatrices(const model::Model& m, F f) {
  const model::Weights& w = m.weights;
  ActiveBytes a;
  a.head = f(w.lm_head);
  for (int64_t i = 0; i < m.config.num_layers; ++i) {
    const model::LayerWeights& l = w.layers[i];
    if (m.config.moe_layer(i)) {
      const model::MoeWeights& e = l.moe;
      a.router += f(e.router);
      a.shared_expert += f(e.shared_gate) + f(e.shared_up) + f(e.shared_down);
      a.routed_experts += m.config.experts.per_token * (f(e.gate.front()) + f(e.up.front()) + f(e.down.front()));
    } else {
      a.dense_ffn += f(l.gate_proj) + f(l.up_proj) + f(l.down_proj);
    }
    const model::MixerKind kind = m.config.mixer(i);
    int64_t& bucket = model::Info(kind).recurrent ? a.recurrent : a.attention;
    for (const TensorView* t : MixerMatrices(kind, l)) bucket += f(*t);
  }
  return a;
}

// Bytes of a view, 0 for an absent one.
int64_t ViewBytes(const TensorView& t) { return t.valid() ? t.nbytes : 0; }
int64_t ViewParams(const TensorView& t) { return t.valid() ? t.numel() : 0; }

// Matmul flops of a prefill of T tokens: 2 per weight per row, the output
// head on the last row only.
// A MoE layer counts the k experts each token uses.
double PrefillGemmFlops(const model::Model& m, int64_t T) {
  const ActiveBytes params = SumDecodeMatrices(m, ViewParams);
  const double layer_params = static_cast<double>(params.total() - params.head);
  return 2.0 * layer_params * static_cast<double>(T) + 2.0 * static_cast<double>(params.head);
}

// Seconds per weight byte of W's decode kernel with the weights in cache:
// the first rows of W (about 128 KiB, which any core's L2 holds) multiplied
// with one token again and again on this thread, as a decode step calls
// the kernel (Gemm, T = 1, activations quantized per call); the best of
// three rounds of at least 4 ms.
double CachedSecondsPerByte(const TensorView& w) {
  const int64_t row_bytes = std::max<int64_t>(1, w.nbytes / std::max<int64_t>(1, w.rows()));
  const int64_t rows = std::clamp<int64_t>((128 << 10) / row_bytes, 1, w.rows());
  const TensorView slice = RowSlice(w, 0, rows);
  std::vector<float> x(static_cast<size_t>(w.cols())), y(static_cast<size_t>(rows));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 113) - 56) / 56.0f;
  kernels::Gemm(slice, x.data(), w.cols(), y.data(), rows, 1, nullptr);
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    int64_t calls = 0;
    const auto t0 = Clock::now();
    double s = 0;
    while (s < 4e-3) {
      for (int i = 0; i < 8; ++i) kernels::Gemm(slice, x.data(), w.cols(), y.data(), rows, 1, nullptr);
      calls += 8;
      s = SecondsBetween(t0, Clock::now());
    }
    best = std::min(best, s / static_cast<double>(calls * slice.nbytes));
  }
  return best;
}

// Seconds one decode step's matrices take on `threads` cores at the rates
// CachedSecondsPerByte measures (once per block type and width): the step's
// time if memory cost nothing, the compute ceiling of decode.
double DecodeComputeSeconds(const model::Model& m, int threads) {
  std::map<std::pair<DType, int64_t>, double> per_byte;
  // SumDecodeMatrices adds what f returns (and multiplies a routed expert's
  // by k), so f returns picoseconds.
  const ActiveBytes ps = SumDecodeMatrices(m, [&](const TensorView& t) -> int64_t {
    if (!t.valid()) return 0;
    auto [it, fresh] = per_byte.try_emplace({t.dtype, t.cols()}, 0.0);
    if (fresh) it->second = CachedSecondsPerByte(t);
    return static_cast<int64_t>(it->second * static_cast<double>(t.nbytes) * 1e12);
  });
  return static_cast<double>(ps.total()) * 1e-12 / threads;
}

// "model name" of /proc/cpuinfo, or "unknown cpu".
std::string CpuName() {
  Result<std::string> info = ReadFileBounded("/proc/cpuinfo", uint64_t{16} << 20);
  if (!info.ok()) return "unknown cpu";
  std::istringstream lines(*info);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown cpu";
}

double MedianAdmitUs(Engine& engine, int64_t context_tokens) {
  // A snapshot of `context_tokens` whose pages are allocated but never
  // computed: admission cost does not depend on their contents.
  Sequence source = engine.NewSequence();
  source.kv().Reserve(context_tokens);
  source.kv().Commit(context_tokens);
  const Snapshot snap = source.Snap();
  std::vector<double> us;
  for (int i = 0; i < 7; ++i) {
    const auto t0 = Clock::now();
    auto seq = engine.Admit(*snap.kv, snap.recurrent.get());
    if (!seq.ok()) return -1;
    seq->kv().Reserve(1);  // first append: copies the shared partial page
    us.push_back(SecondsBetween(t0, Clock::now()) * 1e6);
  }
  return Percentile(std::move(us), 0.5);
}

}  // namespace

Status MapEveryWeightPage(const model::Model& m) {
  for (const auto& file : m.files) LINEAGE_RETURN_IF_ERROR(file->Populate());
  return Status::Ok();
}

Result<BenchReport> RunBench(Engine& engine, const BenchOptions& options) {
  if (options.prompt_tokens <= 0 || options.gen_tokens < 0 || options.depth_tokens < 0)
    return InvalidArgument("bad prompt, gen or depth length");
  const model::Model& m = engine.model();
  BenchReport r;
  r.isa = kernels::IsaName(kernels::ActiveIsa());
  r.cpu = CpuName();
#ifdef NDEBUG
  r.build = "release";
#else
  r.build = "debug";
#endif
  r.threads = engine.pool().size();
  r.prompt_tokens = options.prompt_tokens;
  r.gen_tokens = options.gen_tokens;
  r.depth_tokens = options.depth_tokens;

  std::vector<int32_t> prompt, depth;
  uint32_t x = 12345;
  auto next_id = [&] {
    x = x * 1664525u + 1013904223u;
    return static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(m.config.vocab));
  };
  for (int64_t i = 0; i < options.prompt_tokens; ++i) prompt.push_back(next_id());
  for (int64_t i = 0; i < options.depth_tokens; ++i) depth.push_back(next_id());
  // Warm-up, as in a server that has run before: every weight page mapped
  // (one token alone would leave a mixture of experts' unchosen experts to
  // fault in during the timed decode), then the whole prompt through the
  // model once, as llama-bench warms up, so that the timed prefill does not
  // grow the step's activation buffers (a 512-row step of Kimi Linear
  // zero-fills and faults in about 200 MiB the first time).
  LINEAGE_RETURN_IF_ERROR(MapEveryWeightPage(m));
  {
    Sequence warm = engine.NewSequence();
    PrefillResult ignored;
    LINEAGE_RETURN_IF_ERROR(engine.Prefill(warm, prompt, {}, &ignored));
  }
  Sequence seq = engine.NewSequence();
  PrefillResult pre;
  if (!depth.empty()) LINEAGE_RETURN_IF_ERROR(engine.Prefill(seq, depth, {}, &pre));
  double cpu0 = CpuSeconds();
  auto t0 = Clock::now();
  LINEAGE_RETURN_IF_ERROR(engine.Prefill(seq, prompt, {}, &pre));
  r.prefill_s = SecondsBetween(t0, Clock::now());
  r.prefill_cpu_share = (CpuSeconds() - cpu0) / (r.prefill_s * r.threads);
  r.prefill_tok_s = static_cast<double>(options.prompt_tokens) / r.prefill_s;

  int32_t next = Argmax(pre.logits);
  std::vector<float> logits;
  auto decode_next = [&]() -> Status {  // one greedy step of seq
    Sequence* one[] = {&seq};
    LINEAGE_RETURN_IF_ERROR(engine.Decode(one, std::span(&next, 1), &logits));
    next = Argmax(logits);
    return Status::Ok();
  };
  cpu0 = CpuSeconds();
  t0 = Clock::now();
  for (int64_t i = 0; i < options.gen_tokens; ++i) LINEAGE_RETURN_IF_ERROR(decode_next());
  r.decode_s = SecondsBetween(t0, Clock::now());
  r.decode_cpu_share = (CpuSeconds() - cpu0) / (r.decode_s * r.threads);
  r.decode_tok_s = options.gen_tokens > 0 ? static_cast<double>(options.gen_tokens) / r.decode_s : 0;
  if (options.compare_exact && options.gen_tokens > 0) {
    const bool was_exact = kernels::ExactQ8();
    kernels::SetExactQ8(true);
    t0 = Clock::now();
    Status st = Status::Ok();
    for (int64_t i = 0; i < options.gen_tokens && st.ok(); ++i) st = decode_next();
    kernels::SetExactQ8(was_exact);
    LINEAGE_RETURN_IF_ERROR(st);
    r.decode_exact_tok_s = static_cast<double>(options.gen_tokens) / SecondsBetween(t0, Clock::now());
  }
  if (options.batch > 1 && options.gen_tokens > 0) {
    std::vector<Sequence> batch;
    std::vector<Sequence*> seqs;
    std::vector<int32_t> tokens;
    for (int64_t b = 0; b < options.batch; ++b) {
      batch.push_back(engine.NewSequence());
      LINEAGE_RETURN_IF_ERROR(engine.Prefill(batch.back(), prompt, {}, &pre));
      tokens.push_back(Argmax(pre.logits));
    }
    for (Sequence& b : batch) seqs.push_back(&b);
    std::vector<float> rows;
    t0 = Clock::now();
    for (int64_t i = 0; i < options.gen_tokens; ++i) LINEAGE_RETURN_IF_ERROR(engine.Decode(seqs, tokens, &rows));
    r.batch = options.batch;
    r.decode_batch_step_s = SecondsBetween(t0, Clock::now()) / static_cast<double>(options.gen_tokens);
  }

  r.peak_rss_bytes = PeakRssBytes();
  for (const auto& buf : m.files) r.weight_bytes += static_cast<int64_t>(buf->size());
  r.active = SumDecodeMatrices(m, ViewBytes);
  if (options.gen_tokens > 0 && !m.files.empty()) {
    // The first active.total() bytes of the files (a mixture of experts
    // reads other experts each step, but as many bytes).
    std::vector<std::span<const uint8_t>> ranges;
    int64_t left = r.active.total();
    for (const auto& buf : m.files) {
      const int64_t n = std::min<int64_t>(left, static_cast<int64_t>(buf->size()));
      if (n > 0) ranges.push_back(buf->bytes().first(static_cast<size_t>(n)));
      left -= n;
    }
    const ReadPattern pattern = FastestReadPattern(engine.pool());
    r.decode_paired_read_pattern = ReadPatternName(pattern);
    std::vector<double> ratios;
    for (int64_t i = 0; i < options.gen_tokens; ++i) {
      const auto step0 = Clock::now();
      LINEAGE_RETURN_IF_ERROR(decode_next());
      const double step_s = SecondsBetween(step0, Clock::now());
      ratios.push_back(SecondsToRead(engine.pool(), ranges, pattern) / step_s);
    }
    r.decode_paired_read_ratio_q1 = Percentile(ratios, 0.25);
    r.decode_paired_read_ratio = Percentile(ratios, 0.5);
    r.decode_paired_read_ratio_q3 = Percentile(ratios, 0.75);
  }
  if (m.files.empty()) {
    const int64_t all_experts =
        m.config.moe() ? r.active.routed_experts / m.config.experts.per_token * m.config.experts.count : 0;
    r.weight_bytes = r.active.total() - r.active.routed_experts + all_experts +
                     (m.config.tied_embeddings ? 0 : m.weights.embed.nbytes);
  }
  r.weight_bytes_per_token = r.active.total();
  r.state_bytes = seq.num_tokens() * engine.kv_layout().page_bytes() / engine.kv_layout().page_tokens +
                  seq.recurrent().bytes();

  r.copy_bandwidth_bytes_s = MeasureCopyBandwidth(engine.pool());
  r.decode_bound_tok_s = r.copy_bandwidth_bytes_s / static_cast<double>(r.weight_bytes_per_token);
  r.decode_ratio = r.decode_tok_s / r.decode_bound_tok_s;
  r.read_bandwidth_bytes_s = MeasureBestReadBandwidth(engine.pool());
  r.decode_read_bound_tok_s = r.read_bandwidth_bytes_s / static_cast<double>(r.weight_bytes_per_token);
  r.decode_read_ratio = r.decode_tok_s / r.decode_read_bound_tok_s;
  if (options.gen_tokens > 0) {
    r.decode_compute_bound_tok_s = 1.0 / DecodeComputeSeconds(m, r.threads);
    r.decode_compute_ratio = r.decode_tok_s / r.decode_compute_bound_tok_s;
  }
  r.prefill_gemm_flops = PrefillGemmFlops(m, options.prompt_tokens);
  r.prefill_flop_s = r.prefill_gemm_flops / r.prefill_s;
  r.peak_gemm_flop_s = MeasurePeakGemmFlops(engine.pool(), DType::kBF16);
  r.prefill_ratio = r.prefill_flop_s / r.peak_gemm_flop_s;

  for (int64_t n : options.admission_contexts) r.admission.push_back({n, MedianAdmitUs(engine, n)});
  return r;
}

nlohmann::json BenchReport::ToJson() const {
  nlohmann::json j = {
      {"model", model}, {"cpu", cpu}, {"build", build}, {"isa", isa}, {"threads", threads}, {"prompt_tokens", prompt_tokens},
      {"gen_tokens", gen_tokens}, {"depth_tokens", depth_tokens}, {"prefill_s", prefill_s}, {"prefill_tok_s", prefill_tok_s},
      {"decode_s", decode_s}, {"prefill_cpu_share", prefill_cpu_share}, {"decode_cpu_share", decode_cpu_share}, {"decode_tok_s", decode_tok_s}, {"weight_bytes", weight_bytes},
      {"weight_bytes_per_token", weight_bytes_per_token}, {"state_bytes", state_bytes},
      {"active_bytes", {{"attention", active.attention}, {"recurrent", active.recurrent}, {"router", active.router},
                        {"shared_expert", active.shared_expert}, {"routed_experts", active.routed_experts},
                        {"dense_ffn", active.dense_ffn}, {"head", active.head}}},
      {"peak_rss_bytes", peak_rss_bytes}, {"copy_bandwidth_bytes_s", copy_bandwidth_bytes_s},
      {"decode_bound_tok_s", decode_bound_tok_s}, {"decode_ratio", decode_ratio},
      {"read_bandwidth_bytes_s", read_bandwidth_bytes_s}, {"decode_read_bound_tok_s", decode_read_bound_tok_s},
      {"decode_read_ratio", decode_read_ratio},
      {"decode_paired_read_ratio", decode_paired_read_ratio},
      {"decode_paired_read_ratio_q1", decode_paired_read_ratio_q1},
      {"decode_paired_read_ratio_q3", decode_paired_read_ratio_q3},
      {"decode_paired_read_pattern", decode_paired_read_pattern},
      {"decode_exact_tok_s", decode_exact_tok_s},
      {"batch", batch}, {"decode_batch_step_s", decode_batch_step_s},
      {"decode_compute_bound_tok_s", decode_compute_bound_tok_s}, {"decode_compute_ratio", decode_compute_ratio},
      {"prefill_gemm_flops", prefill_gemm_flops}, {"prefill_flop_s", prefill_flop_s},
      {"peak_gemm_flop_s", peak_gemm_flop_s}, {"prefill_ratio", prefill_ratio}};
  for (const AdmissionCost& a : admission) {
    j["admission"].push_back({{"context_tokens", a.context_tokens}, {"admit_us", a.admit_us}});
  }
  return j;
}

std::string BenchReport::ToTable() const {
  const double MiB = 1024.0 * 1024.0;
  std::string s;
  char line[256];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    s += line;
  };
  add("model            %s\n", model.c_str());
  add("machine          %s, %s, %d threads, %s build\n", cpu.c_str(), isa.c_str(), threads, build.c_str());
  const std::string after = depth_tokens > 0 ? " after " + std::to_string(depth_tokens) + " of context" : "";
  add("prefill          %lld tokens%s in %.3f s: %.1f tokens/s (threads on cpu %.0f%% of the time)\n",
      static_cast<long long>(prompt_tokens), after.c_str(), prefill_s, prefill_tok_s, 100.0 * prefill_cpu_share);
  add("decode           %lld tokens in %.3f s: %.2f tokens/s (threads on cpu %.0f%% of the time)\n",
      static_cast<long long>(gen_tokens), decode_s, decode_tok_s, 100.0 * decode_cpu_share);
  add("copy bandwidth   %.2f GB/s\n", copy_bandwidth_bytes_s / 1e9);
  add("decode bound     %.1f MiB of weights per token -> %.2f tokens/s; achieved %.0f%%\n",
      weight_bytes_per_token / MiB, decode_bound_tok_s, 100.0 * decode_ratio);
  add("read bandwidth   %.2f GB/s (read only) -> %.2f tokens/s; achieved %.0f%% of read bound\n",
      read_bandwidth_bytes_s / 1e9, decode_read_bound_tok_s, 100.0 * decode_read_ratio);
  if (batch > 1)
    add("batched decode   %lld sequences per step: %.2f ms a step (one sequence: %.2f ms)\n",
        static_cast<long long>(batch), 1e3 * decode_batch_step_s, gen_tokens > 0 ? 1e3 * decode_s / gen_tokens : 0.0);
  if (decode_paired_read_ratio > 0) {
    add("paired read      each step against a plain read (%s) of as many weight bytes right after it: "
        "median %.0f%% of the read's speed (quartiles %.0f-%.0f%%)\n",
        decode_paired_read_pattern.c_str(), 100.0 * decode_paired_read_ratio, 100.0 * decode_paired_read_ratio_q1,
        100.0 * decode_paired_read_ratio_q3);
  }
  if (decode_compute_bound_tok_s > 0) {
    add("compute bound    the step's matrices at their kernels' rate with the weights in cache: %.1f GB/s on %d "
        "threads -> %.2f tokens/s; achieved %.0f%%\n",
        decode_compute_bound_tok_s * static_cast<double>(weight_bytes_per_token) / 1e9, threads,
        decode_compute_bound_tok_s, 100.0 * decode_compute_ratio);
  }
  if (active.routed_experts > 0) {
    add("active per token attention %.1f + recurrent %.1f + router %.2f + shared expert %.1f + routed experts %.1f + "
        "head %.1f MiB\n",
        active.attention / MiB, active.recurrent / MiB, active.router / MiB, active.shared_expert / MiB,
        active.routed_experts / MiB, active.head / MiB);
  }
  if (decode_exact_tok_s > 0) {
    add("decode exact     %.2f tokens/s with fp32 activations (--compare-exact); int8 / exact = %.2f\n",
        decode_exact_tok_s, decode_tok_s / decode_exact_tok_s);
  }
  add("peak gemm (bf16) %.1f GFLOP/s; prefill %.1f GFLOP/s of matmuls = %.0f%%\n", peak_gemm_flop_s / 1e9,
      prefill_flop_s / 1e9, 100.0 * prefill_ratio);
  add("memory           peak RSS %.1f MiB; weights %.1f MiB + state %.1f MiB\n", peak_rss_bytes / MiB,
      weight_bytes / MiB, state_bytes / MiB);
  for (const AdmissionCost& a : admission) {
    add("admission        from a snapshot of %lld tokens: %.1f us\n", static_cast<long long>(a.context_tokens),
        a.admit_us);
  }
  return s;
}

}  // namespace lineage::engine
