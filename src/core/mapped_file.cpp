#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace lineage {

MappedFile::~MappedFile() {
  if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": open failed: " + std::strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError(path + ": stat failed: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": not a regular file");
  }
  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = mmap(nullptr, f.size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      f.size_ = 0;
      return IoError(path + ": mmap failed: " + std::strerror(err));
    }
    f.data_ = static_cast<const uint8_t*>(p);
    // Pages read from disk after this come in 2 MiB folios where the file
    // system can, mapped with one TLB entry each: decode streams every
    // weight once per token, and 4 KiB pages cost it ~5-10% (see
    // bench_mapped_gemv). Advice only: failure changes nothing else.
    madvise(p, f.size_, MADV_HUGEPAGE);
  }
  ::close(fd);
  return f;
}

Status MappedFile::Populate() const {
  if (size_ == 0) return Status::Ok();
#ifdef MADV_POPULATE_READ
  if (madvise(const_cast<uint8_t*>(data_), size_, MADV_POPULATE_READ) == 0) return Status::Ok();
  if (errno != EINVAL) return IoError(path_ + ": populating the mapping failed: " + std::strerror(errno));
#endif
  // Kernels before 5.14: one read per page does the same.
  const long page = sysconf(_SC_PAGESIZE);
  volatile uint8_t sink = 0;
  for (size_t off = 0; off < size_; off += static_cast<size_t>(page)) sink = sink + data_[off];
  return Status::Ok();
}

std::shared_ptr<uint8_t> AllocateWeightBytes(size_t n) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t size = (n + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, size == 0 ? kHugePage : size);
  if (p == nullptr) return nullptr;
  madvise(p, size, MADV_HUGEPAGE);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), std::free);
}

void ReleaseMappedPages(const void* p, size_t n) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace lineage
