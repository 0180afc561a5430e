#include "tools/file_sink.h"

#include <algorithm>

namespace lineage::model {
namespace {

// Producers write a row at a time. Appended a few KiB at a time, the page
// cache keeps the file in 4 KiB pages, and a reader that maps it right after
// (lineage mkmodel, then bench) streams its weights through 4 KiB TLB
// entries; 8 MiB writes let the file system cache it in 2 MiB folios, mapped
// with one entry each (see docs/engine.md, "Decode speed").
constexpr size_t kBufferBytes = size_t{8} << 20;

}  // namespace

FileSink::~FileSink() {
  if (file_ != nullptr) {
    file_.reset();
    (void)env_->Remove(path_ + ".tmp");
  }
}

Status FileSink::Open() {
  LINEAGE_ASSIGN_OR_RETURN(file_, env_->CreateAppend(path_ + ".tmp"));
  buffer_.reserve(kBufferBytes);
  return Status::Ok();
}

Status FileSink::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status st = file_->Append(buffer_);
  buffer_.clear();
  return st;
}

Status FileSink::Write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  written_ += n;
  while (n > 0) {
    const size_t k = std::min(n, kBufferBytes - buffer_.size());
    buffer_.append(p, k);
    p += k;
    n -= k;
    if (buffer_.size() == kBufferBytes) LINEAGE_RETURN_IF_ERROR(Flush());
  }
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
  const std::string tmp = path_ + ".tmp";
  Status st = Flush();
  if (st.ok()) st = file_->Sync();
  file_.reset();
  if (!st.ok()) {
    (void)env_->Remove(tmp);
    return st;
  }
  return env_->Rename(tmp, path_);
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  FileSink sink(path);
  LINEAGE_RETURN_IF_ERROR(sink.Open());
  LINEAGE_RETURN_IF_ERROR(sink.Write(text.data(), text.size()));
  return sink.Commit();
}

}  // namespace lineage::model
