// bench_disk: the disk tier's three figures (issue 5).
//
// 1. Bytes written per turn over a 20-turn conversation on the qwen3.5-0.8b
//    state shapes, through the real LineageCache: the file tier's bytes
//    against (a) the new KV pages plus new recurrent states of each turn as
//    the policy counts them (a MemoryDiskTier fed the same records; target:
//    at most 1.1x) and (b) writing the whole snapshot every turn.
// 2. Restore throughput from disk (the last entry at full length, its files
//    evicted from the page cache first) against the device's sequential read
//    speed measured in the same run on a file of the same size.
// 3. Start-up time of a tier over 10,000 entry files.
//
// Usage: bench_disk [DIR=/tmp/lineage_bench_disk] [startup_entries=10000]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/disk/file_disk_tier.h"
#include "cache/lineage_cache.h"
#include "cache/memory_disk_tier.h"
#include "engine/disk_codec.h"
#include "model/shapes.h"
#include "bench_machine.h"

using lineage::bench::Shell;

using namespace lineage;
using namespace lineage::cache;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// memcpy speed between two touched buffers: on a shared machine, the ceiling
// for any restore that must copy its bytes into freshly allocated pages.
double MemcpyBytesPerSecond(int64_t bytes) {
  std::vector<char> a(static_cast<size_t>(bytes), 1), b(static_cast<size_t>(bytes), 2);
  const auto t0 = Clock::now();
  std::memcpy(b.data(), a.data(), a.size());
  const double s = Seconds(t0, Clock::now());
  return b[bytes / 2] == 1 ? static_cast<double>(bytes) / s : 0;
}

// Drops every file under `dir` from the page cache (they are clean: fsynced).
void Evict(const std::string& dir) {
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    const int fd = ::open(f.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// Sequential read speed of the device: write `bytes`, sync, evict, read back.
double DeviceReadBytesPerSecond(const std::string& dir, int64_t bytes) {
  const std::string path = dir + "/seqread.bin";
  std::vector<char> buf(8 << 20, 7);
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int64_t done = 0; done < bytes; done += static_cast<int64_t>(buf.size())) {
      if (::write(fd, buf.data(), buf.size()) < 0) break;
    }
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  const auto t0 = Clock::now();
  const int fd = ::open(path.c_str(), O_RDONLY);
  int64_t got = 0;
  for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;) got += n;
  ::close(fd);
  const double s = Seconds(t0, Clock::now());
  fs::remove(path);
  return static_cast<double>(got) / s;
}

// Sends every record to the file tier and to a MemoryDiskTier that counts
// what the policy considers new (pages by id, blobs by identity).
class TeeTier final : public DiskTier {
 public:
  TeeTier(disk::FileDiskTier* file, MemoryDiskTier* mem) : file_(file), mem_(mem) {}
  Status Put(const DiskRecord& r) override {
    (void)mem_->Put(r);
    return file_->Put(r);
  }
  std::optional<DiskPoint> Lookup(TokenSpan p, int64_t longer, bool rec) override { return file_->Lookup(p, longer, rec); }
  Result<DiskLoad> Load(EntryId e, int64_t n) override { return file_->Load(e, n); }
  void Erase(EntryId e) override {
    mem_->Erase(e);
    file_->Erase(e);
  }
  bool Contains(EntryId e) override { return file_->Contains(e); }
  DiskStats Stats() override { return file_->Stats(); }

 private:
  disk::FileDiskTier* file_;
  MemoryDiskTier* mem_;
};

// A request without the forward pass: the sequence's pages and states are
// the engine's types, filled with arbitrary bytes (the tier never looks).
struct FakeEngine {
  KvLayout kv;
  engine::RecurrentLayout rec;

  void Run(LineageCache& cache, const Tokens& prompt) {
    auto lr = cache.Lookup(prompt);
    PageTable table = lr->restore.length > 0
                          ? PageTable(*std::static_pointer_cast<const PagedKv>(lr->restore.kv), lr->restore.length)
                          : PageTable(kv);
    CommitRequest req;
    int64_t at = lr->restore.length;
    auto grow = [&](int64_t to) {
      table.Reserve(to - at);
      std::vector<float> krow(static_cast<size_t>(kv.head_dim)), vrow(static_cast<size_t>(kv.head_dim));
      for (int64_t pos = at; pos < to; ++pos) {
        for (int64_t l = 0; l < kv.num_layers; ++l) {
          for (int64_t h = 0; h < kv.num_kv_heads; ++h) {
            std::fill(krow.begin(), krow.end(), static_cast<float>(pos));
            std::fill(vrow.begin(), vrow.end(), static_cast<float>(l));
            table.WriteRow(l, h, pos, krow.data(), vrow.data());
          }
        }
      }
      table.Commit(to - at);
      at = to;
    };
    for (const PlannedCapture& c : lr->captures) {
      grow(c.n);
      req.captured.push_back({c.n, c.kind, std::make_shared<engine::RecurrentState>(rec)});
    }
    grow(static_cast<int64_t>(prompt.size()));
    req.prompt = prompt;
    req.kv = table.Share();
    req.state = std::make_shared<engine::RecurrentState>(rec);
    req.lease = std::move(lr->lease);
    (void)cache.Commit(std::move(req));
  }
};

