#include "text/stream_decoder.h"

#include "text/utf8.h"

namespace lineage::text {

std::string StreamDecoder::Push(TokenId id) {
  if (!options_.render_special && tokenizer_.IsControl(id)) return {};
  return PushBytes(tokenizer_.TokenBytes(id));
}

std::string StreamDecoder::PushBytes(std::string_view bytes) {
  pending_.append(bytes);
  size_t hold = IncompleteUtf8Suffix(pending_);
  std::string out = SanitizeUtf8(std::string_view(pending_).substr(0, pending_.size() - hold));
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StreamDecoder::Flush() {
  std::string out = SanitizeUtf8(pending_);
  pending_.clear();
  return out;
}

}  // namespace lineage::text
