// Status and Result<T>: errors as values across module boundaries.
//
// A Status is either ok or carries a code and a human-readable message that
// names what failed (file, tensor, field) and why. Result<T> holds a T or a
// non-ok Status. Neither throws; callers test ok() before value().
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace lineage {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the caller's input is malformed
  kNotFound,          // a file, tensor, key or entry does not exist
  kCorrupt,           // stored data fails a check (size, checksum, magic)
  kUnsupported,       // valid but not handled (a dtype, a version, an architecture)
  kIoError,           // the operating system refused (open, read, write, disk full)
  kOutOfRange,        // a length exceeds a limit (context, budget)
  kResourceExhausted, // no room now; retrying later may succeed
  kInternal,          // an invariant broke: a bug
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Prefixes the message with context ("loading model.gguf: ...").
  Status With(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

const char* StatusCodeName(StatusCode code);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {     // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { assert(ok()); return std::get<T>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace lineage

// Returns early from a function returning Status or Result<T> when expr fails.
#define LINEAGE_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::lineage::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define LINEAGE_CONCAT_INNER(a, b) a##b
#define LINEAGE_CONCAT(a, b) LINEAGE_CONCAT_INNER(a, b)
// Declares `lhs` from a Result<T> expression, or returns its Status.
#define LINEAGE_ASSIGN_OR_RETURN(lhs, expr)                          \
  auto LINEAGE_CONCAT(_res_, __LINE__) = (expr);                     \
  if (!LINEAGE_CONCAT(_res_, __LINE__).ok())                         \
    return LINEAGE_CONCAT(_res_, __LINE__).status();                 \
  lhs = std::move(LINEAGE_CONCAT(_res_, __LINE__)).value()
