#include "tools/file_sink.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace lineage::model {

FileSink::~FileSink() {
  if (f_ != nullptr) {
    std::fclose(f_);
    std::remove((path_ + ".tmp").c_str());
  }
}

Status FileSink::Open() {
  f_ = std::fopen((path_ + ".tmp").c_str(), "wb");
  if (f_ == nullptr) return IoError(path_ + ".tmp: cannot create: " + std::strerror(errno));
  // Producers write a row at a time. With stdio's default 4 KiB buffer the
  // page cache keeps the file in 4 KiB pages, and a reader that maps it
  // right after (lineage mkmodel, then bench) streams its weights through
  // 4 KiB TLB entries; 8 MiB writes let the file system cache it in 2 MiB
  // folios, mapped with one entry each (see docs/engine.md, "Decode speed").
  // (glibc ignores the size unless it is given the buffer; left
  // uninitialised, a small file touches only the pages it fills.)
  constexpr size_t kBufferBytes = size_t{8} << 20;
  buffer_.reset(new char[kBufferBytes]);
  std::setvbuf(f_, buffer_.get(), _IOFBF, kBufferBytes);
  return Status::Ok();
}

Status FileSink::Write(const void* data, size_t n) {
  if (n == 0) return Status::Ok();
  if (std::fwrite(data, 1, n, f_) != n) return IoError(path_ + ".tmp: write failed: " + std::strerror(errno));
  written_ += n;
  return Status::Ok();
}

Status FileSink::WriteZeros(size_t n) {
  static const char kZeros[64] = {};
  while (n > 0) {
    size_t k = std::min(n, sizeof(kZeros));
    LINEAGE_RETURN_IF_ERROR(Write(kZeros, k));
    n -= k;
  }
  return Status::Ok();
}

Status FileSink::Commit() {
  std::string tmp = path_ + ".tmp";
  bool ok = std::fflush(f_) == 0 && fsync(fileno(f_)) == 0;
  ok = std::fclose(f_) == 0 && ok;
  f_ = nullptr;
  if (!ok) {
    std::remove(tmp.c_str());
    return IoError(tmp + ": flush failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0)
    return IoError(path_ + ": rename failed: " + std::strerror(errno));
  return Status::Ok();
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  FileSink sink(path);
  LINEAGE_RETURN_IF_ERROR(sink.Open());
  LINEAGE_RETURN_IF_ERROR(sink.Write(text.data(), text.size()));
  return sink.Commit();
}

}  // namespace lineage::model
