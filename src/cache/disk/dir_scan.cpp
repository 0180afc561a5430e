#include "cache/disk/dir_scan.h"

namespace lineage::cache::disk {
namespace {

// Entries of `dir`; a missing directory is empty.
Result<std::vector<DirEntry>> ListOrEmpty(FileEnv* env, const std::string& dir) {
  Result<std::vector<DirEntry>> entries = env->List(dir);
  if (!entries.ok() && entries.status().code() == StatusCode::kNotFound) return std::vector<DirEntry>{};
  return entries;
}

Status NotRegular(const std::string& path, const DirEntry& e) {
  return Corrupt(path + ": not a regular file (a " + e.kind_name + ")");
}

Status ScanBlobs(FileEnv* env, const std::string& dir, const char* suffix,
                 std::unordered_set<Key128, Key128Hash>* keys, std::vector<DamagedFile>* unusable) {
  Result<std::vector<DirEntry>> subdirs = ListOrEmpty(env, dir);
  if (!subdirs.ok()) return subdirs.status();
  for (const DirEntry& sub : *subdirs) {
    // Not one of ours; never a reason to refuse to start. A linked
    // folder is never entered.
    if (sub.name.size() != 2 || sub.kind != FileKind::kDirectory || sub.link) continue;
    Result<std::vector<DirEntry>> entries = ListOrEmpty(env, dir + "/" + sub.name);
    if (!entries.ok()) continue;
    for (const DirEntry& e : *entries) {
      Key128 key;
      if (!DirLayout::ParseBlobName(e.name, suffix, &key) || key.Hex().substr(0, 2) != sub.name) continue;
      const std::string path = dir + "/" + sub.name + "/" + e.name;
      if (e.kind != FileKind::kRegular || e.link) {
        unusable->push_back({path, NotRegular(path, e)});
      } else {
        keys->insert(key);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckCacheDir(FileEnv* env, const DirLayout& layout) {
  Result<std::vector<DirEntry>> top = env->List(layout.root());
  if (!top.ok()) return top.status();
  for (const DirEntry& e : *top) {
    const std::string path = layout.root() + "/" + e.name;
    if (!DirLayout::IsOwnTopName(e.name))
      return InvalidArgument(layout.root() + " is not a cache directory: it holds '" + e.name +
                                "', which Lineage never writes there (give an empty directory, or one Lineage made)");
    if (e.link)
      return InvalidArgument(path + " is a symbolic link: a cache directory's own folders must be real ones "
                                "(Lineage never follows a link it did not make)");
    const bool folder = e.name != "LOCK" && e.name != "COLLECT";
    if (folder && e.kind != FileKind::kDirectory)
      return InvalidArgument(path + " is a " + e.kind_name + ", not the folder a cache directory keeps there");
  }
  return Status::Ok();
}

Result<DirScan> ScanDir(FileEnv* env, const DirLayout& layout) {
  LINEAGE_RETURN_IF_ERROR(CheckCacheDir(env, layout));
  DirScan scan;
  Result<std::vector<DirEntry>> tmp = ListOrEmpty(env, layout.tmp_dir());
  if (!tmp.ok()) return tmp.status();
  // Only the temporary files a tier writes (DirLayout::TmpPath): never
  // anything else someone put there.
  for (const DirEntry& e : *tmp)
    if (!e.link && e.kind == FileKind::kRegular && DirLayout::IsTmpName(e.name))
      scan.tmp_files.push_back(layout.tmp_dir() + "/" + e.name);

  LINEAGE_RETURN_IF_ERROR(ScanBlobs(env, layout.pages_dir(), ".kvp", &scan.pages, &scan.unusable_blobs));
  LINEAGE_RETURN_IF_ERROR(ScanBlobs(env, layout.states_dir(), ".rst", &scan.states, &scan.unusable_blobs));

  Result<std::vector<DirEntry>> names = ListOrEmpty(env, layout.entries_dir());
  if (!names.ok()) return names.status();
  for (const DirEntry& entry : *names) {
    const std::string& name = entry.name;
    uint64_t file_id = 0;
    const std::string path = layout.entries_dir() + "/" + name;
    if (!DirLayout::ParseEntryName(name, &file_id)) {
      scan.damaged.push_back({path, Corrupt(path + ": not an entry file name")});
      continue;
    }
    if (entry.kind != FileKind::kRegular || entry.link) {
      scan.unusable_entries.push_back({path, NotRegular(path, entry)});
      continue;
    }
    Result<EntryMeta> meta = ReadEntryFile(env, path);
    if (meta.ok() && meta->file_id != file_id) meta = Corrupt(path + ": file id differs from its name");
    if (!meta.ok()) {
      scan.damaged.push_back({path, meta.status()});
      continue;
    }
    ScannedEntry e;
    e.path = path;
    e.meta = std::move(*meta);
    Result<uint64_t> size = env->FileSize(path);
    Result<int64_t> mtime = env->MtimeMs(path);
    e.file_bytes = size.ok() ? static_cast<int64_t>(*size) : 0;
    e.mtime_ms = mtime.ok() ? *mtime : 0;
    scan.entries.push_back(std::move(e));
  }
  return scan;
}

}  // namespace lineage::cache::disk
