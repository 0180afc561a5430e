// The engine benchmark behind `lineage bench` and bench/bench_engine: after a
// warm-up that maps every weight page and runs one token, one cold prefill
// of a prompt, greedy decode of a number of tokens (then as many again,
// each step paired with a plain read of as many weight bytes), and the two
// roofline figures of the same machine measured in the same run:
//   - copy bandwidth (STREAM-like) and the decode bound it implies: weight
//     bytes read per decoded token / bandwidth;
//   - read bandwidth (a read-only stream, what decode does) and the second
//     decode bound it implies, the same bytes / that bandwidth;
//   - the compute bound: the step's matrices at their kernels' rate with
//     the weights in cache;
//   - peak Gemm rate of bf16 weights (whatever the model's dtype: one
//     reference for every file), against which prefill's Gemm flop rate is
//     set (prefill time counts everything, the flops count only matmuls);
// plus peak RSS against the weight and state bytes it should equal, and the
// cost of admitting a sequence from a snapshot at two context lengths
// (sharing pages: the two must be about equal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/engine.h"

namespace lineage::engine {

struct BenchOptions {
  int64_t prompt_tokens = 512;
  int64_t gen_tokens = 64;
  // Context laid down (untimed) before the timed prompt, as llama-bench -d:
  // the prompt is then a chunk after this many tokens, and decode follows it.
  int64_t depth_tokens = 0;
  // Mid-page lengths, so admission includes the one copy-on-write page.
  std::vector<int64_t> admission_contexts = {1030, 32030};
  // Also decode gen_tokens more with kernels::SetExactQ8(true) (every block
  // type on fp32 activations, the path before the integer kernels), right
  // after the default decode, so the two rates compare on the same load.
  bool compare_exact = false;
  // Also decode gen_tokens steps of this many sequences at once, each with
  // the prompt as its context (the server's batched decode step); 0 or 1:
  // not measured.
  int64_t batch = 0;
};

struct AdmissionCost {
  int64_t context_tokens = 0;
  double admit_us = 0;  // Admit + first append (the copy-on-write of one page)
};

// Weight bytes one decode step streams per token, by part. A MoE layer
// counts its router, its shared expert and the k routed experts a token
// uses; `head` is the output projection (the embedding is one row).
struct ActiveBytes {
  int64_t attention = 0, recurrent = 0, dense_ffn = 0;
  int64_t router = 0, shared_expert = 0, routed_experts = 0;
  int64_t head = 0;
  int64_t total() const { return attention + recurrent + dense_ffn + router + shared_expert + routed_experts + head; }
};

struct BenchReport {
  std::string model;
  std::string cpu;
  std::string build;  // release / debug
  std::string isa;
  int threads = 0;
  int64_t prompt_tokens = 0, gen_tokens = 0, depth_tokens = 0;
  double prefill_s = 0, prefill_tok_s = 0;
  double decode_s = 0, decode_tok_s = 0;
  // CPU seconds used / (wall seconds x threads): below 1 when other processes
  // share the cores (or threads wait), which the speed figures then include.
  double prefill_cpu_share = 0, decode_cpu_share = 0;
  int64_t weight_bytes = 0;            // every weight tensor once
  int64_t weight_bytes_per_token = 0;  // read by one decode step (= active.total())
  ActiveBytes active;
  int64_t state_bytes = 0;             // KV + recurrent of the sequence at the end
  int64_t peak_rss_bytes = 0;
  double copy_bandwidth_bytes_s = 0;
  double decode_bound_tok_s = 0, decode_ratio = 0;
  // The read-only stream (MeasureBestReadBandwidth: the fastest of one
  // stream, one with a software prefetch, and several streams): decode only
  // reads its weights, so this is its own roofline; reported beside the
  // copy bound, which stays as it is.
  double read_bandwidth_bytes_s = 0;
  double decode_read_bound_tok_s = 0, decode_read_ratio = 0;
  // Paired: gen_tokens more decode steps, each followed by a plain read
  // (SecondsToRead) of as many bytes of the weight files as the step reads;
  // read seconds / step seconds per pair, quartiles. On a machine whose
  // memory is shared with others the bound above (the best of many short
  // bursts) and a second of decode see different machines; a pair sees one.
  // The read walks its bytes as FastestReadPattern found best just before.
  double decode_paired_read_ratio_q1 = 0, decode_paired_read_ratio = 0, decode_paired_read_ratio_q3 = 0;
  std::string decode_paired_read_pattern;
  double decode_exact_tok_s = 0;       // with compare_exact, else 0
  int64_t batch = 0;                   // with batch > 1: sequences per step, and
  double decode_batch_step_s = 0;      // ... the mean time of such a step
  // The kernels' own ceiling: each decode matrix's kernel timed on a slice
  // of its rows held in cache, the step's bytes at those rates split over
  // the threads (what decode would reach if memory cost nothing). Where it
  // is below the read bound, decode is compute bound on this machine.
  double decode_compute_bound_tok_s = 0, decode_compute_ratio = 0;
  double prefill_gemm_flops = 0;       // matmul flops of the prefill
  double prefill_flop_s = 0, peak_gemm_flop_s = 0, prefill_ratio = 0;
  std::vector<AdmissionCost> admission;

  nlohmann::json ToJson() const;
  std::string ToTable() const;
};

Result<BenchReport> RunBench(Engine& engine, const BenchOptions& options);

// Faults every page of the model's weight files in (MappedFile::Populate), as
// a server that has run a while has them: one warm-up token maps only the
// experts it routes to, and the rest would fault in during timed steps.
Status MapEveryWeightPage(const model::Model& m);

}  // namespace lineage::engine