// Writes without fsync, to build the start-up directory quickly.
class NoSyncEnv final : public ForwardingFileEnv {
 public:
  Status WriteAtomic(const std::string& tmp, const std::string& path,
                     std::span<const std::span<const uint8_t>> parts) override {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      for (auto p : parts) out.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
      if (!out) return IoError(tmp + ": write failed");
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) return Status(ec == std::errc::no_such_file_or_directory ? StatusCode::kNotFound : StatusCode::kIoError,
                          path + ": " + ec.message());
    return Status::Ok();
  }
};

disk::Key128 FakeFingerprint() {
  disk::Key128 k;
  k.bytes.fill(0x5a);
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : "/tmp/lineage_bench_disk";
  const int64_t startup_entries = argc > 2 ? std::atoll(argv[2]) : 10000;
  fs::remove_all(root);
  fs::create_directories(root);
  std::printf("bench_disk  machine: %s, %u threads  build: %s  commit: %s\n  directory: %s (%s)\n",
              Shell("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'").c_str(),
              std::thread::hardware_concurrency(),
#ifdef NDEBUG
              "release",
#else
              "debug",
#endif
              Shell("git -C " + fs::path(__FILE__).parent_path().string() + " rev-parse --short HEAD").c_str(), root.c_str(),
              Shell("df -T " + root + " | tail -1 | awk '{print $1\" \"$2}'").c_str());

  auto spec = model::LookupShape(model::Arch::kQwen3_5, "qwen3.5-0.8b");
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
    return 1;
  }
  const model::ModelConfig& cfg = spec->config;
  FakeEngine fake{{cfg.num_full_layers(), cfg.num_kv_heads, cfg.head_dim, 64}, engine::RecurrentLayout::For(cfg)};
  auto codec = std::make_shared<engine::EngineDiskCodec>(FakeFingerprint(), fake.kv, fake.rec);

  // 1. A 20-turn conversation: a 2,000-token system prompt, then per turn a
  //    user message and a reply (the next prompt repeats the reply).
  const std::string dir = root + "/tier";
  disk::FileDiskTierOptions o;
  o.dir = dir;
  auto tier = disk::FileDiskTier::Open(o, codec);
  if (!tier.ok()) {
    std::fprintf(stderr, "%s\n", tier.status().ToString().c_str());
    return 1;
  }
  MemoryDiskTier counted(int64_t{1} << 50);
  TeeTier tee(tier->get(), &counted);
  CacheOptions co;
  LineageCache cache(co, &tee);
  Tokens prompt;
  for (int i = 0; i < 2000; ++i) prompt.push_back(i + 1);
  const int64_t page_bytes = fake.kv.page_bytes(), state_bytes = fake.rec.total_floats() * 4;
  std::printf("\n1. bytes written per turn (page %s KiB for 64 tokens, state %.1f MiB)\n",
              std::to_string(page_bytes / 1024).c_str(), state_bytes / 1048576.0);
  std::printf("%5s %8s %12s %14s %16s %8s %8s\n", "turn", "tokens", "file tier", "new pages+st", "whole snapshot",
              "ratio", "vs whole");
  int64_t sum_file = 0, sum_new = 0, sum_whole = 0;
  for (int turn = 1; turn <= 20; ++turn) {
    const int user = 150 + (turn * 37) % 300, reply = 100 + (turn * 53) % 400;
    for (int i = 0; i < user + reply; ++i) prompt.push_back(100000 * turn + i);
    const int64_t file_before = (*tier)->Stats().bytes_written, mem_before = counted.Stats().bytes_written;
    fake.Run(cache, prompt);
    (*tier)->Flush();
    const int64_t file = (*tier)->Stats().bytes_written - file_before;
    const int64_t fresh = counted.Stats().bytes_written - mem_before;
    // One whole snapshot per turn (the seed wrote two: at m - 16 and at m).
    const int64_t whole = fake.kv.num_pages(static_cast<int64_t>(prompt.size())) * page_bytes + state_bytes;
    sum_file += file, sum_new += fresh, sum_whole += whole;
    std::printf("%5d %8zu %12lld %14lld %16lld %8.3f %8.3f\n", turn, prompt.size(), static_cast<long long>(file),
                static_cast<long long>(fresh), static_cast<long long>(whole), static_cast<double>(file) / fresh,
                static_cast<double>(file) / whole);
  }
  std::printf("total %8s %12lld %14lld %16lld %8.3f %8.3f  (target ratio <= 1.1)\n", "", static_cast<long long>(sum_file),
              static_cast<long long>(sum_new), static_cast<long long>(sum_whole),
              static_cast<double>(sum_file) / sum_new, static_cast<double>(sum_file) / sum_whole);
  const int64_t on_disk = (*tier)->Stats().bytes;
  tier->reset();

  // 2. Restore from disk after a restart, files evicted from the page cache.
  Evict(dir);
  auto again = disk::FileDiskTier::Open(o, codec);
  std::vector<disk::StoredEntryInfo> stored = (*again)->List();
  disk::StoredEntryInfo last = stored.front();
  for (const auto& e : stored) {
    if (e.tokens.size() > last.tokens.size()) last = e;
  }
  // The device is shared: its speed is measured right before and right after.
  const double device_before = DeviceReadBytesPerSecond(root, int64_t{384} << 20);
  const auto t0 = Clock::now();
  Result<DiskLoad> loaded = (*again)->Load(last.id, static_cast<int64_t>(last.tokens.size()));
  const double restore_s = Seconds(t0, Clock::now());
  const int64_t read = (*again)->Stats().bytes_read;
  if (!loaded.ok()) std::fprintf(stderr, "restore failed: %s\n", loaded.status().ToString().c_str());
  const double device_after = DeviceReadBytesPerSecond(root, int64_t{384} << 20);
  const double device = (device_before + device_after) / 2;
  const auto t1 = Clock::now();
  Result<DiskLoad> warm = (*again)->Load(last.id, static_cast<int64_t>(last.tokens.size()));
  const double warm_s = Seconds(t1, Clock::now());
  std::printf("\n2. restore of %zu tokens from disk: %.1f MiB in %.3f s = %.0f MiB/s; device sequential read %.0f MiB/s "
              "(before %.0f, after %.0f): %.0f%% of it; from the page cache %.0f MiB/s\n",
              last.tokens.size(), read / 1048576.0, restore_s, read / 1048576.0 / restore_s, device / 1048576.0,
              device_before / 1048576.0, device_after / 1048576.0, 100.0 * (read / restore_s) / device,
              read / 1048576.0 / warm_s);
  std::printf("   (memcpy on this machine right now: %.0f MiB/s)\n", MemcpyBytesPerSecond(int64_t{256} << 20) / 1048576.0);
  again->reset();

  // 3. Start-up over many entry files: siblings of 100 conversations, each
  //    1,000 tokens sharing 960 with its conversation (small pages keep the
  //    file count to entries + shared pages).
  const std::string many = root + "/many";
  NoSyncEnv no_sync;
  {
    auto small = std::make_shared<engine::EngineDiskCodec>(FakeFingerprint(), KvLayout{1, 1, 8, 64},
                                                           engine::RecurrentLayout{});
    disk::FileDiskTierOptions mo;
    mo.dir = many;
    mo.max_pending_writes = 1 << 20;
    mo.env = &no_sync;  // setup only: the start-up below reads through the real environment
    auto t = disk::FileDiskTier::Open(mo, small);
    PageTable base_table(KvLayout{1, 1, 8, 64});
    for (int64_t i = 0; i < startup_entries; ++i) {
      Tokens t2;
      for (int j = 0; j < 960; ++j) t2.push_back(static_cast<TokenId>((i / 100) * 1000 + j));
      for (int j = 0; j < 40; ++j) t2.push_back(static_cast<TokenId>(i * 50 + j + 7));
      PageTable table(KvLayout{1, 1, 8, 64});
      table.Reserve(static_cast<int64_t>(t2.size()));
      table.Commit(static_cast<int64_t>(t2.size()));
      DiskRecord r;
      r.id = static_cast<EntryId>(i + 1);
      r.tokens = t2;
      r.kv = table.Share();
      (void)(*t)->Put(r);
    }
    (*t)->Flush();
    t->reset();
    const auto s0 = Clock::now();
    mo.env = nullptr;
    auto reopened = disk::FileDiskTier::Open(mo, small);
    const double warm_s = Seconds(s0, Clock::now());
    const int64_t restored = (*reopened)->Counters().restored_entries;
    reopened->reset();
    Evict(many);
    const auto s1 = Clock::now();
    auto cold = disk::FileDiskTier::Open(mo, small);
    const double cold_s = Seconds(s1, Clock::now());
    std::printf("\n3. start-up over %lld entry files: %.0f ms (page cache warm), %.0f ms (files evicted first)\n",
                static_cast<long long>(restored), warm_s * 1000, cold_s * 1000);
  }
  std::printf("\n{\"bench\":\"disk\",\"turns\":20,\"file_bytes\":%lld,\"new_bytes\":%lld,\"whole_bytes\":%lld,"
              "\"ratio_new\":%.4f,\"on_disk_bytes\":%lld,\"restore_mib_s\":%.1f,\"device_mib_s\":%.1f}\n",
              static_cast<long long>(sum_file), static_cast<long long>(sum_new), static_cast<long long>(sum_whole),
              static_cast<double>(sum_file) / sum_new, static_cast<long long>(on_disk), read / 1048576.0 / restore_s,
              device / 1048576.0);
  fs::remove_all(root);
  return 0;
}
