// FileSink: writes a file through a temporary name, so a reader never sees a
// half-written model: bytes go to `<path>.tmp`, Commit() flushes, syncs and
// renames it over `path`. Destroying an uncommitted sink removes the
// temporary. Writes through a FileEnv. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/file_env.h"
#include "core/status.h"

namespace lineage::model {

class FileSink {
 public:
  explicit FileSink(std::string path, FileEnv* env = DefaultFileEnv()) : path_(std::move(path)), env_(env) {}
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
  Status Flush();

  std::string path_;
  FileEnv* env_;
  std::unique_ptr<AppendFile> file_;  // the temporary, until Commit
  std::string buffer_;                // bytes not yet appended (see Open)
  uint64_t written_ = 0;
};

// Writes `text` to `path` through a FileSink.
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace lineage::model
