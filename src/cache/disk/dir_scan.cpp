#include "cache/disk/dir_scan.h"

namespace lineage::cache::disk {
namespace {

// Names in `dir`; a missing directory is empty.
Result<std::vector<std::string>> ListOrEmpty(FileEnv* env, const std::string& dir) {
  Result<std::vector<std::string>> names = env->List(dir);
  if (!names.ok() && names.status().code() == StatusCode::kNotFound) return std::vector<std::string>{};
  return names;
}

Status ScanBlobs(FileEnv* env, const std::string& dir, const char* suffix,
                 std::unordered_set<Key128, Key128Hash>* keys) {
  Result<std::vector<std::string>> subdirs = ListOrEmpty(env, dir);
  if (!subdirs.ok()) return subdirs.status();
  for (const std::string& sub : *subdirs) {
    Result<std::vector<std::string>> names = ListOrEmpty(env, dir + "/" + sub);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      Key128 key;
      if (DirLayout::ParseBlobName(name, suffix, &key) && key.Hex().substr(0, 2) == sub) keys->insert(key);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<DirScan> ScanDir(FileEnv* env, const DirLayout& layout) {
  DirScan scan;
  Result<std::vector<std::string>> tmp = ListOrEmpty(env, layout.tmp_dir());
  if (!tmp.ok()) return tmp.status();
  for (const std::string& name : *tmp) scan.tmp_files.push_back(layout.tmp_dir() + "/" + name);

  if (Status st = ScanBlobs(env, layout.pages_dir(), ".kvp", &scan.pages); !st.ok()) return st;
  if (Status st = ScanBlobs(env, layout.states_dir(), ".rst", &scan.states); !st.ok()) return st;

  Result<std::vector<std::string>> names = ListOrEmpty(env, layout.entries_dir());
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    uint64_t file_id = 0;
    const std::string path = layout.entries_dir() + "/" + name;
    if (!DirLayout::ParseEntryName(name, &file_id)) {
      scan.damaged.push_back({path, Corrupt(path + ": not an entry file name")});
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
