#include "text/word_cache.h"

#include <xxhash.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace lineage::text {
namespace {

struct alignas(64) Entry {
  uint32_t owner = 0;  // 0: empty
  uint8_t len = 0;
  uint8_t n = 0;
  char word[WordCache::kMaxWordBytes];
  TokenId ids[WordCache::kMaxIds];
};
static_assert(sizeof(Entry) == 64, "one cache line per entry");

constexpr size_t kEntries = 16384;  // power of two

// Tables not held by an encode in progress; as many exist as encodes ever
// ran at once.
std::mutex g_free_mu;
std::vector<std::unique_ptr<Entry[]>>& FreeTables() {
  static std::vector<std::unique_ptr<Entry[]>> free;
  return free;
}

std::atomic<size_t> g_tables{0};
thread_local Entry* t_table = nullptr;

Entry& Slot(uint32_t owner, std::string_view word) {
  uint64_t h = XXH3_64bits_withSeed(word.data(), word.size(), owner);
  return t_table[h & (kEntries - 1)];
}

}  // namespace

uint32_t WordCache::NewOwner() {
  static std::atomic<uint32_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

WordCache::Scope::Scope() {
  if (t_table) return;  // an outer scope holds one
  std::unique_ptr<Entry[]> table;
  {
    std::lock_guard<std::mutex> lock(g_free_mu);
    if (!FreeTables().empty()) {
      table = std::move(FreeTables().back());
      FreeTables().pop_back();
    }
  }
  if (!table) {
    table.reset(new Entry[kEntries]);
    g_tables.fetch_add(1, std::memory_order_relaxed);
  }
  t_table = table.release();
  holds_ = true;
}

WordCache::Scope::~Scope() {
  if (!holds_) return;
  std::unique_ptr<Entry[]> table(t_table);
  t_table = nullptr;
  std::lock_guard<std::mutex> lock(g_free_mu);
  FreeTables().push_back(std::move(table));
}

size_t WordCache::TableCount() { return g_tables.load(std::memory_order_relaxed); }

bool WordCache::Lookup(uint32_t owner, std::string_view word, std::vector<TokenId>* out) {
  if (!t_table || word.size() > kMaxWordBytes) return false;
  const Entry& e = Slot(owner, word);
  if (e.owner != owner || e.len != word.size() || std::memcmp(e.word, word.data(), word.size()) != 0) return false;
  out->insert(out->end(), e.ids, e.ids + e.n);
  return true;
}

void WordCache::Insert(uint32_t owner, std::string_view word, const TokenId* ids, size_t n) {
  if (!t_table || word.size() > kMaxWordBytes || n > kMaxIds) return;
  Entry& e = Slot(owner, word);
  e.owner = owner;
  e.len = static_cast<uint8_t>(word.size());
  e.n = static_cast<uint8_t>(n);
  std::memcpy(e.word, word.data(), word.size());
  std::memcpy(e.ids, ids, n * sizeof(TokenId));
}

}  // namespace lineage::text
