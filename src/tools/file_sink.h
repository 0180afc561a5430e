// FileSink: writes a file through a temporary name, so a reader never sees a
// half-written model: bytes go to `<path>.tmp`, Commit() flushes, syncs and
// renames it over `path`. Destroying an uncommitted sink removes the
// temporary. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/status.h"

namespace lineage::model {

class FileSink {
 public:
  explicit FileSink(std::string path) : path_(std::move(path)) {}
  ~FileSink();
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  Status Open();
  Status Write(const void* data, size_t n);
  Status WriteZeros(size_t n);
  uint64_t bytes_written() const { return written_; }
  const std::string& path() const { return path_; }
  Status Commit();

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // stdio buffer of f_ (see Open)
  uint64_t written_ = 0;
};

// Writes `text` to `path` through a FileSink.
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace lineage::model
