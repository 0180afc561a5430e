// Helpers to run the official npm client libraries and puppeteer-core
// (tests/server/e2e) from tests: installs them into the build tree once, runs node.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace lineage::server::testing {

// Runs a shell command; returns its exit status and appends its output.
inline int RunShell(const std::string& cmd, std::string* output) {
  std::FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The directory holding the client scripts (*.mjs) and their node_modules,
// or "" with `why`.
inline std::string PrepareNodeClients(std::string* why) {
  namespace fs = std::filesystem;
  fs::path src = fs::path(LINEAGE_SOURCE_DIR) / "tests/server/e2e";
  fs::path dir = fs::path(LINEAGE_BINARY).parent_path() / "node-e2e";
  fs::create_directories(dir);
  // ctest runs test processes in parallel: one installs, the others wait.
  int lock_fd = ::open((dir / ".lock").c_str(), O_CREAT | O_RDWR, 0644);
  if (lock_fd >= 0) ::flock(lock_fd, LOCK_EX);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);  // closing releases the lock
    }
  } unlock{lock_fd};
  fs::copy_file(src / "package.json", dir / "package.json", fs::copy_options::overwrite_existing);
  for (const auto& f : fs::directory_iterator(src))
    if (f.path().extension() == ".mjs") fs::copy_file(f.path(), dir / f.path().filename(), fs::copy_options::overwrite_existing);
  if (fs::exists(dir / "node_modules/openai") && fs::exists(dir / "node_modules/@anthropic-ai/sdk") &&
      fs::exists(dir / "node_modules/puppeteer-core"))
    return dir.string();
  std::string out;
  if (RunShell("command -v node && command -v npm", &out) != 0) {
    *why = "node or npm is not installed";
    return "";
  }
  out.clear();
  if (RunShell("cd '" + dir.string() + "' && timeout 300 npm install --no-audit --no-fund --loglevel=error", &out) != 0) {
    *why = "npm install failed: " + out;
    return "";
  }
  return dir.string();
}

}  // namespace lineage::server::testing
