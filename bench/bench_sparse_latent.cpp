// bench_sparse_latent: one sparse latent-attention layer (lightning indexer,
// top-k 2048, absorbed MLA) at the widths of GLM-5 (hidden 6144, 64 heads,
// q_lora 2048, the 512 + 64 latent, nope 192, v 256, an indexer of 32 heads
// of 128; spec latent-attention §3.1), Q8_0 weights, f32 pages: milliseconds
// per forward of a run of T new rows after C rows of context, for every
// path of latent_paths.h forced and for the one the cost model chooses.
// The same layer without its indexer (dense latent attention, the form
// Kimi Linear runs) is timed beside it for decode.
//
// The context is laid down without computing it: random latent rows and
// indexer keys in the pages (a layer's work does not depend on the values,
// but the selection does: random keys spread it over the whole context,
// the worst case for the gathers). The FFN is not timed.
//
// Prints, per (C, T), sparse and dense: each path's best of `reps` runs (a
// run over 2 s once; -1 where the path does not apply, -2 where the model
// puts it at over 4x the cheapest and it is not run), the path the cost model picks (its modelled times on
// one thread below) and the time with it, and how far that is from the best
// path; then decode's context cost (the time C adds to a one-row forward
// over C = 1) sparse and dense, and the 44-row warm turn at 20k against 80k.
//   bench_sparse_latent [--threads N] [--reps N] [--contexts 20000,80000]
//                       [--chunks 1,2,8,...] [--dense-max-chunk 512] [--json]
#include <xmmintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_machine.h"
#include "engine/engine.h"
#include "kinds/latent_attention/engine/latent_paths.h"
#include "engine/layers.h"
#include "kinds/sparse_latent_attention/engine/lightning_indexer.h"
#include "tools/random_model.h"
#include "model/shapes.h"

using namespace lineage;

namespace {

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoll(item.c_str()));
  return out;
}

struct Layer {
  std::shared_ptr<const model::Model> model;
  std::unique_ptr<engine::Engine> engine;
};

// GLM-5's latent layer alone: one layer, a small vocabulary and FFN (not
// timed); sparse with its indexer, or dense without.
Layer MakeLayer(bool sparse, int threads) {
  auto spec = model::LookupShape(model::Arch::kGlmDsa, "glm-5", 4096);
  auto cut = model::CutLayers(*spec, 1);
  if (!cut.ok()) std::exit(1);
  model::ModelConfig& c = cut->config;
  c.intermediate = 256;
  c.experts.leading_dense_layers = 1;
  if (!sparse) {
    c.indexer.heads = c.indexer.dim = c.indexer.top_k = 0;
    c.indexer.full.clear();
    for (model::LayerPair& p : c.layers)
      if (p.mixer == model::MixerKind::kSparseLatent) p.mixer = model::MixerKind::kLatent;
  }
  auto m = model::MakeRandomModel(*cut, DType::kQ8_0, 1);
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
    std::exit(1);
  }
  engine::EngineOptions o;
  o.num_threads = threads;
  auto e = engine::Engine::Create(*m, o);
  if (!e.ok()) std::exit(1);
  return {*m, std::move(*e)};
}

// Best milliseconds of `reps` forwards of T rows after C rows of context
// through layer 0's mixer on `path` (after one untimed warm-up forward);
// *modelled gets the cost model's estimates for the selection made.
constexpr double kSlowMs = 2000;
// Paths modelled at more than this multiple of the cheapest are not timed.
constexpr double kSkipRatio = 4.0;
bool best_slow(double best_ms) { return best_ms > kSlowMs && best_ms < 1e29; }

