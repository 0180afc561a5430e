#include "tools/synthetic_corpus.h"

#include <array>
#include <string_view>
#include <vector>

#include "tools/split_mix64.h"

namespace lineage::text {
namespace {

struct Rng : SplitMix64 {
  template <typename T, size_t N>
  const T& Pick(const std::array<T, N>& a) { return a[Below(N)]; }
};

constexpr std::array<std::string_view, 24> kProse = {
    "The cache keeps one entry for every conversation, and each entry remembers where the next turn is likely to start.",
    "When a request arrives, the server renders the chat template, turns the text into tokens and looks for the longest prefix it already knows.",
    "Recurrent layers carry a fixed-size state from one token to the next, so their memory does not grow with the length of the context.",
    "Attention layers, by contrast, store keys and values for every position they have seen.",
    "A checkpoint is cheap: it holds only the small recurrent state and borrows everything else from the entry it belongs to.",
    "If the user edits an earlier message, the shared prefix ends at the edit and the rest has to be computed again.",
    "Most of the time the model is waiting for memory rather than doing arithmetic, which is why the layout of the weights matters so much.",
    "We measured the time to first token on a long transcript, first cold and then warm, and wrote both numbers into the log.",
    "Please summarize the following document in three short paragraphs and list any open questions at the end.",
    "I can't reproduce the failure on my machine; could you send the exact command and the output you're seeing?",
    "She opened the window, looked at the rain for a while, and decided that the walk could wait until tomorrow.",
    "The library was quiet except for the sound of pages turning and the occasional cough from the reading room.",
    "Numbers such as 3.14159, 2,048 and 1e-5 appear in technical writing more often than in ordinary conversation.",
    "On Monday, October 14th, the team released version 2.3.1 with fixes for 17 reported issues.",
    "They're sure it'll work, but we've seen this before and I'd rather test it twice.",
    "Before you begin, make sure the disk has at least 20 GB of free space and that the network is reachable.",
    "A good benchmark states the machine, the build and the commit, and prints its results in a form others can compare.",
    "The river runs through the old town, past the market square and under three stone bridges.",
    "Each function should do one thing, have a clear name, and report its errors instead of hiding them.",
    "What would happen if two requests tried to extend the same conversation at exactly the same moment?",
    "In the morning the village smelled of bread; in the evening, of wood smoke and wet leaves.",
    "The assistant replied with a short plan, called two tools, and then wrote the final answer in plain English.",
    "Temperature, humidity and wind speed were recorded every ten minutes for the whole summer.",
    "Thank you for the detailed report! I've added a test that reproduces the problem and a fix for it.",
};

constexpr std::array<std::string_view, 12> kCjk = {
    "今天天气很好，我们一起去公园散步吧。",
    "这个模型使用缓存来加快长对话的推理速度。",
    "请把下面的文件翻译成英文，并保留原来的格式。",
    "服务器收到请求以后，先把消息转换成文本，再进行分词。",
    "我想在苹果公司工作，因为那里的工程师都很优秀。",
    "人工智能正在改变软件开发的方式。",
    "東京は日本の首都で、多くの人が住んでいます。",
    "この関数は入力された文字列をトークンに分割します。",
    "明日の会議は午後三時から始まります。",
    "注意：配置文件中的路径必须是绝对路径。",
    "数据库连接失败，请检查网络设置后重试。",
    "ありがとうございます。とても助かりました。",
};

constexpr std::array<std::string_view, 40> kNouns = {
    "request", "response", "token", "model", "cache", "entry", "server", "client", "message", "layer",
    "state", "buffer", "thread", "queue", "file", "index", "value", "window", "prompt", "result",
    "user", "system", "engine", "sequence", "batch", "kernel", "matrix", "vector", "string", "number",
    "record", "table", "page", "budget", "error", "config", "option", "stream", "tool", "answer"};
constexpr std::array<std::string_view, 24> kVerbs = {
    "reads", "writes", "stores", "computes", "returns", "checks", "loads", "sends", "receives", "updates",
    "removes", "creates", "parses", "encodes", "decodes", "measures", "restores", "commits", "evicts", "allocates",
    "compares", "prints", "handles", "accepts"};
constexpr std::array<std::string_view, 20> kAdjectives = {
    "small", "large", "fast", "slow", "new", "old", "shared", "private", "empty", "full",
    "valid", "invalid", "current", "previous", "next", "final", "simple", "long", "short", "stable"};
constexpr std::array<std::string_view, 12> kTypes = {
    "int", "int64_t", "size_t", "float", "double", "bool", "std::string", "std::vector<int>",
    "uint32_t", "char", "Status", "Result<int>"};

// Common English words, for free-running text with a realistic spread.
constexpr std::string_view kWords[] = {"time", "year", "people", "way", "day", "man", "thing", "woman", "life", "child", "world", "school", "state", "family", "student", "group", "country", "problem", "hand", "part", "place", "case", "week", "company", "system", "program", "question", "work", "government", "number", "night", "point", "home", "water", "room", "mother", "area", "money", "story", "fact", "month", "lot", "right", "study", "book", "eye", "job", "word", "business", "issue", "side", "kind", "head", "house", "service", "friend", "father", "power", "hour", "game", "line", "end", "member", "law", "car", "city", "community", "name", "president", "team", "minute", "idea", "kid", "body", "information", "back", "parent", "face", "others", "level", "office", "door", "health", "person", "art", "war", "history", "party", "result", "change", "morning", "reason", "research", "girl", "guy", "moment", "air", "teacher", "force", "education", "foot", "boy", "age", "policy", "process", "music", "market", "sense", "nation", "plan", "college", "interest", "death", "experience", "effect", "class", "control", "care", "field", "development", "role", "effort", "rate", "heart", "drug", "show", "leader", "light", "voice", "wife", "police", "mind", "price", "report", "decision", "son", "view", "relationship", "town", "road", "arm", "difference", "value", "building", "action", "model", "season", "society", "tax", "director", "position", "player", "record", "paper", "space", "ground", "form", "event", "official", "matter", "center", "couple", "site", "project", "activity", "star", "table", "need", "court", "oil", "situation", "cost", "industry", "figure", "street", "image", "phone", "data", "picture", "practice", "piece", "land", "product", "doctor", "wall", "patient", "worker", "news", "test", "movie", "north", "love", "support", "technology", "step", "baby", "computer", "type", "attention", "film", "tree", "source", "organization", "hair", "window", "evidence", "population", "truth", "song", "network", "memory", "language", "theory", "method", "security", "structure", "function", "variable", "library", "compiler", "pointer", "reference", "template", "object", "instance", "property", "element", "argument", "parameter", "exception", "iterator", "container", "allocator", "interface", "protocol", "address", "socket", "packet", "header", "payload", "request", "response", "session", "context", "document", "sentence", "paragraph", "summary", "question", "answer", "example", "reason", "problem", "solution", "be", "have", "do", "say", "go", "get", "make", "know", "think", "take", "see", "come", "want", "look", "use", "find", "give", "tell", "work", "call", "try", "ask", "need", "feel", "become", "leave", "put", "mean", "keep", "let", "begin", "seem", "help", "talk", "turn", "start", "show", "hear", "play", "run", "move", "like", "live", "believe", "hold", "bring", "happen", "write", "provide", "sit", "stand", "lose", "pay", "meet", "include", "continue", "set", "learn", "change", "lead", "understand", "watch", "follow", "stop", "create", "speak", "read", "allow", "add", "spend", "grow", "open", "walk", "win", "offer", "remember", "love", "consider", "appear", "buy", "wait", "serve", "die", "send", "expect", "build", "stay", "fall", "cut", "reach", "kill", "remain", "suggest", "raise", "pass", "sell", "require", "report", "decide", "pull", "explain", "develop", "carry", "break", "receive", "agree", "support", "hit", "produce", "eat", "cover", "catch", "draw", "choose", "good", "new", "first", "last", "long", "great", "little", "own", "other", "old", "right", "big", "high", "different", "small", "large", "next", "early", "young", "important", "few", "public", "bad", "same", "able", "late", "hard", "major", "better", "economic", "strong", "possible", "whole", "free", "military", "true", "federal", "international", "full", "special", "easy", "clear", "recent", "certain", "personal", "open", "red", "difficult", "available", "likely", "short", "single", "medical", "current", "wrong", "private", "past", "foreign", "fine", "common", "poor", "natural", "significant", "similar", "hot", "dead", "central", "happy", "serious", "ready", "simple", "left", "physical", "general", "environmental", "financial", "blue", "democratic", "dark", "various", "entire", "close", "legal", "religious", "cold", "final", "main", "green", "nice", "huge", "popular", "traditional", "cultural", "about", "after", "again", "against", "also", "always", "because", "before", "between", "both", "during", "each", "even", "every", "from", "into", "just", "more", "most", "never", "often", "only", "over", "since", "still", "such", "than", "then", "there", "these", "through", "under", "until", "very", "well", "what", "when", "where", "which", "while", "with", "without", "would", "could", "should", "might", "must", "shall"};

void FreeText(Rng& r, std::string* out) {
  size_t n = 6 + r.Below(14);
  bool cap = true;
  for (size_t i = 0; i < n; ++i) {
    std::string w(kWords[r.Below(std::size(kWords))]);
    if (cap) w[0] = static_cast<char>(w[0] - 'a' + 'A');
    cap = false;
    *out += w;
    size_t p = r.Below(12);
    if (i + 1 == n) {
      *out += p < 9 ? ". " : p < 11 ? "? " : "! ";
    } else if (p == 0) {
      *out += ", ";
    } else if (p == 1 && i + 2 < n) {
      *out += "'s ";
    } else {
      *out += ' ';
    }
  }
}

std::string Ident(Rng& r) {
  std::string s(r.Pick(kAdjectives));
  s += '_';
  s += r.Pick(kNouns);
  if (r.Below(3) == 0) s += "_" + std::string(r.Pick(kNouns));
  return s;
}

std::string Camel(Rng& r) {
  std::string s;
  for (std::string_view w : {r.Pick(kAdjectives), r.Pick(kNouns)}) {
    s += static_cast<char>(w[0] - 'a' + 'A');
    s += w.substr(1);
  }
  return s;
}

void Sentence(Rng& r, std::string* out) {
  std::string s = "The ";
  s += r.Pick(kAdjectives);
  s += ' ';
  s += r.Pick(kNouns);
  s += ' ';
  s += r.Pick(kVerbs);
  s += " the ";
  s += r.Pick(kNouns);
  if (r.Below(2)) {
    s += " and ";
    s += r.Pick(kVerbs);
    s += " a ";
    s += r.Pick(kAdjectives);
    s += ' ';
    s += r.Pick(kNouns);
  }
  s += r.Below(5) == 0 ? "?" : ".";
  *out += s;
}

void Cpp(Rng& r, std::string* out) {
  std::string t(r.Pick(kTypes));
  std::string f = Camel(r), a = Ident(r), b = Ident(r);
  *out += "// " + std::string(r.Pick(kVerbs)) + " the " + std::string(r.Pick(kNouns)) + ".\n";
  *out += t + " " + f + "(const " + std::string(r.Pick(kTypes)) + "& " + a + ", int " + b + ") {\n";
  *out += "  if (" + b + " < 0) {\n    return " + (t == "Status" ? "InvalidArgument(\"bad " + b + "\")" : "{}") + ";\n  }\n";
  *out += "  for (int i = 0; i < " + b + "; ++i) {\n    " + a + ".push_back(i * " + std::to_string(r.Below(100)) +
          ");\n  }\n";
  *out += "  return " + a + ";\n}\n\n";
}

void Python(Rng& r, std::string* out) {
  std::string f = Ident(r), a = Ident(r);
  *out += "def " + f + "(" + a + ", limit=" + std::to_string(r.Below(1000)) + "):\n";
  *out += "    \"\"\"" + std::string(r.Pick(kVerbs)) + " the " + std::string(r.Pick(kNouns)) + ".\"\"\"\n";
  *out += "    result = []\n    for item in " + a + ":\n        if item is None:\n            continue\n";
  *out += "        result.append(item." + std::string(r.Pick(kNouns)) + ")\n";
  *out += "    return result[:limit]\n\n";
}

void Json(Rng& r, std::string* out) {
  *out += "{\"" + std::string(r.Pick(kNouns)) + "\": {\"id\": " + std::to_string(r.Below(100000)) +
          ", \"name\": \"" + Ident(r) + "\", \"enabled\": " + (r.Below(2) ? "true" : "false") +
          ", \"tags\": [\"" + std::string(r.Pick(kAdjectives)) + "\", \"" + std::string(r.Pick(kNouns)) +
          "\"], \"score\": " + std::to_string(r.Below(100)) + "." + std::to_string(r.Below(100)) + "}}\n";
}

}  // namespace

std::string SyntheticCorpus(uint64_t seed, size_t approx_bytes) {
  Rng r{{seed ^ 0x6C696E65616765ULL}};
  std::string out;
  out.reserve(approx_bytes + 4096);
  while (out.size() < approx_bytes) {
    switch (r.Below(10)) {
      case 0:
      case 1:
        out += r.Pick(kProse);
        out += r.Below(3) == 0 ? "\n\n" : " ";
        break;
      case 2:
        Sentence(r, &out);
        out += ' ';
        break;
      case 3:
        Cpp(r, &out);
        break;
      case 4:
        Python(r, &out);
        break;
      case 5:
        Json(r, &out);
        break;
      case 8:
      case 9:
        FreeText(r, &out);
        if (r.Below(6) == 0) out += "\n";
        break;
      case 6:
        out += r.Pick(kCjk);
        out += r.Below(2) ? "\n" : "";
        break;
      default:
        out += "<|im_start|>user\n";
        Sentence(r, &out);
        out += "<|im_end|>\n<|im_start|>assistant\n";
        out += r.Pick(kProse);
        out += "<|im_end|>\n";
        break;
    }
  }
  return out;
}

}  // namespace lineage::text
