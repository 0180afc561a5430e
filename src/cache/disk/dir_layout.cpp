#include "cache/disk/dir_layout.h"

#include <cctype>
#include <cstdio>
#include <cstring>

namespace lineage::cache::disk {

std::string DirLayout::EntryName(uint64_t file_id) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016llx.ent", static_cast<unsigned long long>(file_id));
  return buf;
}

std::string DirLayout::TmpPath(const std::string& final_name, uint64_t writer_tag) const {
  char tag[24];
  std::snprintf(tag, sizeof(tag), ".%016llx.tmp", static_cast<unsigned long long>(writer_tag));
  return tmp_dir() + "/" + final_name + tag;
}

std::string DirLayout::EntryPath(uint64_t file_id) const { return entries_dir() + "/" + EntryName(file_id); }

bool DirLayout::ParseEntryName(const std::string& name, uint64_t* file_id) {
  if (name.size() != 20 || name.compare(16, 4, ".ent") != 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < 16; ++i) {
    const char c = name[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  *file_id = v;
  return true;
}

bool DirLayout::ParseBlobName(const std::string& name, const char* suffix, Key128* key) {
  const size_t n = std::strlen(suffix);
  if (name.size() != 32 + n || name.compare(32, n, suffix) != 0) return false;
  return Key128::FromHex(name.substr(0, 32), key);
}

bool DirLayout::IsTmpName(const std::string& name) {
  constexpr size_t kTag = 1 + 16 + 4;  // ".<16 hex>.tmp"
  if (name.size() <= kTag || name.compare(name.size() - 4, 4, ".tmp") != 0 || name[name.size() - kTag] != '.')
    return false;
  for (size_t i = name.size() - kTag + 1; i < name.size() - 4; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])) || std::isupper(static_cast<unsigned char>(name[i])))
      return false;
  const std::string final_name = name.substr(0, name.size() - kTag);
  uint64_t id = 0;
  Key128 key;
  return ParseEntryName(final_name, &id) || ParseBlobName(final_name, ".kvp", &key) ||
         ParseBlobName(final_name, ".rst", &key);
}

bool DirLayout::IsOwnTopName(const std::string& name) {
  for (const char* own : {"tmp", "entries", "pages", "states", "LOCK", "COLLECT"})
    if (name == own) return true;
  return false;
}

std::string DirLayout::BlobPath(const std::string& dir, const Key128& key, const char* suffix) {
  const std::string hex = key.Hex();
  return dir + "/" + hex.substr(0, 2) + "/" + hex + suffix;
}

}  // namespace lineage::cache::disk
