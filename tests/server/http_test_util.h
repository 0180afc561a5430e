// Helpers for tests that talk to HttpServer over real HTTP.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lineage::server::testing {

struct SseMessage {
  std::string event;  // "" when the message had no event line
  std::string data;
};

// Splits a text/event-stream body into messages; comment lines are skipped.
inline std::vector<SseMessage> ParseSse(const std::string& body) {
  std::vector<SseMessage> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    std::string block = body.substr(pos, end - pos);
    pos = end + 2;
    SseMessage m;
    bool any = false;
    size_t lpos = 0;
    while (lpos <= block.size()) {
      size_t lend = block.find('\n', lpos);
      if (lend == std::string::npos) lend = block.size();
      std::string line = block.substr(lpos, lend - lpos);
      lpos = lend + 1;
      if (line.rfind("event: ", 0) == 0) m.event = line.substr(7), any = true;
      else if (line.rfind("data: ", 0) == 0) m.data += line.substr(6), any = true;
    }
    if (any) out.push_back(m);
  }
  return out;
}

}  // namespace lineage::server::testing
