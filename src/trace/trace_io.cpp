#include "trace/trace_io.h"

#include "core/read_file.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace lineage::trace {
namespace {

using nlohmann::json;

std::string Where(const std::string& name, size_t line_no) {
  return name + ":" + std::to_string(line_no);
}

Result<uint64_t> ParseId(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  if (v.is_string()) return SegmentIdFromString(v.get<std::string>());
  return InvalidArgument("segment id must be a string or a non-negative integer");
}

Result<Segment> ParseSegment(const json& v, bool need_positive) {
  if (!v.is_object() || !v.contains("id") || !v.contains("len")) return InvalidArgument("segment needs id and len");
  Segment s;
  LINEAGE_ASSIGN_OR_RETURN(s.id, ParseId(v["id"]));
  if (!v["len"].is_number_integer()) return InvalidArgument("segment len must be an integer");
  int64_t len = v["len"].get<int64_t>();
  if (len < (need_positive ? 1 : 0) || len > kMaxRequestTokens)
    return InvalidArgument("segment len " + std::to_string(len) + " out of range (" + (need_positive ? "1" : "0") + ".." +
                           std::to_string(kMaxRequestTokens) + ")");
  s.num_tokens = static_cast<uint32_t>(len);
  if (v.contains("role")) {
    if (!v["role"].is_string() || !ParseRole(v["role"].get<std::string>(), &s.role))
      return InvalidArgument("unknown segment role");
  }
  return s;
}

uint32_t SessionIndex(Trace& trace, std::unordered_map<std::string, uint32_t>& index, const std::string& name) {
  auto [it, fresh] = index.emplace(name, static_cast<uint32_t>(trace.sessions.size()));
  if (fresh) trace.sessions.push_back(name);
  return it->second;
}

Status ParseNativeRequest(const json& j, Trace& trace, std::unordered_map<std::string, uint32_t>& sessions) {
  if (!j.contains("t_ms") || !j["t_ms"].is_number_integer()) return InvalidArgument("request needs integer t_ms");
  if (!j.contains("prompt") || !j["prompt"].is_array() || j["prompt"].empty())
    return InvalidArgument("request needs a non-empty prompt array");
  Request r;
  r.arrival_ms = j["t_ms"].get<int64_t>();
  std::string session = j.contains("session") && j["session"].is_string() ? j["session"].get<std::string>() : "";
  r.session = SessionIndex(trace, sessions, session);
  int64_t prompt_tokens = 0;
  for (const json& s : j["prompt"]) {
    LINEAGE_ASSIGN_OR_RETURN(Segment seg, ParseSegment(s, true));
    prompt_tokens += seg.num_tokens;
    if (prompt_tokens > kMaxRequestTokens)
      return InvalidArgument("prompt longer than " + std::to_string(kMaxRequestTokens) + " tokens");
    r.prompt.push_back(seg);
  }
  r.num_prompt_tokens = prompt_tokens;
  if (j.contains("output")) {
    LINEAGE_ASSIGN_OR_RETURN(r.output, ParseSegment(j["output"], false));
    r.output.role = Role::kAssistant;
  }
  if (j.contains("anchor")) {
    if (!j["anchor"].is_number_integer()) return InvalidArgument("anchor must be an integer");
    r.anchor_tokens = j["anchor"].get<int64_t>();
    if (r.anchor_tokens < 0 || r.anchor_tokens > r.num_prompt_tokens) return InvalidArgument("anchor out of range");
  }
  if (j.contains("system")) {
    if (!j["system"].is_number_integer()) return InvalidArgument("system must be an integer");
    r.system_end_tokens = j["system"].get<int64_t>();
    if (r.system_end_tokens < 0 || r.system_end_tokens >= std::max<int64_t>(1, r.anchor_tokens))
      return InvalidArgument("system out of range (0 <= system < anchor)");
  }
  if (j.contains("end_ms")) {
    if (!j["end_ms"].is_number_integer()) return InvalidArgument("end_ms must be an integer");
    r.end_ms = j["end_ms"].get<int64_t>();
    if (r.end_ms < r.arrival_ms) return InvalidArgument("end_ms before t_ms");
  }
  if (j.contains("history")) {
    if (!j["history"].is_number_integer()) return InvalidArgument("history must be an integer");
    r.history_end_tokens = j["history"].get<int64_t>();
    if (r.history_end_tokens < 0 || r.history_end_tokens >= r.num_prompt_tokens)
      return InvalidArgument("history out of range");
  }
  trace.requests.push_back(std::move(r));
  return Status::Ok();
}

Status ParseMooncakeRequest(const json& j, size_t line_no, Trace& trace) {
  for (const char* key : {"timestamp", "input_length", "output_length"})
    if (!j.contains(key) || !j[key].is_number_integer()) return InvalidArgument(std::string("needs integer ") + key);
  if (!j.contains("hash_ids") || !j["hash_ids"].is_array() || j["hash_ids"].empty())
    return InvalidArgument("needs a non-empty hash_ids array");
  Request r;
  r.arrival_ms = j["timestamp"].get<int64_t>();
  if (!trace.requests.empty() && r.arrival_ms < trace.requests.back().arrival_ms)
    return InvalidArgument("timestamp decreases");
  int64_t input = j["input_length"].get<int64_t>();
  if (input > kMaxRequestTokens) return InvalidArgument("input_length over " + std::to_string(kMaxRequestTokens));
  int64_t num_blocks = static_cast<int64_t>(j["hash_ids"].size());
  if (input <= kMooncakeBlockTokens * (num_blocks - 1) || input > kMooncakeBlockTokens * num_blocks)
    return InvalidArgument("input_length does not match the number of hash_ids");
  int64_t left = input;
  for (const json& h : j["hash_ids"]) {
    if (!h.is_number_integer()) return InvalidArgument("hash_ids must be integers");
    Segment s;
    s.id = SegmentIdFromString("mooncake:" + std::to_string(h.get<int64_t>()));
    s.num_tokens = static_cast<uint32_t>(std::min(left, kMooncakeBlockTokens));
    left -= s.num_tokens;
    r.prompt.push_back(s);
  }
  r.num_prompt_tokens = input;
  int64_t out = j["output_length"].get<int64_t>();
  if (out < 0 || out > kMaxRequestTokens)
    return InvalidArgument("output_length out of range (0.." + std::to_string(kMaxRequestTokens) + ")");
  r.output = {SegmentIdFromString("mooncake-output:" + std::to_string(line_no)), static_cast<uint32_t>(out),
              Role::kAssistant};
  r.session = static_cast<uint32_t>(trace.sessions.size());
  trace.sessions.push_back(std::to_string(line_no));
  trace.requests.push_back(std::move(r));
  return Status::Ok();
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

Result<Trace> ParseTrace(const std::string& text, const std::string& name) {
  Trace trace;
  std::unordered_map<std::string, uint32_t> sessions;
  bool native = false, have_trailer = false;
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool whole = end != std::string::npos;
    if (!whole) end = text.size();
    size_t line_start = pos;
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (have_trailer) return InvalidArgument(Where(name, line_no) + ": content after the trailer");
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    // A native log cut short (a full disk, a killed server) ends in a torn
    // line without its newline: the trace is what came before it.
    if (native && !whole && (j.is_discarded() || !j.is_object())) break;
    if (j.is_discarded() || !j.is_object()) return InvalidArgument(Where(name, line_no) + ": not a JSON object");
    if (line_no == 1 && j.contains("format")) {
      if (!j["format"].is_string() || j["format"].get<std::string>() != kNativeMagic)
        return Unsupported(Where(name, 1) + ": unknown trace format");
      if (!j.contains("version") || j["version"] != kNativeVersion)
        return Unsupported(Where(name, 1) + ": unsupported trace version");
      native = true;
      if (j.contains("scenario") && j["scenario"].is_string()) trace.scenario = j["scenario"].get<std::string>();
      if (j.contains("seed") && j["seed"].is_number_unsigned()) trace.seed = j["seed"].get<uint64_t>();
      continue;
    }
    Status st;
    if (native && j.contains("end")) {
      const json& e = j["end"];
      if (!e.is_object() || !e.contains("requests") || !e.contains("xxh64") || !e["xxh64"].is_string())
        return InvalidArgument(Where(name, line_no) + ": malformed trailer");
      if (e["requests"] != trace.requests.size())
        return Corrupt(Where(name, line_no) + ": trailer request count disagrees");
      if (e["xxh64"].get<std::string>() != Hex16(XXH64(text.data(), line_start, 0)))
        return Corrupt(Where(name, line_no) + ": checksum mismatch");
      have_trailer = true;
      continue;
    }
    st = native ? ParseNativeRequest(j, trace, sessions) : ParseMooncakeRequest(j, line_no, trace);
    if (!st.ok()) return st.With(Where(name, line_no));
  }
  if (trace.requests.empty()) return InvalidArgument(name + ": no requests");
  // A server logs a request when it finishes, so native lines may come out of
  // arrival order; file order breaks ties.
  std::stable_sort(trace.requests.begin(), trace.requests.end(),
                   [](const Request& a, const Request& b) { return a.arrival_ms < b.arrival_ms; });
  return trace;
}

Result<Trace> ReadTrace(const std::string& path) {
  LINEAGE_ASSIGN_OR_RETURN(std::string text, ReadFileBounded(path, kMaxTraceFileBytes));
  return ParseTrace(text, path);
}

std::string FormatNative(const Trace& trace) {
  std::string out;
  json header = {{"format", kNativeMagic}, {"version", kNativeVersion}, {"scenario", trace.scenario},
                 {"seed", trace.seed}};
  out += header.dump() + "\n";
  for (const Request& r : trace.requests) {
    json prompt = json::array();
    for (const Segment& s : r.prompt) {
      json seg = {{"id", s.id}, {"len", s.num_tokens}};
      if (s.role != Role::kUser) seg["role"] = RoleName(s.role);
      prompt.push_back(std::move(seg));
    }
    json j = {{"t_ms", r.arrival_ms},
              {"session", trace.sessions.at(r.session)},
              {"prompt", std::move(prompt)},
              {"output", {{"id", r.output.id}, {"len", r.output.num_tokens}}}};
    if (r.anchor_tokens > 0) j["anchor"] = r.anchor_tokens;
    if (r.system_end_tokens > 0) j["system"] = r.system_end_tokens;
    if (r.history_end_tokens > 0) j["history"] = r.history_end_tokens;
    if (r.end_ms >= 0) j["end_ms"] = r.end_ms;
    out += j.dump() + "\n";
  }
  json trailer = {{"end", {{"requests", trace.requests.size()}, {"xxh64", Hex16(XXH64(out.data(), out.size(), 0))}}}};
  out += trailer.dump() + "\n";
  return out;
}

std::string FormatMooncake(const Trace& trace) {
  std::string out;
  std::map<std::pair<int64_t, uint64_t>, int64_t> ids;  // (parent id, block content hash) -> dense id
  std::vector<uint32_t> tokens;
  for (const Request& r : trace.requests) {
    tokens.clear();
    ExpandTokens(r.prompt, tokens);
    json hash_ids = json::array();
    int64_t parent = -1;
    for (size_t at = 0; at < tokens.size(); at += kMooncakeBlockTokens) {
      size_t n = std::min<size_t>(kMooncakeBlockTokens, tokens.size() - at);
      uint64_t content = XXH64(tokens.data() + at, n * sizeof(uint32_t), 0);
      auto [it, fresh] = ids.emplace(std::make_pair(parent, content), static_cast<int64_t>(ids.size()));
      parent = it->second;
      hash_ids.push_back(parent);
    }
    json j = {{"timestamp", r.arrival_ms},
              {"input_length", r.num_prompt_tokens},
              {"output_length", r.output.num_tokens},
              {"hash_ids", std::move(hash_ids)}};
    out += j.dump() + "\n";
  }
  return out;
}


}  // namespace lineage::trace
