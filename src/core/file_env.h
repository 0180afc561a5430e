// FileEnv: every file operation of the disk tier, its directory locks, the
// server's trace log, trace and model files written, and files read whole
// (ReadFileBounded: templates, tokenizers) goes through this small interface,
// so tests can inject faults (a full disk, an I/O error, a lock that fails, a
// crash between two calls) without touching the callers' logic. Two things
// do not, by their nature: the model file's memory map (core/mapped_file.h:
// its reads are page faults, and a failing device there raises SIGBUS rather
// than returning an error an environment could stand in for) and a child
// process's standard output (the replay's gnuplot, which writes to a
// descriptor).
//
// PosixFileEnv is the real one. All calls are thread-safe. Paths are
// absolute or relative to the process's working directory.
//
// Only regular files are read: a FIFO, device, socket or directory named like
// a cache file, or a symlink that loops, is reported (kCorrupt, "not a
// regular file") and never opened for reading in a way that could block —
// the real environment opens with O_NONBLOCK and checks fstat first.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace lineage {

// What a directory entry is; a symlink is judged by what it points to.
enum class FileKind : uint8_t {
  kRegular,
  kDirectory,
  kOther,  // FIFO, device, socket, or a symlink that loops or dangles
};

struct DirEntry {
  std::string name;  // not a path
  FileKind kind = FileKind::kRegular;  // of what it names, a symbolic link followed
  std::string kind_name;  // for log lines: "regular file", "FIFO", "directory", ...
  bool link = false;      // a symbolic link (the tier's own files and folders never are)
};

enum class LockMode { kExclusive, kShared };

// A lock taken by FileEnv::LockDir; released when destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// A file written in order from its start (FileEnv::CreateAppend); closed
// when destroyed.
class AppendFile {
 public:
  virtual ~AppendFile() = default;
  // Writes all of `bytes` after what came before, unbuffered (no fsync).
  virtual Status Append(std::string_view bytes) = 0;
  // Flushes what was written to the device (fsync).
  virtual Status Sync() = 0;
};

class FileEnv {
 public:
  virtual ~FileEnv() = default;

  // Writes `parts` concatenated to `tmp_path`, fsyncs it, renames it to
  // `final_path` and fsyncs the destination directory. On failure nothing
  // is left at `final_path` that was not there before, and `tmp_path` is
  // removed when possible.
  virtual Status WriteAtomic(const std::string& tmp_path, const std::string& final_path,
                             std::span<const std::span<const uint8_t>> parts) = 0;
  // Reads `n` bytes at `offset`; a short file is kCorrupt, and so is a
  // file that is not a regular one.
  virtual Status ReadAt(const std::string& path, uint64_t offset, uint64_t n, uint8_t* out) = 0;
  // A hint that the first `bytes` of `path` (the size the caller expects
  // it to have) will be read soon: the real environment starts reading them
  // into the page cache asynchronously, so a restore that reads many files
  // keeps the device busy instead of waiting on each in turn. Bounded by the
  // expected size, a huge file in its place costs nothing here.
  virtual void Prefetch(const std::string& path, uint64_t bytes) {}
  // kCorrupt for anything but a regular file.
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  virtual Result<int64_t> MtimeMs(const std::string& path) = 0;
  virtual Status Touch(const std::string& path, int64_t mtime_ms) = 0;
  virtual Status Remove(const std::string& path) = 0;
  virtual Status MakeDirs(const std::string& path) = 0;
  // The entries directly inside `dir` (not "." and ".."), with their kinds.
  virtual Result<std::vector<DirEntry>> List(const std::string& dir) = 0;
  // An advisory lock (flock) on the directory `dir`, held on an open
  // description of the directory itself (no file that someone could delete)
  // until the returned object goes. `wait` false: kResourceExhausted at once
  // when another holder conflicts.
  virtual Result<std::unique_ptr<FileLock>> LockDir(const std::string& dir, LockMode mode, bool wait) = 0;
  // Creates `path`, or empties it, for writing in order.
  virtual Result<std::unique_ptr<AppendFile>> CreateAppend(const std::string& path) = 0;
  // Renames `from` over `to` (rename(2): atomic on one file system).
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // The whole of `path` when it holds at most `max_bytes`; kOutOfRange past
  // that, found while reading (a device such as /dev/zero or a FIFO is read
  // up to the bound, never to the end), kNotFound when it does not exist.
  virtual Result<std::string> ReadBounded(const std::string& path, uint64_t max_bytes) = 0;
};

// The process-wide POSIX environment.
FileEnv* DefaultFileEnv();

// Writes `bytes` to `path` whole or not at all (through PATH.tmp, synced).
Status WriteFileAtomic(const std::string& path, std::string_view bytes, FileEnv* env = DefaultFileEnv());

// A FileEnv that passes every call to `base` (the POSIX one by default):
// wrappers that change one operation (fault injection, no fsync, a gate)
// override that one and inherit the rest.
class ForwardingFileEnv : public FileEnv {
 public:
  explicit ForwardingFileEnv(FileEnv* base = DefaultFileEnv()) : base_(base) {}

  Status WriteAtomic(const std::string& tmp_path, const std::string& final_path,
                     std::span<const std::span<const uint8_t>> parts) override {
    return base_->WriteAtomic(tmp_path, final_path, parts);
  }
  Status ReadAt(const std::string& path, uint64_t offset, uint64_t n, uint8_t* out) override {
    return base_->ReadAt(path, offset, n, out);
  }
  void Prefetch(const std::string& path, uint64_t bytes) override { base_->Prefetch(path, bytes); }
  Result<uint64_t> FileSize(const std::string& path) override { return base_->FileSize(path); }
  Result<int64_t> MtimeMs(const std::string& path) override { return base_->MtimeMs(path); }
  Status Touch(const std::string& path, int64_t mtime_ms) override { return base_->Touch(path, mtime_ms); }
  Status Remove(const std::string& path) override { return base_->Remove(path); }
  Status MakeDirs(const std::string& path) override { return base_->MakeDirs(path); }
  Result<std::vector<DirEntry>> List(const std::string& dir) override { return base_->List(dir); }
  Result<std::unique_ptr<FileLock>> LockDir(const std::string& dir, LockMode mode, bool wait) override {
    return base_->LockDir(dir, mode, wait);
  }
  Result<std::unique_ptr<AppendFile>> CreateAppend(const std::string& path) override {
    return base_->CreateAppend(path);
  }
  Status Rename(const std::string& from, const std::string& to) override { return base_->Rename(from, to); }
  Result<std::string> ReadBounded(const std::string& path, uint64_t max_bytes) override {
    return base_->ReadBounded(path, max_bytes);
  }

 protected:
  FileEnv* base() const { return base_; }

 private:
  FileEnv* base_;
};

}  // namespace lineage
