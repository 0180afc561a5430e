// Strict HTTP/1.1 request framing (RFC 9112), checked by the listener before
// httplib reads a request. Where a lenient parser and a proxy in front could
// disagree on where a request ends (two Content-Lengths, Content-Length with
// chunked, chunk data without its CRLF, a space before a colon, a bad request
// line), the request is refused and the connection closed, so no byte of one
// request is ever read as another (docs/server.md, "HTTP framing").
//
// A chunked body is decoded here, strictly, and the request handed on with a
// Content-Length: httplib never parses chunked framing.
// Pure functions and a per-request decoder; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lineage::server {

inline constexpr size_t kMaxRequestLineBytes = 8192;
inline constexpr size_t kMaxHeaderLineBytes = 8192;
inline constexpr size_t kMaxHeadBytes = 65536;  // request line, fields and the empty line
inline constexpr int kMaxHeaderFields = 100;

// Why a request is refused; status 0 means it is not.
struct FramingError {
  int status = 0;  // 400, 413, 414, 431, 501 or 505
  std::string message;
  bool failed() const { return status != 0; }
};

struct RequestHead {
  std::string method;
  std::string target;
  std::string version;            // "HTTP/1.1" or "HTTP/1.0"
  bool chunked = false;           // Transfer-Encoding: chunked (then no Content-Length)
  bool has_content_length = false;
  uint64_t content_length = 0;
  bool expects_continue = false;  // Expect: 100-continue
  std::string fields;             // the header lines, CRLF-terminated, without Content-Length and Transfer-Encoding
};

// `head`: from the request line to the empty line, inclusive, CRLF line ends.
// Fills `out` when it returns no error.
FramingError ParseRequestHead(std::string_view head, RequestHead* out);

// The head to hand on for a chunked request once its body (of `body_bytes`)
// is decoded: the same request line and fields with a Content-Length.
std::string HeadWithLength(const RequestHead& head, uint64_t body_bytes);

// The reason phrase of the status codes the listener writes itself.
const char* ReasonPhrase(int status);

// Decodes a chunked body byte by byte: chunk sizes in hex with optional
// extensions, each chunk's data followed by exactly CRLF, the last chunk,
// trailer fields (checked, then dropped) and the final CRLF.
class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(uint64_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

  // Consumes the bytes of `in` that belong to the body and returns how many;
  // stops at the end of the body or at an error.
  size_t Feed(std::string_view in);
  bool done() const { return state_ == State::kDone; }
  const FramingError& error() const { return error_; }
  std::string& body() { return body_; }

 private:
  enum class State { kSize, kExtension, kSizeLf, kData, kDataCr, kDataLf, kTrailerStart, kTrailer, kTrailerLf, kEndLf,
                     kDone, kFailed };
  void Fail(int status, std::string message);

  uint64_t max_body_bytes_;
  State state_ = State::kSize;
  uint64_t chunk_ = 0;        // the size being read, then the data left
  int size_digits_ = 0;
  size_t line_bytes_ = 0;     // of the chunk extension
  size_t trailer_bytes_ = 0;
  std::string trailer_line_;
  std::string body_;
  FramingError error_;
};

}  // namespace lineage::server
