#include "cache/lineage_map.h"

#include <algorithm>
#include <numeric>

namespace lineage::cache {
namespace {

int64_t CommonPrefix(TokenSpan a, TokenSpan b) {
  const size_t n = std::min(a.size(), b.size());
  return std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin();
}

}  // namespace

std::vector<LineageLink> LinkLineages(std::span<const TokenSpan> sequences) {
  const int n = static_cast<int>(sequences.size());
  std::vector<LineageLink> links(n);
  if (n < 2) return links;
  // In lexicographic order the common prefix of two sequences is the least
  // adjacent common prefix between them, so the best earlier sequence on
  // each side is found by walking outwards with a running minimum.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::lexicographical_compare(sequences[a].begin(), sequences[a].end(), sequences[b].begin(),
                                        sequences[b].end());
  });
  std::vector<int64_t> adjacent(n - 1);  // adjacent[p]: common prefix of order[p] and order[p + 1]
  for (int p = 0; p + 1 < n; ++p) adjacent[p] = CommonPrefix(sequences[order[p]], sequences[order[p + 1]]);

  for (int p = 0; p < n; ++p) {
    const int self = order[p];
    LineageLink& link = links[self];
    const int64_t length = static_cast<int64_t>(sequences[self].size());
    auto walk = [&](int step) {
      int64_t run = INT64_MAX;
      for (int q = p + step; q >= 0 && q < n; q += step) {
        run = std::min(run, adjacent[step > 0 ? q - 1 : q]);
        if (run == 0 || run < link.shared_tokens) break;
        if (run >= length) ++link.extended_by;
        const int other = order[q];
        if (other >= self) continue;
        if (run > link.shared_tokens || (run == link.shared_tokens && other < link.parent)) {
          link.parent = other;
          link.shared_tokens = run;
        }
      }
    };
    // Sequences that begin with this one sort after it, an equal one on
    // either side: both walks count them.
    walk(-1);
    walk(+1);
  }
  return links;
}

}  // namespace lineage::cache
