#include "core/file_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace lineage {
namespace {

Status Errno(const std::string& what, const std::string& path, int err) {
  StatusCode code = err == ENOENT ? StatusCode::kNotFound
                    : (err == ENOSPC || err == EDQUOT) ? StatusCode::kResourceExhausted
                                                       : StatusCode::kIoError;
  return Status(code, path + ": " + what + ": " + std::strerror(err));
}

const char* KindName(mode_t mode) {
  if (S_ISREG(mode)) return "regular file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}

Status NotRegular(const std::string& path, const char* kind) {
  return Corrupt(path + ": not a regular file (a " + kind + ")");
}

// stat(2) that accepts only a regular file (following symlinks).
Status StatRegular(const std::string& path, struct stat* st) {
  if (::stat(path.c_str(), st) != 0) return Errno("stat", path, errno);
  if (!S_ISREG(st->st_mode)) return NotRegular(path, KindName(st->st_mode));
  return Status::Ok();
}

// Opens a regular file for reading. The stat before the open keeps a FIFO or
// device from being opened at all; O_NONBLOCK and the fstat after it cover a
// file swapped in between (opening a FIFO without a writer would block).
Result<int> OpenRegular(const std::string& path) {
  struct stat st {};
  LINEAGE_RETURN_IF_ERROR(StatRegular(path, &st));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path, errno);
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const char* kind = KindName(st.st_mode);
    ::close(fd);
    return NotRegular(path, kind);
  }
  return fd;
}

std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

class PosixLock final : public FileLock {
 public:
  explicit PosixLock(int fd) : fd_(fd) {}
  ~PosixLock() override { ::close(fd_); }

 private:
  int fd_;
};

class PosixAppendFile final : public AppendFile {
 public:
  PosixAppendFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixAppendFile() override { ::close(fd_); }
  Status Append(std::string_view bytes) override {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Errno("write", path_, n < 0 ? errno : EIO);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }
  Status Sync() override {
    if (::fsync(fd_) != 0) return Errno("fsync", path_, errno);
    return Status::Ok();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixFileEnv final : public FileEnv {
 public:
  Result<std::unique_ptr<FileLock>> LockDir(const std::string& dir, LockMode mode, bool wait) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Errno("open", dir, errno);
    const int op = (mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
    int rc = 0;
    while ((rc = ::flock(fd, op)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) return ResourceExhausted(dir + ": locked by another holder");
      return Errno("flock", dir, err);
    }
    return std::unique_ptr<FileLock>(new PosixLock(fd));
  }

  Result<std::unique_ptr<AppendFile>> CreateAppend(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0) return Errno("open", path, errno);
    return std::unique_ptr<AppendFile>(new PosixAppendFile(fd, path));
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return Errno("rename to " + to, from, errno);
    return Status::Ok();
  }

  Result<std::string> ReadBounded(const std::string& path, uint64_t max_bytes) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      if (errno == ENOENT) return NotFound(path + ": no such file");
      return IoError("cannot open " + path + ": " + std::strerror(errno));
    }
    std::string out;
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
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
    Result<int> opened = OpenRegular(path);
    if (!opened.ok()) return opened.status();
    const int fd = *opened;
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

  void Prefetch(const std::string& path, uint64_t bytes) override {
    Result<int> fd = OpenRegular(path);
    if (!fd.ok()) return;
    (void)::posix_fadvise(*fd, 0, static_cast<off_t>(bytes), POSIX_FADV_WILLNEED);
    ::close(*fd);
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st {};
    LINEAGE_RETURN_IF_ERROR(StatRegular(path, &st));
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

  Result<std::vector<DirEntry>> List(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return Errno("opendir", dir, errno);
    std::vector<DirEntry> entries;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      DirEntry out{e->d_name, FileKind::kOther, ""};
      mode_t mode = 0;
      if (e->d_type == DT_REG) {
        mode = S_IFREG;
      } else if (e->d_type == DT_DIR) {
        mode = S_IFDIR;
      } else if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
        struct stat lst {};
        out.link = e->d_type == DT_LNK ||
                   (::fstatat(::dirfd(d), e->d_name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode));
        struct stat st {};
        if (::fstatat(::dirfd(d), e->d_name, &st, 0) == 0) {
          mode = st.st_mode;
        } else {
          out.kind_name = std::string("symlink that cannot be followed: ") + std::strerror(errno);
        }
      } else {
        mode = DTTOIF(e->d_type);
      }
      if (out.kind_name.empty()) {
        out.kind = S_ISREG(mode) ? FileKind::kRegular : S_ISDIR(mode) ? FileKind::kDirectory : FileKind::kOther;
        out.kind_name = KindName(mode);
      }
      entries.push_back(std::move(out));
    }
    ::closedir(d);
    return entries;
  }
};

}  // namespace

FileEnv* DefaultFileEnv() {
  static PosixFileEnv env;
  return &env;
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes, FileEnv* env) {
  const std::span<const uint8_t> parts[] = {
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())};
  return env->WriteAtomic(path + ".tmp", path, parts);
}

}  // namespace lineage
