#include "trace/trace_log.h"

#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>


namespace lineage::trace {

namespace {
uint64_t RandomSalt() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

uint64_t PromptKey(const std::vector<int32_t>& prompt) {
  return XXH64(prompt.data(), prompt.size() * sizeof(int32_t), 0);
}
}  // namespace

Result<std::unique_ptr<TraceLog>> TraceLog::Open(const std::string& path, int64_t memory_tokens, FileEnv* env) {
  Result<std::unique_ptr<AppendFile>> file = env->CreateAppend(path);
  if (!file.ok()) return file.status().With("trace log");
  std::unique_ptr<TraceLog> log(new TraceLog(std::move(file).value(), path, memory_tokens));
  std::lock_guard<std::mutex> lock(log->mu_);
  log->WriteLine(R"({"format":"lineage-trace","version":1,"scenario":"lineage-serve","seed":0})");
  if (!log->status_.ok()) return log->status_;
  return log;
}

TraceLog::TraceLog(std::unique_ptr<AppendFile> file, std::string path, int64_t memory_tokens)
    : file_(std::move(file)), path_(std::move(path)), hash_(XXH64_createState()),
      segmenter_(memory_tokens, RandomSalt()) {
  XXH64_reset(hash_, 0);
}

TraceLog::~TraceLog() {
  Close();
  XXH64_freeState(hash_);
}

void TraceLog::WriteLine(const std::string& line) {
  if (!file_) return;
  std::string with_newline = line + "\n";
  if (Status st = file_->Append(with_newline); !st.ok()) {
    // The log ends here; the requests go on. The file keeps its whole lines
    // (a torn last one is skipped by the reader).
    status_ = st.With("trace log");
    file_.reset();
    std::fprintf(stderr, "%s; no more requests are logged to %s\n", status_.ToString().c_str(), path_.c_str());
    return;
  }
  XXH64_update(hash_, with_newline.data(), with_newline.size());
}

Status TraceLog::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void TraceLog::NoteSubmitted(const std::vector<int32_t>& prompt, int64_t history_end_tokens) {
  uint64_t key = PromptKey(prompt);
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (notes_.size() >= kMaxNotes) notes_.clear();
  Note& note = notes_[key];
  note.history_end_tokens = history_end_tokens;
  note.submitted.push_back(now);
}

void TraceLog::Append(int64_t t_ms, const std::vector<int32_t>& prompt, int64_t anchor_tokens,
                      const std::vector<int32_t>& output, int64_t system_end_tokens) {
  using json = nlohmann::ordered_json;
  const int64_t m = static_cast<int64_t>(prompt.size());
  uint64_t key = PromptKey(prompt);
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  int64_t history_end = 0, end_ms = -1;
  if (auto it = notes_.find(key); it != notes_.end()) {
    history_end = it->second.history_end_tokens;
    auto took = std::chrono::steady_clock::now() - it->second.submitted.front();
    end_ms = t_ms + std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
    it->second.submitted.pop_front();
    if (it->second.submitted.empty()) notes_.erase(it);
  }
  const int64_t anchor = std::min(anchor_tokens, m);
  const int64_t system_end = system_end_tokens > 0 && system_end_tokens < anchor ? system_end_tokens : 0;
  // No cut at the history end: the next turn leaves this prompt a few tokens
  // after it and never cuts there itself (the continuation covers it).
  const int64_t cut_points[] = {system_end, anchor};
  SegmentedRequest cut = segmenter_.Cut(prompt, cut_points, output);
  json segments = json::array();
  for (const TraceSegment& s : cut.prompt) segments.push_back({{"id", s.id}, {"len", s.num_tokens}});
  json line = {{"t_ms", t_ms}, {"session", ""}, {"prompt", std::move(segments)},
               {"output", {{"id", cut.output.id}, {"len", cut.output.num_tokens}}}};
  if (anchor > 0) line["anchor"] = anchor;
  if (system_end > 0) line["system"] = system_end;
  if (history_end > 0 && history_end < m) line["history"] = history_end;
  if (end_ms >= 0) line["end_ms"] = end_ms;
  WriteLine(line.dump());
  ++requests_;
}

void TraceLog::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH64_digest(hash_)));
  std::string trailer = R"({"end":{"requests":)" + std::to_string(requests_) + R"(,"xxh64":")" + hex + "\"}}\n";
  if (Status st = file_->Append(trailer); !st.ok()) status_ = st.With("trace log");
  file_.reset();
}

}  // namespace lineage::trace
