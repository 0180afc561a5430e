// A fuzz target: one parser entry point fed arbitrary bytes.
//
// Each target is a function with libFuzzer's signature that must return
// normally for every input: an input the parser refuses is an error value,
// never a crash, a sanitizer report, an uncaught exception or a hang. It
// returns 1 when the parser accepted the input (the driver keeps some of
// those to mutate further, a cheap stand-in for coverage feedback) and 0
// otherwise.
//
// Targets register themselves at static-initialisation time with
// LINEAGE_FUZZ_TARGET; the driver (fuzz_main.cpp) looks them up by name.
// Registration is not thread-safe and happens before main.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lineage::fuzz {

using TargetFn = int (*)(const uint8_t* data, size_t size);

struct Target {
  std::string name;
  TargetFn fn = nullptr;
  // Fragments the mutator splices in: tokens of the input's grammar.
  std::vector<std::string> dictionary;
  size_t max_input_bytes = 64 << 10;
  // Opening and closing fragments the mutator nests around a part of the
  // input, up to 100,000 deep: recursive walks are where parsers overflow.
  std::vector<std::pair<std::string, std::string>> nestings;
};

std::vector<Target>& Registry();

struct Registrar {
  explicit Registrar(Target target) { Registry().push_back(std::move(target)); }
};

}  // namespace lineage::fuzz

#define LINEAGE_FUZZ_CONCAT2(a, b) a##b
#define LINEAGE_FUZZ_CONCAT(a, b) LINEAGE_FUZZ_CONCAT2(a, b)
// LINEAGE_FUZZ_TARGET(name, fn, dictionary, max_input_bytes)
#define LINEAGE_FUZZ_TARGET(...) \
  static ::lineage::fuzz::Registrar LINEAGE_FUZZ_CONCAT(fuzz_registrar_, __LINE__)(::lineage::fuzz::Target{__VA_ARGS__})
