// StopMatcher: finds the client's stop strings in streamed text.
//
// Text is released only when no stop string can still begin inside it, so a
// stop string split across pieces is found and never streamed. After a
// match, everything from the stop string on is discarded. Not thread-safe;
// one per response.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lineage::server {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Returns the text safe to release. After a match, matched() is set and
  // later calls return "".
  std::string Feed(std::string_view text);
  // Releases what was held back (no match is possible any more).
  std::string Finish();

  // The stop string that matched, if any.
  const std::optional<std::string>& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  std::optional<std::string> matched_;
};

}  // namespace lineage::server
