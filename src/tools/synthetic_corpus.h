// SyntheticCorpus: a deterministic training text for the synthetic BPE
// vocabulary: English prose, C++ and Python code, JSON and some Chinese and
// Japanese, assembled from passages and word lists built into the source.
// The seed picks the order and the combinations; the same seed always gives
// the same bytes. Thread-safe (pure function).
#pragma once

#include <cstdint>
#include <string>

namespace lineage::text {

// About `approx_bytes` of text (a little more or less).
std::string SyntheticCorpus(uint64_t seed, size_t approx_bytes = 400 * 1024);

}  // namespace lineage::text
