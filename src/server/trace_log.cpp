#include "server/trace_log.h"

#include <xxhash.h>

#include <memory>

#include <nlohmann/json.hpp>

namespace lineage::server {

namespace {
// Ids are kept below 2^63 so every JSON reader takes them as integers.
uint64_t ChainHash(uint64_t previous, const int32_t* tokens, size_t n) {
  return XXH64(tokens, n * sizeof(int32_t), previous) & 0x7FFFFFFFFFFFFFFFull;
}
}  // namespace

Result<std::unique_ptr<TraceLog>> TraceLog::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return IoError("cannot open trace log " + path);
  std::unique_ptr<TraceLog> log(new TraceLog(f));
  std::lock_guard<std::mutex> lock(log->mu_);
  log->WriteLine(R"({"format":"lineage-trace","version":1,"scenario":"lineage-serve","seed":0})");
  return log;
}

TraceLog::TraceLog(std::FILE* f) : file_(f), hash_(XXH64_createState()) { XXH64_reset(hash_, 0); }

TraceLog::~TraceLog() {
  Close();
  XXH64_freeState(hash_);
}

void TraceLog::WriteLine(const std::string& line) {
  std::string with_newline = line + "\n";
  std::fwrite(with_newline.data(), 1, with_newline.size(), file_);
  std::fflush(file_);
  XXH64_update(hash_, with_newline.data(), with_newline.size());
}

void TraceLog::Append(int64_t t_ms, const std::vector<int32_t>& prompt, int64_t anchor_tokens,
                      const std::vector<int32_t>& output) {
  using json = nlohmann::ordered_json;
  json segments = json::array();
  uint64_t chain = 0;
  for (size_t at = 0; at < prompt.size(); at += kBlockTokens) {
    size_t n = std::min<size_t>(kBlockTokens, prompt.size() - at);
    chain = ChainHash(chain, prompt.data() + at, n);
    segments.push_back({{"id", chain}, {"len", n}});
  }
  json line = {{"t_ms", t_ms}, {"session", ""}, {"prompt", std::move(segments)},
               {"output", {{"id", ChainHash(chain ^ 0x5bd1e995u, output.data(), output.size())}, {"len", output.size()}}}};
  if (anchor_tokens > 0) line["anchor"] = anchor_tokens;
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  WriteLine(line.dump());
  ++requests_;
}

void TraceLog::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH64_digest(hash_)));
  std::string trailer = R"({"end":{"requests":)" + std::to_string(requests_) + R"(,"xxh64":")" + hex + "\"}}\n";
  std::fwrite(trailer.data(), 1, trailer.size(), file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace lineage::server
