// The oracle files in ../shared/data/models, written by llama.cpp (their
// README says how): where they are, and reading their token ids and
// logits. Shared by the model and engine tests that compare with them.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lineage::oracle_files {

inline std::string ModelsDir() { return std::string(LINEAGE_SHARED_DATA) + "/models"; }

// Token ids separated by commas, whitespace or both (prompt_ids.txt,
// NAME.greedy.txt).
inline std::vector<int32_t> ReadIds(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(text.begin(), text.end(), ',', ' ');
  std::vector<int32_t> ids;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) ids.push_back(std::stoi(text.substr(i, j - i)));
    i = j;
  }
  return ids;
}

// Every fp32 value of a raw little-endian file (NAME.logits.f32).
inline std::vector<float> ReadLogits(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> v;
  float x;
  while (in.read(reinterpret_cast<char*>(&x), sizeof x)) v.push_back(x);
  return v;
}

template <class T>
int32_t Argmax(const std::vector<T>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The names (file names without `suffix`) of the files in ModelsDir() that
// end in `suffix` and start with one of `prefixes` (any, if empty), sorted;
// none when the directory is absent.
inline std::vector<std::string> NamesEndingIn(const std::string& suffix, const std::vector<std::string>& prefixes = {}) {
  std::vector<std::string> names;
  if (!std::filesystem::exists(ModelsDir())) return names;
  for (const auto& e : std::filesystem::directory_iterator(ModelsDir())) {
    const std::string n = e.path().filename().string();
    if (n.size() <= suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const bool prefixed =
        prefixes.empty() || std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return n.rfind(p, 0) == 0; });
    if (prefixed) names.push_back(n.substr(0, n.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace lineage::oracle_files
