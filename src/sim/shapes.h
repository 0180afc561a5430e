// Model shapes: what the simulator needs to know of a model to charge bytes
// and time (docs/sim.md lists every number and where it comes from).
//
// A shape is plain data; the table of known shapes is immutable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace lineage::sim {

struct ModelShape {
  std::string name;
  int64_t kv_bytes_per_token = 0;       // every attention layer, K and V
  int64_t recurrent_bytes = 0;          // whole recurrent state (conv + delta/SSM); 0 = attention-only
  double prefill_tokens_per_s = 0;      // cold prefill speed (flat in context length unless prefill_pair_s)
  double decode_s_per_token = 0;
  int64_t ram_budget_bytes = 0;         // default prompt-cache RAM budget
  int64_t disk_budget_bytes = 0;        // default disk budget
  double disk_read_bytes_per_s = 0;
  double disk_write_bytes_per_s = 0;
  double ram_copy_bytes_per_s = 0;      // whole-state copies (restore clones)
  int attention_layers = 0;             // layers holding KV (per-layer page sizes, vLLM's block rule)
  int recurrent_layers = 0;             // layers holding a recurrent state; 0 = attention-only
  // A machine's finer costs (sim/machine.h), measured by `lineage bench` for
  // one machine (scripts/sim_vs_server); the known shapes leave them 0: a
  // flat prefill speed and a decode step whatever its sequences.
  double prefill_step_s = 0;            // fixed cost of each prefill step
  double prefill_pair_s = 0;            // per prompt token per context token before it (attention)
  double decode_row_s = 0;              // each sequence of a decode step after the first
  double decode_pair_s = 0;             // per decoded token per context token (attention)
  bool attention_only() const { return recurrent_bytes == 0; }
  // Bytes of a full snapshot at n tokens (KV rows [0, n) + recurrent state).
  int64_t SnapshotBytes(int64_t num_tokens) const { return num_tokens * kv_bytes_per_token + recurrent_bytes; }
};

const std::vector<ModelShape>& KnownShapes();
Result<ModelShape> FindShape(const std::string& name);

// "48G", "512M", "1T", "4096", "1.5G": binary multiples (K = 1024).
Result<int64_t> ParseBytes(const std::string& text);
// 1536 -> "1.5K"; used in tables.
std::string FormatBytes(int64_t bytes);

}  // namespace lineage::sim