double TimeForward(Layer& layer, int64_t C, int64_t T, engine::LatentPath path, int reps,
                   engine::LatentCosts* modelled = nullptr, bool indexer_only = false) {
  const model::ModelConfig& c = layer.model->config;
  engine::Engine& eng = *layer.engine;
  const int64_t H = c.hidden, W = c.mla.latent_dim(), D = c.indexer.dim;
  uint32_t x = 7;
  auto rnd = [&] { return static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f; };
  engine::Sequence seq = eng.NewSequence();
  std::vector<float> row(static_cast<size_t>(std::max(W, D)));
  seq.kv().Reserve(C);
  for (int64_t p = 0; p < C; ++p) {
    for (float& v : row) v = rnd();
    seq.kv().WriteRow(0, 0, p, row.data(), row.data() + W / 2);
    if (c.sparse()) seq.kv().WriteIndexRow(0, p, row.data());
  }
  seq.kv().Commit(C);
  std::vector<int32_t> tokens(static_cast<size_t>(T), 7);
  engine::Batch batch;
  batch.Add(&seq, tokens.data(), T);
  engine::Workspace ws;
  ws.Ensure(c, T);
  std::vector<float> xn(static_cast<size_t>(T * H)), out(static_cast<size_t>(T * H));
  for (float& v : xn) v = rnd();
  const engine::StepContext ctx{c, batch, ws, &eng.pool(), 8, path};
  seq.kv().Reserve(T);
  double best = 1e30;
  const model::MlaWeights& w = layer.model->weights.layers[0].mla;
  for (int rep = -1; rep < reps; ++rep) {
    // A forward of seconds is measured once (after no warm-up): its noise
    // is small next to it, and the table would take hours otherwise.
    if (rep == 0 && best_slow(best)) break;
    const auto t0 = std::chrono::steady_clock::now();
    if (indexer_only) {
      engine::SelectKeys(w.indexer, 0, ctx, xn.data(), ws.latent.qr.data(), ws.latent.rope.data(),
                         &ws.latent.indexer.selection);
    } else {
      engine::LatentAttention(w, 0, c.sparse() ? 0 : -1, c.sparse(), ctx, xn.data(), out.data());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (rep >= 0 || ms > kSlowMs) best = std::min(best, ms);
  }
  if (modelled != nullptr) {
    const engine::LatentShape shape{c.num_heads, W, c.mla.kv_lora_rank, c.mla.qk_nope_dim, c.mla.qk_rope_dim, c.mla.v_head_dim};
    *modelled = engine::EstimateLatentCosts(shape, C, T, c.sparse() ? &ws.latent.indexer.selection : nullptr, 0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 3;
  int64_t dense_max_chunk = 512;
  bool json = false;
  std::vector<int64_t> contexts = {20000, 80000}, chunks = {1, 2, 8, 21, 44, 128, 256, 512, 1024, 2048};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--contexts") contexts = ParseList(next());
    else if (a == "--chunks") chunks = ParseList(next());
    else if (a == "--dense-max-chunk") dense_max_chunk = std::atoll(next().c_str());
    else if (a == "--json") json = true;
  }
  _mm_setcsr(_mm_getcsr() | 0x8040);
  std::printf("bench_sparse_latent: GLM-5 latent layer (64 heads, 512 + 64 latent, indexer 32 x 128, top-k 2048), "
              "Q8_0 weights, f32 pages, %d threads\n", threads);
  std::printf("machine: %s, %s build, commit %s\n", bench::CpuModel().c_str(), bench::BuildType(),
              bench::CommitOf(std::filesystem::path(__FILE__).parent_path().string()).c_str());
  Layer sparse = MakeLayer(true, threads);
  Layer dense = MakeLayer(false, threads);
  using engine::LatentPath;
  const LatentPath paths[] = {LatentPath::kAbsorbed, LatentPath::kBlockGather, LatentPath::kExpanded};
  std::map<std::pair<int64_t, int64_t>, double> chosen_ms;
  std::string rows_json;
  for (Layer* layer : {&sparse, &dense}) {
    const bool is_sparse = layer == &sparse;
    std::printf("\n%s latent attention\n", is_sparse ? "sparse (top-k 2048)" : "dense");
    std::printf("%8s %6s %12s %14s %12s %13s %12s %8s\n", "context", "T", "absorbed_ms", "block_gather_ms",
                "expanded_ms", "chosen", "chosen_ms", "vs_best");
    for (int64_t C : contexts) {
      for (int64_t T : chunks) {
        if (!is_sparse && T > dense_max_chunk) continue;
        engine::LatentCosts model;
        const double auto_ms = TimeForward(*layer, C, T, LatentPath::kAuto, reps, &model);
        const double modelled[3] = {model.absorbed, model.block_gather, model.expanded};
        double least = model.absorbed;
        for (double m : modelled)
          if (m >= 0) least = std::min(least, m);
        double ms[3];
        for (int p = 0; p < 3; ++p) {
          // One row takes the absorbed path whatever is asked; dense has no
          // block gather; a path modelled at over kSkipRatio times the
          // cheapest is not run (-2 in the table).
          const bool absent = (T == 1 && p > 0) || modelled[p] < 0;
          ms[p] = absent ? -1 : modelled[p] > kSkipRatio * least ? -2 : TimeForward(*layer, C, T, paths[p], reps);
        }
        const LatentPath pick = T == 1 ? LatentPath::kAbsorbed : engine::ChooseLatentPath(model);
        double best = 1e30;
        for (double m : ms)
          if (m >= 0) best = std::min(best, m);
        if (is_sparse) chosen_ms[{C, T}] = auto_ms;
        std::printf("%8lld %6lld %12.2f %14.2f %12.2f %13s %12.2f %7.0f%%\n", static_cast<long long>(C),
                    static_cast<long long>(T), ms[0], ms[1], ms[2], engine::LatentPathName(pick), auto_ms,
                    100.0 * (auto_ms / best - 1.0));
        std::printf("%15s modelled (1 thread): absorbed %.1f ms, block gather %.1f ms, expanded %.1f ms\n", "",
                    model.absorbed * 1e3, model.block_gather * 1e3, model.expanded * 1e3);
        std::fflush(stdout);
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "%s{\"attention\":\"%s\",\"context\":%lld,\"T\":%lld,\"absorbed_ms\":%.3f,"
                      "\"block_gather_ms\":%.3f,\"expanded_ms\":%.3f,\"chosen\":\"%s\",\"chosen_ms\":%.3f}",
                      rows_json.empty() ? "" : ",", is_sparse ? "sparse" : "dense", static_cast<long long>(C),
                      static_cast<long long>(T), ms[0], ms[1], ms[2], engine::LatentPathName(pick), auto_ms);
        rows_json += buf;
      }
    }
  }
  // Decode's context cost, sparse against dense, at the first context.
  const int64_t C0 = contexts.front();
  const double s1 = TimeForward(sparse, 1, 1, LatentPath::kAuto, reps + 2);
  const double sC = TimeForward(sparse, C0, 1, LatentPath::kAuto, reps + 2);
  const double d1 = TimeForward(dense, 1, 1, LatentPath::kAuto, reps + 2);
  const double dC = TimeForward(dense, C0, 1, LatentPath::kAuto, reps + 2);
  const double idx = TimeForward(sparse, C0, 1, LatentPath::kAuto, reps + 2, nullptr, true);
  const double idx1 = TimeForward(sparse, 1, 1, LatentPath::kAuto, reps + 2, nullptr, true);
  std::printf("decode's indexer at %lld: %.2f ms (%.2f at 1)\n", static_cast<long long>(C0), idx, idx1);
  std::printf("decode at %lld: sparse %.2f ms (context adds %.2f), dense %.2f ms (context adds %.2f): "
              "layer %.2fx, context cost %.2fx\n",
              static_cast<long long>(C0), sC, sC - s1, dC, dC - d1, sC / dC, (sC - s1) / (dC - d1));
  if (contexts.size() > 1 && chosen_ms.count({contexts[0], 44}) && chosen_ms.count({contexts[1], 44})) {
    const double a = chosen_ms[{contexts[0], 44}], b = chosen_ms[{contexts[1], 44}];
    std::printf("44-row warm turn: %.2f ms at %lld, %.2f ms at %lld: %.2fx\n", a, static_cast<long long>(contexts[0]),
                b, static_cast<long long>(contexts[1]), b / a);
  }
  if (json)
    std::printf("{\"bench\":\"sparse_latent\",\"threads\":%d,\"rows\":[%s],\"decode\":{\"sparse_ms\":%.3f,"
                "\"sparse_context_ms\":%.3f,\"dense_ms\":%.3f,\"dense_context_ms\":%.3f}}\n",
                threads, rows_json.c_str(), sC, sC - s1, dC, dC - d1);
  return 0;
}
