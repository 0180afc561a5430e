// TraceLog: writes the server's requests as a trace in the simulator's native
// format (docs/traces.md, "lineage-trace" version 1), with no text, so that
// `lineage replay` can size the cache for the user's own traffic.
//
// Prompts and replies are cut into segments by a TraceSegmenter
// (segmenter.h) so that the replayed longest common prefix of two
// logged sequences is the real one, with ids keyed by a random salt drawn at
// Open() and written nowhere (no guess of the text can be tested against
// them). Each line also carries the request's
// anchor and history end, so the replay captures where the server did. The
// checksummed trailer is written by Close() (a server killed without it
// leaves a valid trace without the optional trailer).
//
// Lines are written when requests finish, so their t_ms (submission times)
// may be out of order; the reader orders them (docs/traces.md).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/file_env.h"
#include "core/status.h"
#include "trace/segmenter.h"

struct XXH64_state_s;

namespace lineage::trace {

class TraceLog {
 public:
  static constexpr int64_t kBlockTokens = TraceSegmenter::kBlockTokens;

  // Writes through `env` (fault injection reaches it).
  static Result<std::unique_ptr<TraceLog>> Open(const std::string& path,
                                                int64_t memory_tokens = TraceSegmenter::kDefaultMemoryTokens,
                                                FileEnv* env = DefaultFileEnv());
  ~TraceLog();

  // Called at submission with the history end the cache is given (0: none);
  // Append() of the same prompt writes it, and the time from this call to
  // the Append as the request's end ("end_ms"). Kept by a hash of the prompt
  // (identical prompts render identically) until the Append; a request that
  // never finishes leaves its note behind, so past kMaxNotes they are all
  // dropped (requests then in flight are logged without either field).
  // Identical prompts in flight together are matched first in, first out;
  // one refused after this call (overload) leaves its note, and the next
  // identical prompt's end_ms then counts from the refused submission.
  void NoteSubmitted(const std::vector<int32_t>& prompt, int64_t history_end_tokens);
  // `anchor_tokens`, `system_end_tokens`: the anchors the cache was given
  // (0: none).
  // `output`: the reply tokens the sequence was fed, the ones the cache's
  // extension covers (a reply cut by its length limit without its last
  // token), so that the replay extends the entry as far as the server did.
  void Append(int64_t t_ms, const std::vector<int32_t>& prompt, int64_t anchor_tokens,
              const std::vector<int32_t>& output, int64_t system_end_tokens = 0);
  void Close();
  // Ok, or why the log stopped: a failed write ends it (said once on stderr)
  // while the server goes on serving.
  Status status() const;

  static constexpr size_t kMaxNotes = 4096;

 private:
  TraceLog(std::unique_ptr<AppendFile> file, std::string path, int64_t memory_tokens);
  void WriteLine(const std::string& line);  // REQUIRES: mu_ held

  mutable std::mutex mu_;
  std::unique_ptr<AppendFile> file_;  // null once closed or failed
  std::string path_;
  Status status_;
  XXH64_state_s* hash_;
  int64_t requests_ = 0;
  TraceSegmenter segmenter_;
  struct Note {
    int64_t history_end_tokens = 0;
    std::deque<std::chrono::steady_clock::time_point> submitted;  // not yet appended, oldest first
  };
  std::unordered_map<uint64_t, Note> notes_;  // by XXH64 of the prompt
};

}  // namespace lineage::trace
