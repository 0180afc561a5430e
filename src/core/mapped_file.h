// MappedFile: a read-only memory map of a whole file.
//
// Model weights are read through this: pages are faulted in on first use and
// shared with the page cache, so resident memory is what the forward pass
// touches, never a second copy (except the tensors the loader copies into
// lane order, whose pages it releases: model/load_model.h). The mapping is advised MADV_HUGEPAGE, so
// pages the kernel reads in for it may come as 2 MiB folios mapped with one
// TLB entry (pages already cached stay as the file's writer left them).
// Movable, not copyable; unmaps on destruction.
// The mapped bytes stay valid for the object's lifetime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/status.h"

namespace lineage {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path` read-only. An empty file maps to an empty span.
  static Result<MappedFile> Open(const std::string& path);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Faults every page of the mapping in now (reading from disk what the
  // page cache lacks), so later reads find them mapped: a mixture-of-experts
  // model touches each expert's pages first when a token routes to it.
  Status Populate() const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// n bytes (uninitialised) for weights copied out of a file, 2 MiB aligned
// and advised MADV_HUGEPAGE like the mapping, so a kernel streaming them
// takes as few TLB misses; null when out of memory.
std::shared_ptr<uint8_t> AllocateWeightBytes(size_t n);

// Drops the whole pages inside [p, p + n) of a read-only file mapping from
// this process (MADV_DONTNEED): bytes the process has copied and will not
// read again. They stay readable (faulted in again from the file).
void ReleaseMappedPages(const void* p, size_t n);

}  // namespace lineage
