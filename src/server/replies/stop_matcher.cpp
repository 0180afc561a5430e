#include "server/replies/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace lineage::server {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

std::string StopMatcher::Feed(std::string_view text) {
  if (matched_) return "";
  held_.append(text);
  if (stops_.empty()) return std::exchange(held_, std::string());
  // Earliest match wins; among matches at the same place, the longest.
  size_t best = std::string::npos;
  for (const std::string& s : stops_) {
    size_t p = held_.find(s);
    if (p < best || (p == best && p != std::string::npos && s.size() > matched_->size())) {
      best = p;
      matched_ = s;
    }
  }
  if (matched_) {
    std::string out = held_.substr(0, best);
    held_.clear();
    return out;
  }
  size_t hold = 0;
  for (const std::string& s : stops_) {
    size_t max_len = std::min(held_.size(), s.size() - 1);
    for (size_t len = max_len; len > hold; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return out;
}

std::string StopMatcher::Finish() {
  if (matched_) return "";
  return std::exchange(held_, std::string());
}

}  // namespace lineage::server
