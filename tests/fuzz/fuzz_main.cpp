// fuzz_runner: a deterministic mutation loop over the registered targets
// (fuzz_target.h), built with gcc and run under ASan+UBSan in `make
// sanitize`. libFuzzer would add coverage feedback; this loop needs no
// second compiler and is reproducible from its seed.
//
//   fuzz_runner --list
//   fuzz_runner TARGET [--corpus DIR|FILE]... [--seconds S] [--runs N] [--seed N]
//               [--crash-dir DIR] [--timeout S]
//   fuzz_runner TARGET --replay DIR|FILE...
//
// Every corpus input is run once first (the regression part), then mutants
// until the time or the run count is used up. An input that crashes, trips
// a sanitizer or runs longer than --timeout seconds is written to
// CRASH_DIR/{crash,timeout}-TARGET-HASH and its path printed; the process
// then dies with a non-zero status.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "fuzz/mutator.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace lineage::fuzz {

std::vector<Target>& Registry() {
  static std::vector<Target> targets;
  return targets;
}

namespace {

namespace fs = std::filesystem;

// What the death handlers need, set up before any input runs. Only
// async-signal-safe calls touch it from a handler.
struct Current {
  const uint8_t* data = nullptr;
  size_t size = 0;
  char crash_dir[2048] = ".";
  char target[128] = "";
} g_current;

void WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w <= 0) return;
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void WriteStr(int fd, const char* s) { WriteAll(fd, s, strlen(s)); }

// Writes the running input to CRASH_DIR/KIND-TARGET-HASH; async-signal-safe.
void SaveCurrent(const char* kind) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t k = 0; k < g_current.size; ++k) h = (h ^ g_current.data[k]) * 1099511628211ull;
  char hex[17];
  for (int k = 0; k < 16; ++k) hex[k] = "0123456789abcdef"[(h >> (60 - 4 * k)) & 15];
  hex[16] = 0;
  char path[2400];
  size_t n = 0;
  for (const char* part : {static_cast<const char*>(g_current.crash_dir), "/", kind, "-",
                           static_cast<const char*>(g_current.target), "-", static_cast<const char*>(hex)}) {
    for (const char* c = part; *c && n + 1 < sizeof(path); ++c) path[n++] = *c;
  }
  path[n] = 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (g_current.data) WriteAll(fd, g_current.data, g_current.size);
    close(fd);
  }
  WriteStr(2, "\nfuzz: ");
  WriteStr(2, kind);
  WriteStr(2, " in target ");
  WriteStr(2, g_current.target);
  WriteStr(2, "; reproducer: ");
  WriteStr(2, fd >= 0 ? path : "(could not be written)");
  WriteStr(2, "\n");
}

void OnTimeout(int) {
  SaveCurrent("timeout");
  _exit(70);
}

#if defined(__SANITIZE_ADDRESS__)
void OnSanitizerDeath() { SaveCurrent("crash"); }
#else
void OnFatalSignal(int sig) {
  SaveCurrent("crash");
  signal(sig, SIG_DFL);
  raise(sig);
}
#endif

void InstallHandlers() {
  signal(SIGALRM, OnTimeout);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(OnSanitizerDeath);
#else
  // An alternate stack, so that a stack overflow still gets its reproducer.
  static std::vector<char> alt(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction sa {};
    sa.sa_handler = OnFatalSignal;
    sa.sa_flags = SA_ONSTACK;
    sigaction(sig, &sa, nullptr);
  }
#endif
}

int RunOne(const Target& t, const std::string& input, unsigned timeout_s) {
  g_current.data = reinterpret_cast<const uint8_t*>(input.data());
  g_current.size = input.size();
  alarm(timeout_s);
  int accepted = t.fn(g_current.data, g_current.size);
  alarm(0);
  return accepted;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Regular files of each path (a directory's in name order), README excluded.
std::vector<std::string> LoadInputs(const std::vector<std::string>& paths, std::vector<std::string>* names) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file() && e.path().filename() != "README.md") files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "fuzz: skipping %s (not found)\n", p.c_str());
    }
    for (const auto& f : files) {
      out.push_back(ReadFile(f));
      if (names) names->push_back(f.string());
    }
  }
  return out;
}

