// The restore-point rule of DESIGN.md §3.1 over a PrefixTree, shared by the
// RAM policy and the disk tiers so that the rule exists once:
//  - recurrent layouts: the longest point (entry end or checkpoint) whose
//    tokens equal the prompt's, at most m - 1 long;
//  - attention-only layouts: min(l, m - 1) where l is the longest common
//    prefix with any stored sequence (KV can be truncated anywhere);
//  - ties go to the most recently used entry (larger recency wins).
#pragma once

#include <cstdint>
#include <functional>

#include "cache/prefix_tree.h"

namespace lineage::cache {

struct RestoreSearch {
  TreePoint best;              // best.entry == kNoEntry: nothing restorable
  int64_t shared_tokens = 0;   // l of the closest stored sequence
  // An entry sharing shared_tokens (if asked): the most recently used one
  // for attention-only layouts, where it becomes the restore point; any one
  // for recurrent layouts, where it only names the closest sequence.
  EntryId closest = kNoEntry;
};

// `also_visit`, if set, sees every point on the prompt's path with n <= m
// (one walk serves the caller's other questions, such as "is there an anchor
// ending at a?"). Naming the closest entry visits the subtree below the shared
// length; `want_closest` false skips it where only `best` matters (recurrent
// layouts need no closest entry to restore).
RestoreSearch FindRestorePoint(const PrefixTree& tree, TokenSpan prompt, bool recurrent,
                               const std::function<uint64_t(EntryId)>& recency,
                               const std::function<void(const TreePoint&)>& also_visit = {},
                               bool want_closest = true);

}  // namespace lineage::cache
