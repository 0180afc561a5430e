#include "server/http/http_framing.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace lineage::server {
namespace {

constexpr const char* kKnownMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"};

bool IsTchar(unsigned char c) { return std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr; }
bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsTchar(static_cast<unsigned char>(c)); });
}
// VCHAR, SP, HTAB and obs-text: everything but the other controls and DEL.
bool IsFieldValueByte(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }
bool IsTargetByte(unsigned char c) { return c > 0x20 && c < 0x7f; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

FramingError Refuse(int status, std::string message) { return FramingError{status, std::move(message)}; }

// Printable, for messages: a refused byte is shown as \xNN.
std::string Shown(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return s.size() > 64 ? out + "..." : out;
}

FramingError ParseRequestLine(std::string_view line, RequestHead* out) {
  if (line.size() > kMaxRequestLineBytes)
    return Refuse(414, "the request line exceeds " + std::to_string(kMaxRequestLineBytes) + " bytes");
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return Refuse(400, "malformed request line '" + Shown(line) + "' (method SP target SP version)");
  std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Refuse(400, "malformed method '" + Shown(method) + "'");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    bool versioned = version.size() == 8 && version.substr(0, 5) == "HTTP/" && std::isdigit(static_cast<unsigned char>(version[5])) &&
                     version[6] == '.' && std::isdigit(static_cast<unsigned char>(version[7]));
    if (versioned) return Refuse(505, "HTTP version " + std::string(version) + " is not supported (HTTP/1.1, HTTP/1.0)");
    return Refuse(400, "malformed HTTP version '" + Shown(version) + "'");
  }
  if (std::find(std::begin(kKnownMethods), std::end(kKnownMethods), method) == std::end(kKnownMethods))
    return Refuse(501, "method '" + Shown(method) + "' is not implemented (methods are case-sensitive)");
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) { return IsTargetByte(static_cast<unsigned char>(c)); }))
    return Refuse(400, "malformed request target '" + Shown(target) + "'");
  bool origin = target.front() == '/';
  bool absolute = target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0;
  if (!origin && !absolute && !(target == "*" && method == "OPTIONS"))
    return Refuse(400, "malformed request target '" + Shown(target) + "'");
  out->method = std::string(method);
  out->target = std::string(target);
  out->version = std::string(version);
  return {};
}

}  // namespace

