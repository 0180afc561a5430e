// The one log line written per request (DESIGN.md §2): what was asked, where
// it restored from, and where the time went.
//
//   req=7 POST /v1/chat/completions 200 prompt=5120 cached=4096 restore=checkpoint/ram
//   closest=- captures=1 out=32 finish=stop admit_ms=0.4 prefill_ms=310.2 commit_ms=0.3
//   ttft_ms=330.0 total_ms=1210.5 billing_header=stripped cache=[...]
//
// A request of several choices adds choices=N after finish (one line for
// all of them: MergeChoiceReports).
// (one line; wrapped here). Pure function; the caller serialises writes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "server/generation/backend.h"

namespace lineage::server {

std::string FormatRequestLog(int64_t request_id, const std::string& method, const std::string& path,
                             int http_status, const RequestReport& report, const char* finish);

const char* FinishReasonName(FinishReason finish);

// One report for a request of several choices (OpenAI `n`), what its log
// line and history entry show: tokens out, drafts and captures summed over
// the choices; the restore, the closest match, admission, prefill, commit
// and first token the first choice's (the others restore what it
// computed); the total the longest. `finishes` are each choice's finish
// names, joined by commas when they differ ("stop,length").
RequestReport MergeChoiceReports(std::span<const RequestReport> reports);
std::string JoinFinishes(std::span<const std::string> finishes);

}  // namespace lineage::server
