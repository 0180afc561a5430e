// Options and exit handling shared by the commands that run a model
// (`generate`, `bench`): where the model comes from, the engine settings,
// and turning a Status into an exit code with the error on stderr.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "core/isa.h"
#include "core/status.h"
#include "engine/engine.h"
#include "tools/model_source.h"

namespace lineage::cli {

inline void AddModelOptions(CLI::App& sub, engine::ModelSource& s) {
  sub.add_option("--model", s.path, "model file (.gguf) or Hugging Face directory");
  sub.add_option("--shape", s.shape, "instead of --model: a random-weight model of this shape, built in memory");
  sub.add_option("--arch", s.arch, "with --shape: " + model::ArchNameList())->capture_default_str();
  sub.add_option("--dtype", s.dtype, "with --shape: f32, f16, bf16 or q8_0")->capture_default_str();
  sub.add_option("--vocab", s.vocab, "with --shape: vocabulary size override");
  sub.add_flag("--file-order", s.file_order,
               "with --model: keep Q4_K / Q6_K weights as stored, not copied into lane order for the AVX-512 kernels");
}

// Engine settings a command exposes: threads, the KV page type and the
// kernels' instruction set. The KV type is parsed into `kv_type` and turned
// into options by EngineOptionsFrom; the instruction set is process-wide
// (ApplyIsa).
struct EngineArgs {
  int threads = 2;
  std::string kv_type = "f32";
  std::string isa = "auto";
};

inline void AddEngineOptions(CLI::App& sub, EngineArgs& e) {
  sub.add_option("--threads", e.threads, "threads")->capture_default_str();
  sub.add_option("--kv-type", e.kv_type, "KV page type: f32 (exact) or bf16 (half the memory)")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
  sub.add_option("--isa", e.isa, std::string("kernel instruction set: ") + kernels::kIsaNames)
      ->check(CLI::IsMember({"auto", "avx512", "avx2", "avx2-novnni"}))
      ->capture_default_str();
}

// Pins the kernels as --isa says; an error when this CPU lacks the set.
inline Status ApplyIsa(const EngineArgs& e) {
  if (kernels::ForceIsaByName(e.isa)) return Status::Ok();
  return InvalidArgument("--isa " + e.isa + ": unknown or not on this CPU (" + kernels::kIsaNames + ")");
}

inline engine::EngineOptions EngineOptionsFrom(const EngineArgs& e) {
  engine::EngineOptions o;
  o.num_threads = e.threads;
  o.kv_dtype = e.kv_type == "bf16" ? DType::kBF16 : DType::kF32;
  return o;
}

inline int ExitCode(const Status& st) {
  if (st.ok()) return 0;
  std::fprintf(stderr, "error: %s\n", st.ToString().c_str());
  return 1;
}

}  // namespace lineage::cli
