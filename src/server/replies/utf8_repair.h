// Utf8Repair: turns a stream of bytes from the model into valid UTF-8.
//
// Random-weight models (and real ones at a token boundary) emit byte
// sequences that are not UTF-8. Every ill-formed subsequence becomes one
// U+FFFD, following the Unicode "maximal subpart" practice (Unicode 15,
// §3.9, Table 3-8) so the result does not depend on how the bytes were split
// into pieces. A sequence cut at the end of a piece is held back until the
// next piece completes it or Finish() declares it broken.
// Not thread-safe; one per response.
#pragma once

#include <string>
#include <string_view>

namespace lineage::server {

class Utf8Repair {
 public:
  // Returns the valid UTF-8 text that the bytes so far determine.
  std::string Feed(std::string_view bytes);
  // Returns U+FFFD for a held incomplete sequence, or "".
  std::string Finish();

 private:
  std::string pending_;  // an incomplete but so far valid sequence (< 4 bytes)
};

// Whole-string convenience: Feed + Finish.
std::string RepairUtf8(std::string_view bytes);

}  // namespace lineage::server
