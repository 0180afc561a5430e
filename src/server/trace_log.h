// TraceLog: writes the server's requests as a trace in the simulator's native
// format (docs/traces.md, "lineage-trace" version 1), with no text, so that
// `lineage replay` can size the cache for the user's own traffic.
//
// A prompt's token ids are cut into blocks of kBlockTokens; each block becomes
// one segment whose id is a chained hash of every token up to its end. Two
// prompts therefore share exactly the segments of the blocks they share, and
// the replayed longest common prefix is the real one rounded down to a block
// boundary (at most kBlockTokens - 1 tokens short). The reply is one output
// segment hashed the same way. The checksummed trailer is written by Close()
// (a server killed without it leaves a valid trace without the optional
// trailer).
//
// Thread-safety: Append() may be called from any thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"

struct XXH64_state_s;

namespace lineage::server {

class TraceLog {
 public:
  static constexpr int64_t kBlockTokens = 64;

  static Result<std::unique_ptr<TraceLog>> Open(const std::string& path);
  ~TraceLog();

  void Append(int64_t t_ms, const std::vector<int32_t>& prompt, int64_t anchor_tokens,
              const std::vector<int32_t>& output);
  void Close();

 private:
  TraceLog(std::FILE* f);
  void WriteLine(const std::string& line);  // REQUIRES: mu_ held

  std::mutex mu_;
  std::FILE* file_;
  XXH64_state_s* hash_;
  int64_t requests_ = 0;
};

}  // namespace lineage::server
