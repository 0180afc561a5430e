// `lineage cache ls|show|verify|gc --dir DIR [--model PATH]`: what a disk
// cache directory holds (docs/disk-format.md), for which model, how big, when
// last used; checksum verification; garbage collection. With --model, entries
// of any other model are flagged as foreign (and `gc --foreign` removes them).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "cache/disk/maintenance.h"
#include "cli/command.h"
#include "engine/disk_codec.h"
#include "tools/model_source.h"

namespace lineage::cli {
namespace {

using cache::disk::DirLayout;
using cache::disk::Key128;

struct CacheArgs {
  std::string dir;
  std::string model;
  std::string entry;
  bool foreign = false;
};

std::string Bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string When(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

Result<std::optional<Key128>> ModelKey(const std::string& path) {
  if (path.empty()) return std::optional<Key128>();
  engine::ModelSource src;
  src.path = path;
  Result<std::shared_ptr<const model::Model>> m = engine::OpenModel(src);
  if (!m.ok()) return m.status();
  return std::optional<Key128>(engine::ModelFingerprint(**m));
}

std::string ModelLabel(const Key128& fp, const std::optional<Key128>& mine) {
  std::string s = fp.Hex().substr(0, 12);
  if (mine) s += fp == *mine ? " (this model)" : " FOREIGN";
  return s;
}

int Fail(const Status& st) {
  std::fprintf(stderr, "lineage cache: %s\n", st.ToString().c_str());
  return 1;
}

int List(const CacheArgs& a, const std::optional<Key128>& mine) {
  Result<cache::disk::DirReport> r = cache::disk::InspectDir(DefaultFileEnv(), DirLayout(a.dir), false);
  if (!r.ok()) return Fail(r.status());
  std::printf("%-16s  %-24s  %8s  %6s  %6s  %10s  %s\n", "entry", "model", "tokens", "states", "anchor", "bytes",
              "last used");
  for (const auto& e : r->entries) {
    const auto& m = e.entry.meta;
    std::printf("%016llx  %-24s  %8zu  %6zu  %6s  %10s  %s%s\n", static_cast<unsigned long long>(m.file_id),
                ModelLabel(m.fingerprint, mine).c_str(), m.tokens.size(), m.states.size(), m.anchor ? "yes" : "no",
                Bytes(e.entry.file_bytes + e.blob_bytes).c_str(), When(e.entry.mtime_ms).c_str(),
                e.ok() ? "" : "  (blobs missing or unusable)");
  }
  // What the listing skipped, one line each: a FIFO or device named like a
  // cache file is never opened (it could block), and says so.
  for (const auto& d : r->damaged) std::fprintf(stderr, "skipping %s\n", d.why.message().c_str());
  for (const auto& d : r->unusable_entries) std::fprintf(stderr, "skipping %s\n", d.why.message().c_str());
  for (const auto& d : r->unusable_blobs) std::fprintf(stderr, "skipping %s\n", d.why.message().c_str());
  std::printf("%zu entries, %lld blob files (%s), %lld orphan blobs (%s), %zu damaged entry files, %zu temporary files\n",
              r->entries.size(), static_cast<long long>(r->blob_files), Bytes(r->blob_bytes).c_str(),
              static_cast<long long>(r->orphan_blobs), Bytes(r->orphan_bytes).c_str(), r->damaged.size(),
              r->tmp_files.size());
  return 0;
}

int Show(const CacheArgs& a, const std::optional<Key128>& mine) {
  Result<cache::disk::DirReport> r = cache::disk::InspectDir(DefaultFileEnv(), DirLayout(a.dir), false);
  if (!r.ok()) return Fail(r.status());
  for (const auto& e : r->entries) {
    const auto& m = e.entry.meta;
    if (DirLayout::EntryName(m.file_id).rfind(a.entry, 0) != 0) continue;
    std::printf("entry      %016llx (%s)\n", static_cast<unsigned long long>(m.file_id), e.entry.path.c_str());
    std::printf("model      %s %s\n", m.fingerprint.Hex().c_str(), ModelLabel(m.fingerprint, mine).c_str() + 12);
    std::printf("anchor     %s\ntokens     %zu (page %lld tokens, %zu pages)\n", m.anchor ? "yes" : "no",
                m.tokens.size(), static_cast<long long>(m.page_tokens), m.pages.size());
    std::printf("created    %s\nlast used  %s\nbytes      %s (entry file %s)\n", When(m.created_ms).c_str(),
                When(e.entry.mtime_ms).c_str(), Bytes(e.entry.file_bytes + e.blob_bytes).c_str(),
                Bytes(e.entry.file_bytes).c_str());
    for (const auto& s : m.states) {
      std::printf("state      at %-8lld %-12s %s\n", static_cast<long long>(s.n), cache::PointKindName(s.kind),
                  s.key.Hex().c_str());
    }
    for (const std::string& p : e.problems) std::printf("problem    %s\n", p.c_str());
    return 0;
  }
  return Fail(NotFound("no entry " + a.entry + " in " + a.dir));
}

int Verify(const CacheArgs& a) {
  Result<cache::disk::DirReport> r = cache::disk::InspectDir(DefaultFileEnv(), DirLayout(a.dir), true);
  if (!r.ok()) return Fail(r.status());
  int64_t bad = 0;
  for (const auto& d : r->damaged) {
    std::printf("BAD  %s\n", d.why.ToString().c_str());
    ++bad;
  }
  for (const auto& d : r->unusable_blobs) {
    std::printf("BAD  %s\n", d.why.ToString().c_str());
    ++bad;
  }
  for (const auto& d : r->unusable_entries) {
    std::printf("BAD  %s\n", d.why.ToString().c_str());
    ++bad;
  }
  for (const auto& e : r->entries) {
    if (e.ok()) continue;
    ++bad;
    for (const std::string& p : e.problems) std::printf("BAD  %s: %s\n", e.entry.path.c_str(), p.c_str());
  }
  std::printf("%zu entries checked, %lld bad; %lld blob files (%s), %lld orphans\n",
              r->entries.size() + r->damaged.size(), static_cast<long long>(bad),
              static_cast<long long>(r->blob_files), Bytes(r->blob_bytes).c_str(),
              static_cast<long long>(r->orphan_blobs));
  return bad == 0 ? 0 : 2;
}

int Gc(const CacheArgs& a, const std::optional<Key128>& mine) {
  if (a.foreign && !mine) return Fail(InvalidArgument("--foreign needs --model"));
  Result<cache::disk::GcReport> r =
      cache::disk::CollectGarbage(DefaultFileEnv(), DirLayout(a.dir), mine, a.foreign);
  if (!r.ok()) return Fail(r.status());
  for (const std::string& why : r->removed_why) std::fprintf(stderr, "removing %s\n", why.c_str());
  for (const std::string& why : r->skipped_why) std::fprintf(stderr, "skipping %s\n", why.c_str());
  std::printf("removed %lld temporary files, %lld damaged entries, %lld foreign entries, %lld orphan blobs, "
              "%lld blob names that were not regular files: %s freed\n",
              static_cast<long long>(r->tmp_files), static_cast<long long>(r->damaged_entries),
              static_cast<long long>(r->foreign_entries), static_cast<long long>(r->orphan_blobs),
              static_cast<long long>(r->unusable_blobs), Bytes(r->bytes_freed).c_str());
  return 0;
}

Register reg{{"cache", "Inspect, verify and clean a disk cache directory", [](CLI::App& sub) {
                auto args = std::make_shared<CacheArgs>();
                sub.require_subcommand(1);
                auto common = [&](CLI::App* c) {
                  c->add_option("--dir", args->dir, "the disk cache directory")->required();
                  c->add_option("--model", args->model, "flag entries of any other model as foreign");
                };
                CLI::App* ls = sub.add_subcommand("ls", "list entries: model, tokens, bytes, last use");
                CLI::App* show = sub.add_subcommand("show", "details of one entry");
                CLI::App* verify = sub.add_subcommand("verify", "check every file's checksum");
                CLI::App* gc = sub.add_subcommand("gc", "remove temporary files, damaged entries, orphan blobs");
                for (CLI::App* c : {ls, show, verify, gc}) common(c);
                show->add_option("entry", args->entry, "entry file id (a prefix is enough)")->required();
                gc->add_flag("--foreign", args->foreign, "also remove other models' entries (needs --model)");
                return std::function<int()>([args, ls, show, verify, gc] {
                  Result<std::optional<Key128>> mine = ModelKey(args->model);
                  if (!mine.ok()) return Fail(mine.status());
                  if (ls->parsed()) return List(*args, *mine);
                  if (show->parsed()) return Show(*args, *mine);
                  if (verify->parsed()) return Verify(*args);
                  if (gc->parsed()) return Gc(*args, *mine);
                  return 1;
                });
              }}};

}  // namespace
}  // namespace lineage::cli
