// A deterministic byte-level BPE vocabulary for random-weight test models,
// laid out like the real Qwen vocabularies: byte tokens and merges first,
// the special and added tokens (<|endoftext|>, <|im_start|>, <|im_end|>,
// <tool_call>, <think>, ...) at the end, with Qwen3.5's ids when the size is
// the real 248320.
#pragma once

#include <cstdint>

#include "model/vocab_data.h"

namespace lineage::text {

enum class VocabFlavour { kQwen35, kQwen3 };

// `vocab_size` counts every id including special tokens; it must leave room
// for the 256 byte tokens and the special tokens.
model::VocabData MakeSyntheticVocab(int64_t vocab_size, VocabFlavour flavour, uint64_t seed);

}  // namespace lineage::text