void Usage() {
  std::fprintf(stderr,
               "usage: fuzz_runner --list\n"
               "       fuzz_runner TARGET [--corpus PATH]... [--seconds S] [--runs N] [--seed N]\n"
               "                   [--crash-dir DIR] [--timeout S]\n"
               "       fuzz_runner TARGET --replay PATH...\n");
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    Usage();
    return 2;
  }
  std::string name = argv[1];
  if (name == "--list") {
    for (const Target& t : Registry()) std::printf("%s\n", t.name.c_str());
    return 0;
  }
  const Target* target = nullptr;
  for (const Target& t : Registry()) {
    if (t.name == name) target = &t;
  }
  if (!target) {
    std::fprintf(stderr, "fuzz: no target named '%s' (try --list)\n", name.c_str());
    return 2;
  }
  std::vector<std::string> corpus_paths, replay_paths;
  double seconds = 10;
  uint64_t max_runs = UINT64_MAX, seed = 1;
  unsigned timeout_s = 10;
  std::string crash_dir = ".";
  bool replay = false;
  for (int k = 2; k < argc; ++k) {
    std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        Usage();
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--corpus") corpus_paths.push_back(value());
    else if (a == "--seconds") seconds = std::atof(value().c_str());
    else if (a == "--runs") max_runs = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--timeout") timeout_s = static_cast<unsigned>(std::atoi(value().c_str()));
    else if (a == "--crash-dir") crash_dir = value();
    else if (a == "--replay") replay = true;
    else if (replay) replay_paths.push_back(a);
    else {
      Usage();
      return 2;
    }
  }
  std::error_code ec;
  fs::create_directories(crash_dir, ec);
  std::snprintf(g_current.crash_dir, sizeof(g_current.crash_dir), "%s", crash_dir.c_str());
  std::snprintf(g_current.target, sizeof(g_current.target), "%s", target->name.c_str());
  InstallHandlers();

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (replay) {
    std::vector<std::string> names;
    std::vector<std::string> inputs = LoadInputs(replay_paths, &names);
    for (size_t k = 0; k < inputs.size(); ++k) RunOne(*target, inputs[k], timeout_s);
    std::printf("fuzz: %s: replayed %zu inputs in %.1f s, no crash\n", target->name.c_str(), inputs.size(), elapsed());
    return 0;
  }
  std::vector<std::string> pool = LoadInputs(corpus_paths, nullptr);
  size_t seeds = pool.size();
  size_t accepted = 0;
  for (const std::string& input : pool) accepted += RunOne(*target, input, timeout_s) != 0;
  if (pool.empty()) pool.push_back(std::string());
  Mutator mutator(seed, &target->dictionary, &target->nestings);
  const size_t kMaxPool = 4096;
  uint64_t runs = 0;
  while (runs < max_runs && elapsed() < seconds) {
    const std::string& base = pool[mutator.Next() % pool.size()];
    const std::string& other = pool[mutator.Next() % pool.size()];
    std::string input = mutator.Mutate(base, other, target->max_input_bytes);
    ++runs;
    if (RunOne(*target, input, timeout_s)) {
      ++accepted;
      // Keep some accepted mutants: they reach deeper than the seeds.
      if (pool.size() < kMaxPool && mutator.Next() % 8 == 0) pool.push_back(std::move(input));
    }
  }
  std::printf("fuzz: %s: %zu seeds + %llu mutants in %.1f s (seed %llu), %zu accepted, pool %zu, no crash\n",
              target->name.c_str(), seeds, static_cast<unsigned long long>(runs), elapsed(),
              static_cast<unsigned long long>(seed), accepted, pool.size());
  return 0;
}

}  // namespace
}  // namespace lineage::fuzz

int main(int argc, char** argv) { return lineage::fuzz::Main(argc, argv); }
