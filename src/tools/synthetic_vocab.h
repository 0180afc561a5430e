// A deterministic byte-level BPE vocabulary for random-weight test models,
// laid out like the real Qwen vocabularies: the 256 byte tokens first (GPT-2
// order), then merges learned on a built-in corpus (SyntheticCorpus: English,
// code, JSON, Chinese and Japanese), then further valid merges (each joins
// two existing tokens into a new word-like token) until the normal ids are
// used up, then the special and added tokens (<|endoftext|>, <|im_start|>,
// <|im_end|>, <tool_call>, <think>, ...).
//
// Special ids: Qwen3.5's real ids when flavour is kQwen35 and the size is
// the real 248320 (<|endoftext|> 248044 ... </think> 248069, audio 248070-
// 248076, then "[PADn]" unused tokens); Qwen3's real ids for kQwen3 at
// 151936 (<|endoftext|> 151643 ... </think> 151668, then padding);
// otherwise packed at the end of the vocabulary.
//
// kKimi is Kimi's shape instead: the kimi-k2 pre-tokenizer, the normal
// tokens as tiktoken ranks (VocabData::tiktoken_model is filled and the
// merges are derived from the ranks, text/tiktoken.h), then 256 special
// ids as Kimi's tokenizer_config.json names them ([BOS], [EOS], <|im_end|>,
// <|im_user|>, <|im_assistant|>, <|im_system|>, <|im_middle|>, the
// tool-call markers, [UNK], [PAD], <|reserved_token_ID|> elsewhere); at the
// real size 163840 they are ids 163584-163839. EOS is <|im_end|>.
//
// Every merge is valid (both parts and the result are tokens, parts made
// before the result), so a tokenizer built from it round-trips any text
// and encodes natural text into multi-character tokens. The same
// (vocab_size, flavour, seed) always gives the same vocabulary. Building the
// full 248320-token vocabulary takes well under a second or two.
#pragma once

#include <cstdint>

#include "model/config.h"
#include "model/vocab_data.h"

namespace lineage::text {

enum class VocabFlavour { kQwen35, kQwen3, kKimi };

// The flavour of the real model family of `arch` (mkmodel's choice).
VocabFlavour VocabFlavourFor(model::Arch arch);

// `vocab_size` counts every id including special tokens. REQUIRES: it
// leaves room for the 256 byte tokens and the special tokens (smaller
// sizes are raised to that minimum).
model::VocabData MakeSyntheticVocab(int64_t vocab_size, VocabFlavour flavour, uint64_t seed);

}  // namespace lineage::text
