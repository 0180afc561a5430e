#include "core/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lineage {

Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return IoError("cannot open " + path + ": " + std::strerror(errno));
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return IoError("cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    if (out.size() + static_cast<uint64_t>(n) > max_bytes) {
      ::close(fd);
      return OutOfRange(path + " holds more than " + std::to_string(max_bytes) + " bytes, the most this reads");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace lineage
