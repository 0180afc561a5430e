#include "tools/synthetic_vocab.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tools/bpe_trainer.h"
#include "text/byte_level.h"
#include "text/pretokenizer.h"
#include "tools/split_mix64.h"
#include "tools/synthetic_corpus.h"
#include "text/tiktoken.h"

namespace lineage::text {
namespace {

struct SpecialToken {
  const char* text;
  bool control;  // false: an added token that is not special (matched even in user text)
};

// Qwen's added tokens in id order. Qwen3.5 appends seven audio tokens.
constexpr SpecialToken kQwenSpecials[] = {
    {"<|endoftext|>", true},     {"<|im_start|>", true},      {"<|im_end|>", true},
    {"<|object_ref_start|>", true}, {"<|object_ref_end|>", true}, {"<|box_start|>", true},
    {"<|box_end|>", true},       {"<|quad_start|>", true},    {"<|quad_end|>", true},
    {"<|vision_start|>", true},  {"<|vision_end|>", true},    {"<|vision_pad|>", true},
    {"<|image_pad|>", true},     {"<|video_pad|>", true},     {"<tool_call>", false},
    {"</tool_call>", false},     {"<|fim_prefix|>", false},   {"<|fim_middle|>", false},
    {"<|fim_suffix|>", false},   {"<|fim_pad|>", false},      {"<|repo_name|>", false},
    {"<|file_sep|>", false},     {"<tool_response>", false},  {"</tool_response>", false},
    {"<think>", false},          {"</think>", false},
};
constexpr SpecialToken kQwen35Audio[] = {
    {"<|audio_start|>", true}, {"<|audio_end|>", true},  {"<tts_pad>", true},           {"<tts_text_bos>", true},
    {"<tts_text_eod>", true},  {"<tts_text_bos_single>", true}, {"<|audio_pad|>", true},
};

// Kimi's 256 special ids after the tiktoken ranks, as its
// tokenizer_config.json names them (offset from the first special id); the
// other slots are <|reserved_token_ID|>. The tool-call markers are added
// tokens that are not special (matched in any text), as in the original.
struct KimiSpecial {
  int64_t offset;
  SpecialToken token;
};
constexpr KimiSpecial kKimiSpecials[] = {
    {0, {"[BOS]", true}},
    {1, {"[EOS]", true}},
    {2, {"<|im_end|>", true}},
    {3, {"<|im_user|>", true}},
    {4, {"<|im_assistant|>", true}},
    {6, {"<|start_header_id|>", true}},
    {7, {"<|end_header_id|>", true}},
    {9, {"[EOT]", true}},
    {10, {"<|im_system|>", true}},
    {11, {"<|tool_calls_section_begin|>", false}},
    {12, {"<|tool_calls_section_end|>", false}},
    {13, {"<|tool_call_begin|>", false}},
    {14, {"<|tool_call_argument_begin|>", false}},
    {15, {"<|tool_call_end|>", false}},
    {17, {"<|im_middle|>", true}},
    {254, {"[UNK]", true}},
    {255, {"[PAD]", true}},
};
constexpr int64_t kKimiSpecialSlots = 256;

constexpr int64_t kQwen35VocabSize = 248320, kQwen35FirstSpecial = 248044;
constexpr int64_t kQwen3VocabSize = 151936, kQwen3FirstSpecial = 151643;

bool IsLetters(const std::string& bytes, size_t from) {
  if (from >= bytes.size()) return false;
  for (size_t i = from; i < bytes.size(); ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  }
  return true;
}

std::string PadText(int64_t id) { return "[PAD" + std::to_string(id) + "]"; }

// Word counts of the corpus after the flavour's pre-tokenizer.
std::vector<std::pair<std::string, int64_t>> CountWords(const std::string& corpus, const char* pre) {
  auto pretok = Pretokenizer::Create(PresetForName(pre).patterns);
  std::vector<Span> pieces;
  if (pretok.ok()) pretok->Split(corpus, Span{0, static_cast<uint32_t>(corpus.size())}, &pieces);
  std::unordered_map<std::string_view, int64_t> counts;
  for (Span p : pieces) ++counts[std::string_view(corpus).substr(p.begin, p.end - p.begin)];
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(counts.size());
  for (const auto& [w, c] : counts) out.emplace_back(std::string(w), c);
  std::sort(out.begin(), out.end());  // hash order must not leak into the result
  return out;
}

// Extends `bpe` with merges of two existing tokens until it has
// `num_tokens` tokens. Joins are word-like: a token that starts a word
// (" the", "str") followed by a letters-only continuation ("ory", "ing").
// `reserved` holds texts (special tokens, padding) no join may produce.
void FillWithJoins(TrainedBpe* bpe, size_t num_tokens, uint64_t seed, const std::vector<std::string>& reserved) {
  std::unordered_set<std::string> seen(bpe->token_bytes.begin(), bpe->token_bytes.end());
  seen.insert(reserved.begin(), reserved.end());
  std::vector<int32_t> heads, tails;
  for (size_t i = 0; i < bpe->token_bytes.size(); ++i) {
    const std::string& t = bpe->token_bytes[i];
    if (IsLetters(t, 0) || (t.size() > 1 && t[0] == ' ' && IsLetters(t, 1))) heads.push_back(int32_t(i));
    if (IsLetters(t, 0)) tails.push_back(int32_t(i));
  }
  SplitMix64 rng{seed ^ 0x5EEDF111ULL};
  constexpr size_t kMaxTokenBytes = 24;
  size_t attempts = 0;
  while (bpe->token_bytes.size() < num_tokens) {
    int32_t a, b;
    if (++attempts > 64 * num_tokens) {  // pools exhausted: join any two tokens
      a = int32_t(rng.Next() % bpe->token_bytes.size());
      b = int32_t(rng.Next() % bpe->token_bytes.size());
    } else {
      a = heads[rng.Next() % heads.size()];
      b = tails[rng.Next() % tails.size()];
    }
    std::string joined = bpe->token_bytes[a] + bpe->token_bytes[b];
    if (joined.size() > kMaxTokenBytes && attempts <= 64 * num_tokens) continue;
    if (!seen.insert(joined).second) continue;
    int32_t id = int32_t(bpe->token_bytes.size());
    bpe->merges.emplace_back(a, b);
    bpe->token_bytes.push_back(std::move(joined));
    const std::string& t = bpe->token_bytes.back();
    if (t.size() < 12) {  // keep joins short enough to stay plausible
      heads.push_back(id);
      if (IsLetters(t, 0)) tails.push_back(id);
    }
  }
}

}  // namespace

// Kimi: tiktoken ranks first (the normal tokens; merges derived from the
// ranks as for a real tiktoken.model), then the 256 special slots.
static model::VocabData MakeKimiVocab(int64_t vocab_size, uint64_t seed) {
  vocab_size = std::max<int64_t>(vocab_size, 256 + 2 * kKimiSpecialSlots);
  const int64_t first_special = vocab_size - kKimiSpecialSlots;
  std::vector<std::string> slots(kKimiSpecialSlots);
  std::vector<bool> control(kKimiSpecialSlots, true);
  for (int64_t i = 0; i < kKimiSpecialSlots; ++i) slots[i] = "<|reserved_token_" + std::to_string(first_special + i) + "|>";
  for (const KimiSpecial& k : kKimiSpecials) {
    slots[k.offset] = k.token.text;
    control[k.offset] = k.token.control;
  }
  TrainedBpe bpe = TrainBpe(CountWords(SyntheticCorpus(seed), "kimi-k2"), static_cast<size_t>(first_special - 256));
  FillWithJoins(&bpe, static_cast<size_t>(first_special), seed, slots);

  model::VocabData v;
  v.model = "gpt2";
  v.pre = "kimi-k2";
  v.tokens.reserve(vocab_size);
  for (const std::string& b : bpe.token_bytes) v.tokens.push_back(ByteLevelEncode(b));
  v.token_types.assign(v.tokens.size(), model::TokenType::kNormal);
  v.merges = TiktokenMerges(bpe.token_bytes);
  v.tiktoken_model = MakeTiktokenModel(bpe.token_bytes);
  for (int64_t i = 0; i < kKimiSpecialSlots; ++i) {
    v.tokens.push_back(slots[i]);
    v.token_types.push_back(control[i] ? model::TokenType::kControl : model::TokenType::kUserDefined);
  }
  v.bos_id = first_special;      // [BOS]
  v.eos_id = first_special + 2;  // <|im_end|>: a reply ends its turn
  v.pad_id = first_special + 255;  // [PAD]
  v.add_bos = false;
  return v;
}

VocabFlavour VocabFlavourFor(model::Arch arch) {
  if (arch == model::Arch::kKimiLinear) return VocabFlavour::kKimi;
  if (arch == model::Arch::kQwen3_5 || arch == model::Arch::kQwen3_5Moe) return VocabFlavour::kQwen35;
  return VocabFlavour::kQwen3;
}

model::VocabData MakeSyntheticVocab(int64_t vocab_size, VocabFlavour flavour, uint64_t seed) {
  if (flavour == VocabFlavour::kKimi) return MakeKimiVocab(vocab_size, seed);
  std::vector<SpecialToken> specials(std::begin(kQwenSpecials), std::end(kQwenSpecials));
  if (flavour == VocabFlavour::kQwen35) specials.insert(specials.end(), std::begin(kQwen35Audio), std::end(kQwen35Audio));
  const auto n_special = static_cast<int64_t>(specials.size());
  vocab_size = std::max<int64_t>(vocab_size, 256 + n_special);

  int64_t first_special = vocab_size - n_special;  // packed at the end
  if (flavour == VocabFlavour::kQwen35 && vocab_size == kQwen35VocabSize) first_special = kQwen35FirstSpecial;
  if (flavour == VocabFlavour::kQwen3 && vocab_size == kQwen3VocabSize) first_special = kQwen3FirstSpecial;
  const auto num_normal = static_cast<size_t>(first_special);
  const char* pre = flavour == VocabFlavour::kQwen35 ? "qwen35" : "qwen2";

  std::string corpus = SyntheticCorpus(seed);
  TrainedBpe bpe = TrainBpe(CountWords(corpus, pre), num_normal - 256);
  std::vector<std::string> reserved;
  for (const SpecialToken& s : specials) reserved.emplace_back(s.text);
  for (int64_t i = first_special + n_special; i < vocab_size; ++i) reserved.push_back(PadText(i));
  FillWithJoins(&bpe, num_normal, seed, reserved);

  model::VocabData v;
  v.model = "gpt2";
  v.pre = pre;
  v.tokens.reserve(vocab_size);
  for (const std::string& b : bpe.token_bytes) v.tokens.push_back(ByteLevelEncode(b));
  v.token_types.assign(v.tokens.size(), model::TokenType::kNormal);
  v.merges.reserve(bpe.merges.size());
  for (const auto& [a, b] : bpe.merges) v.merges.push_back(v.tokens[a] + " " + v.tokens[b]);
  for (const SpecialToken& s : specials) {
    v.tokens.emplace_back(s.text);
    v.token_types.push_back(s.control ? model::TokenType::kControl : model::TokenType::kUserDefined);
  }
  for (int64_t i = static_cast<int64_t>(v.tokens.size()); i < vocab_size; ++i) {
    v.tokens.push_back(PadText(i));
    v.token_types.push_back(model::TokenType::kUnused);
  }
  v.pad_id = first_special;       // <|endoftext|>
  v.eos_id = first_special + 2;   // <|im_end|>
  v.bos_id = -1;
  v.add_bos = false;
  return v;
}

}  // namespace lineage::text
