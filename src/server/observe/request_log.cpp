#include "server/observe/request_log.h"

#include <algorithm>
#include <cstdio>

namespace lineage::server {

const char* FinishReasonName(FinishReason finish) {
  switch (finish) {
    case FinishReason::kEndOfSequence: return "eos";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "?";
}

std::string FormatRequestLog(int64_t request_id, const std::string& method, const std::string& path,
                             int http_status, const RequestReport& r, const char* finish) {
  auto ms = [](int64_t us) { return us < 0 ? std::string("-") : std::to_string(us / 1000) + "." + std::to_string(us / 100 % 10); };
  std::string closest = r.closest_tokens < 0 ? "-" : std::to_string(r.closest_tokens);
  const std::string choices = r.choices > 1 ? " choices=" + std::to_string(r.choices) : "";
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "req=%lld %s %s %d prompt=%lld cached=%lld reused=%lld restore=%s/%s closest=%s captures=%lld out=%lld "
                "drafts=%lld/%lld finish=%s%s admit_ms=%s prefill_ms=%s commit_ms=%s ttft_ms=%s total_ms=%s",
                static_cast<long long>(request_id), method.c_str(), path.c_str(), http_status,
                static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.cached_tokens),
                static_cast<long long>(r.reused_tokens),
                r.restore_kind.c_str(), r.restore_tier.c_str(), closest.c_str(), static_cast<long long>(r.captures),
                static_cast<long long>(r.completion_tokens), static_cast<long long>(r.draft_accepted),
                static_cast<long long>(r.draft_tokens), finish, choices.c_str(), ms(r.admission_us).c_str(),
                ms(r.prefill_us).c_str(), ms(r.commit_us).c_str(), ms(r.first_token_us).c_str(),
                ms(r.total_us).c_str());
  std::string line = buf;
  if (!r.notes.empty()) line += " " + r.notes;
  if (!r.cache_detail.empty()) line += " cache=[" + r.cache_detail + "]";
  return line;
}

RequestReport MergeChoiceReports(std::span<const RequestReport> reports) {
  if (reports.empty()) return RequestReport{};
  RequestReport merged = reports.front();
  merged.choices = static_cast<int64_t>(reports.size());
  for (const RequestReport& r : reports.subspan(1)) {
    merged.completion_tokens += r.completion_tokens;
    merged.draft_tokens += r.draft_tokens;
    merged.draft_accepted += r.draft_accepted;
    merged.captures += r.captures;
    merged.total_us = std::max(merged.total_us, r.total_us);
  }
  return merged;
}

std::string JoinFinishes(std::span<const std::string> finishes) {
  std::string joined;
  for (size_t i = 0; i < finishes.size(); ++i) {
    if (std::find(finishes.begin(), finishes.begin() + static_cast<std::ptrdiff_t>(i), finishes[i]) !=
        finishes.begin() + static_cast<std::ptrdiff_t>(i))
      continue;
    if (!joined.empty()) joined += ",";
    joined += finishes[i];
  }
  return joined;
}

}  // namespace lineage::server
