// Byte-level editing of model files for the corruption tests: read and write
// whole files, and patch GGUF strings and tensor-directory entries in place.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace lineage::model::testing_util {

using Bytes = std::string;

inline Bytes ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), {});
}
inline void WriteBytes(const std::string& path, const Bytes& b) { std::ofstream(path, std::ios::binary) << b; }

// A GGUF string as stored: u64 length then the bytes.
inline Bytes GgufString(const std::string& s) {
  Bytes b(8, '\0');
  uint64_t n = s.size();
  std::memcpy(b.data(), &n, 8);
  return b + s;
}

// Replaces the one occurrence of `from` (same length as `to`); returns its offset.
inline size_t ReplaceOnce(Bytes& b, const Bytes& from, const Bytes& to) {
  EXPECT_EQ(from.size(), to.size());
  size_t at = b.find(from);
  EXPECT_NE(at, Bytes::npos) << "pattern not found";
  EXPECT_EQ(b.find(from, at + 1), Bytes::npos) << "pattern not unique";
  b.replace(at, from.size(), to);
  return at;
}

// Overwrites the bytes `skip` bytes after tensor `name`'s entry name in the
// GGUF tensor directory with `value`.
template <typename T>
void PatchTensorEntry(Bytes& b, const std::string& name, size_t skip, T value) {
  size_t at = ReplaceOnce(b, GgufString(name), GgufString(name));
  std::memcpy(&b[at + 8 + name.size() + skip], &value, sizeof(T));
}

// Rewrites a safetensors header through `edit`, keeping the data section.
inline void EditSafetensorsHeader(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  Bytes b = ReadBytes(path);
  uint64_t n;
  std::memcpy(&n, b.data(), 8);
  nlohmann::json h = nlohmann::json::parse(b.substr(8, n));
  edit(h);
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t m = text.size();
  Bytes out(8, '\0');
  std::memcpy(out.data(), &m, 8);
  WriteBytes(path, out + text + b.substr(8 + n));
}

}  // namespace lineage::model::testing_util
