#include "cache/disk/file_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace lineage::cache::disk {
namespace {

Status Errno(const std::string& what, const std::string& path, int err) {
  StatusCode code = err == ENOENT ? StatusCode::kNotFound
                    : (err == ENOSPC || err == EDQUOT) ? StatusCode::kResourceExhausted
                                                       : StatusCode::kIoError;
  return Status(code, path + ": " + what + ": " + std::strerror(err));
}

std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

class PosixFileEnv final : public FileEnv {
 public:
  Status WriteAtomic(const std::string& tmp_path, const std::string& final_path,
                     std::span<const std::span<const uint8_t>> parts) override {
    int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("create", tmp_path, errno);
    auto fail = [&](const char* what, int err) {
      ::close(fd);
      ::unlink(tmp_path.c_str());
      return Errno(what, tmp_path, err);
    };
    for (auto part : parts) {
      const uint8_t* p = part.data();
      size_t left = part.size();
      while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
          if (errno == EINTR) continue;
          return fail("write", errno);
        }
        p += n;
        left -= static_cast<size_t>(n);
      }
    }
    if (::fdatasync(fd) != 0) return fail("fsync", errno);
    if (::close(fd) != 0) {
      int err = errno;
      ::unlink(tmp_path.c_str());
      return Errno("close", tmp_path, err);
    }
    if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp_path.c_str());
      return Errno("rename", final_path, err);
    }
    std::string dir = DirOf(final_path);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return Errno("open directory", dir, errno);
    int rc = ::fsync(dfd);
    int err = errno;
    ::close(dfd);
    if (rc != 0) return Errno("fsync directory", dir, err);
    return Status::Ok();
  }

  Status ReadAt(const std::string& path, uint64_t offset, uint64_t n, uint8_t* out) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Errno("open", path, errno);
    uint64_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return Errno("read", path, err);
      }
      if (r == 0) {
        ::close(fd);
        return Corrupt(path + ": file ends at byte " + std::to_string(offset + done) + ", expected " +
                       std::to_string(offset + n));
      }
      done += static_cast<uint64_t>(r);
    }
    ::close(fd);
    return Status::Ok();
  }

  void Prefetch(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    ::close(fd);
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Errno("stat", path, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<int64_t> MtimeMs(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Errno("stat", path, errno);
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  }

  Status Touch(const std::string& path, int64_t mtime_ms) override {
    struct timespec ts[2];
    ts[0].tv_sec = ts[1].tv_sec = mtime_ms / 1000;
    ts[0].tv_nsec = ts[1].tv_nsec = (mtime_ms % 1000) * 1000000;
    if (::utimensat(AT_FDCWD, path.c_str(), ts, 0) != 0) return Errno("utimensat", path, errno);
    return Status::Ok();
  }

  Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("unlink", path, errno);
    return Status::Ok();
  }

  Status MakeDirs(const std::string& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return IoError(path + ": mkdir: " + ec.message());
    return Status::Ok();
  }

  Result<std::vector<std::string>> List(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return Errno("opendir", dir, errno);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names.emplace_back(e->d_name);
    }
    ::closedir(d);
    return names;
  }
};

}  // namespace

FileEnv* DefaultFileEnv() {
  static PosixFileEnv env;
  return &env;
}

}  // namespace lineage::cache::disk