FramingError ParseRequestHead(std::string_view head, RequestHead* out) {
  *out = RequestHead{};
  if (head.size() > kMaxHeadBytes)
    return Refuse(431, "the request head exceeds " + std::to_string(kMaxHeadBytes) + " bytes");
  while (head.substr(0, 2) == "\r\n") head.remove_prefix(2);  // RFC 9112 2.2: empty lines before the request
  bool line_seen = false, ended = false;
  int fields = 0, hosts = 0;
  std::string transfer_encoding;
  bool has_te = false;
  std::string content_length;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t lf = head.find('\n', pos);
    if (lf == std::string_view::npos || lf == pos || head[lf - 1] != '\r')
      return Refuse(400, "a line of the request head does not end in CRLF");
    std::string_view line = head.substr(pos, lf - 1 - pos);
    pos = lf + 1;
    if (line.find('\r') != std::string_view::npos) return Refuse(400, "a bare CR in the request head");
    if (!line_seen) {
      FramingError e = ParseRequestLine(line, out);
      if (e.failed()) return e;
      line_seen = true;
      continue;
    }
    if (line.empty()) {
      ended = true;
      break;
    }
    if (line.size() > kMaxHeaderLineBytes)
      return Refuse(431, "a header line exceeds " + std::to_string(kMaxHeaderLineBytes) + " bytes");
    if (++fields > kMaxHeaderFields) return Refuse(431, "more than " + std::to_string(kMaxHeaderFields) + " header fields");
    if (line.front() == ' ' || line.front() == '\t') return Refuse(400, "folded header lines are not accepted");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Refuse(400, "header line without a colon: '" + Shown(line) + "'");
    std::string_view name = line.substr(0, colon);
    if (!IsToken(name))
      return Refuse(400, "malformed header name '" + Shown(name) + "' (no space may come before the colon)");
    std::string_view value = TrimOws(line.substr(colon + 1));
    for (unsigned char c : value)
      if (!IsFieldValueByte(c)) return Refuse(400, "header " + std::string(name) + " holds a control byte");
    std::string key = Lower(name);
    if (key == "content-length") {
      if (value.empty() || value.size() > 18 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return Refuse(400, "malformed Content-Length '" + Shown(value) + "'");
      if (!content_length.empty() && content_length != value)
        return Refuse(400, "two different Content-Length values");
      content_length = std::string(value);
      continue;
    }
    if (key == "transfer-encoding") {
      transfer_encoding += (has_te ? "," : "") + Lower(value);
      has_te = true;
      continue;
    }
    if (key == "host") ++hosts;
    if (key == "expect") {
      if (Lower(value) != "100-continue") return Refuse(417, "Expect '" + Shown(value) + "' is not supported");
      out->expects_continue = true;
    }
    out->fields.append(line.data(), line.size());
    out->fields += "\r\n";
  }
  if (!line_seen || !ended || pos != head.size()) return Refuse(400, "incomplete request head");
  if (out->version == "HTTP/1.1" && hosts != 1) return Refuse(400, "an HTTP/1.1 request needs exactly one Host header");
  if (has_te) {
    if (out->version == "HTTP/1.0") return Refuse(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (!content_length.empty()) return Refuse(400, "both Content-Length and Transfer-Encoding");
    if (transfer_encoding != "chunked")
      return Refuse(501, "Transfer-Encoding '" + Shown(transfer_encoding) + "' is not implemented (only chunked)");
    out->chunked = true;
  }
  if (!content_length.empty()) {
    out->has_content_length = true;
    out->content_length = std::stoull(content_length);
  }
  return {};
}

std::string HeadWithLength(const RequestHead& head, uint64_t body_bytes) {
  std::string fields;
  // Expect is answered by the listener before it decodes a chunked body.
  size_t pos = 0;
  while (pos < head.fields.size()) {
    size_t end = head.fields.find("\r\n", pos) + 2;
    std::string_view line(head.fields.data() + pos, end - pos);
    if (!(head.chunked && Lower(line.substr(0, 7)) == "expect:")) fields.append(line);
    pos = end;
  }
  std::string out = head.method + " " + head.target + " " + head.version + "\r\n" + fields;
  if (head.chunked || head.has_content_length) out += "Content-Length: " + std::to_string(body_bytes) + "\r\n";
  return out + "\r\n";
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

void ChunkedDecoder::Fail(int status, std::string message) {
  error_ = FramingError{status, std::move(message)};
  state_ = State::kFailed;
}

size_t ChunkedDecoder::Feed(std::string_view in) {
  size_t i = 0;
  while (i < in.size() && state_ != State::kDone && state_ != State::kFailed) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    switch (state_) {
      case State::kSize:
        if (std::isxdigit(c)) {
          int digit = std::isdigit(c) ? c - '0' : std::tolower(c) - 'a' + 10;
          if (++size_digits_ > 16 || chunk_ > (max_body_bytes_ >> 4)) {
            Fail(413, "a chunk exceeds the body limit of " + std::to_string(max_body_bytes_) + " bytes");
            return i;
          }
          chunk_ = chunk_ * 16 + static_cast<uint64_t>(digit);
        } else if (size_digits_ > 0 && (c == ';' || c == '\r')) {
          state_ = c == ';' ? State::kExtension : State::kSizeLf;
          line_bytes_ = 0;
        } else {
          Fail(400, "malformed chunk size");
          return i;
        }
        break;
      case State::kExtension:
        if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (!IsFieldValueByte(c) || ++line_bytes_ > 1024) {
          Fail(400, "malformed chunk extension");
          return i;
        }
        break;
      case State::kSizeLf:
        if (c != '\n') {
          Fail(400, "a chunk size line does not end in CRLF");
          return i;
        }
        if (chunk_ == 0) {
          state_ = State::kTrailerStart;
        } else if (chunk_ > max_body_bytes_ - std::min<uint64_t>(body_.size(), max_body_bytes_)) {
          Fail(413, "the chunked body exceeds " + std::to_string(max_body_bytes_) + " bytes");
          return i;
        } else {
          state_ = State::kData;
        }
        break;
      case State::kData: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_, in.size() - i));
        body_.append(in.data() + i, n);
        chunk_ -= n;
        i += n;
        if (chunk_ == 0) state_ = State::kDataCr;
        continue;
      }
      case State::kDataCr:
      case State::kDataLf:
        if (c != (state_ == State::kDataCr ? '\r' : '\n')) {
          Fail(400, "chunk data is not followed by CRLF");
          return i;
        }
        if (state_ == State::kDataLf) {
          state_ = State::kSize;
          size_digits_ = 0;
        } else {
          state_ = State::kDataLf;
        }
        break;
      case State::kTrailerStart:
        if (c == '\r') {
          state_ = State::kEndLf;
          break;
        }
        trailer_line_.clear();
        state_ = State::kTrailer;
        [[fallthrough]];
      case State::kTrailer:
        if (c == '\r') {
          state_ = State::kTrailerLf;
        } else if (trailer_line_.size() >= kMaxHeaderLineBytes || ++trailer_bytes_ > kMaxHeadBytes) {
          Fail(431, "the chunked body's trailer is too large");
          return i;
        } else {
          trailer_line_.push_back(static_cast<char>(c));
        }
        break;
      case State::kTrailerLf: {
        size_t colon = trailer_line_.find(':');
        bool ok = c == '\n' && colon != std::string::npos && IsToken(std::string_view(trailer_line_).substr(0, colon)) &&
                  std::all_of(trailer_line_.begin() + static_cast<long>(colon) + 1, trailer_line_.end(),
                              [](char x) { return IsFieldValueByte(static_cast<unsigned char>(x)); });
        if (!ok) {
          Fail(400, "malformed trailer field");
          return i;
        }
        state_ = State::kTrailerStart;
        break;
      }
      case State::kEndLf:
        if (c != '\n') {
          Fail(400, "the chunked body does not end in CRLF");
          return i;
        }
        state_ = State::kDone;
        break;
      case State::kDone:
      case State::kFailed:
        return i;
    }
    ++i;
  }
  return i;
}

}  // namespace lineage::server
