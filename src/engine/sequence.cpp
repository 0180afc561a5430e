#include "engine/sequence.h"

#include <atomic>
#include <string>

namespace lineage::engine {
namespace {


Result<const cache::PagedKv*> AsPaged(const cache::KvLayout& layout, const cache::KvView& kv) {
  const auto* paged = dynamic_cast<const cache::PagedKv*>(&kv);
  if (paged == nullptr) return InvalidArgument("KV view does not hold engine pages");
  if (paged->layout() != layout) return InvalidArgument("KV pages belong to another model shape");
  return paged;
}

// The blob as engine state, or null for a model without recurrent layers.
Result<const RecurrentState*> AsRecurrent(const RecurrentLayout& layout, const cache::RecurrentBlob* blob) {
  if (layout.num_layers == 0) return static_cast<const RecurrentState*>(nullptr);
  const auto* rec = dynamic_cast<const RecurrentState*>(blob);
  if (rec == nullptr) return InvalidArgument("restore point has no recurrent state of the engine's kind");
  if (!rec->SameLayout(layout)) return InvalidArgument("recurrent state belongs to another model shape");
  return rec;
}

}  // namespace

Result<Sequence> Sequence::FromSnapshot(const cache::KvLayout& kv_layout, const RecurrentLayout& rec_layout,
                                        const cache::KvView& kv, const cache::RecurrentBlob* recurrent) {
  return FromCheckpoint(kv_layout, rec_layout, recurrent, kv.num_tokens(), kv);
}

Result<Sequence> Sequence::FromCheckpoint(const cache::KvLayout& kv_layout, const RecurrentLayout& rec_layout,
                                          const cache::RecurrentBlob* recurrent, int64_t n,
                                          const cache::KvView& longer) {
  LINEAGE_ASSIGN_OR_RETURN(const cache::PagedKv* paged, AsPaged(kv_layout, longer));
  if (n < 0 || n > paged->num_tokens()) {
    return OutOfRange("checkpoint length " + std::to_string(n) + " exceeds the KV it borrows (" +
                      std::to_string(paged->num_tokens()) + " tokens)");
  }
  LINEAGE_ASSIGN_OR_RETURN(const RecurrentState* rec, AsRecurrent(rec_layout, recurrent));
  // One copy of the recurrent state (no zero fill first): admission is this
  // copy plus page pointers.
  return Sequence(cache::PageTable(*paged, n), rec != nullptr ? std::make_shared<RecurrentState>(*rec)
                                                               : std::make_shared<RecurrentState>(rec_layout));
}

void Sequence::OwnRecurrent() {
  if (rec_.use_count() == 1) {
    // The last sharer is gone; its reads of the buffer happen before our writes.
    std::atomic_thread_fence(std::memory_order_acquire);
    return;
  }
  rec_ = std::make_shared<RecurrentState>(*rec_);
}

void Sequence::Rewind(int64_t n, std::shared_ptr<RecurrentState>* state) {
  kv_.Truncate(n);
  if (rec_->layout().num_layers > 0 && state != nullptr) rec_.swap(*state);
}

void Sequence::KeepHidden(int64_t first_pos, const float* rows, int64_t num_rows, int64_t hidden) {
  hidden_.assign(rows, rows + num_rows * hidden);
  hidden_first_ = first_pos;
  hidden_rows_ = num_rows;
}

const float* Sequence::Hidden(int64_t pos) const {
  if (pos < hidden_first_ || pos >= hidden_first_ + hidden_rows_ || pos >= num_tokens()) return nullptr;
  return hidden_.data() + (pos - hidden_first_) * (static_cast<int64_t>(hidden_.size()) / hidden_rows_);
}

Snapshot Sequence::Snap() const {
  Snapshot s;
  s.kv = kv_.Share();
  if (rec_->layout().num_layers > 0) s.recurrent = CopyRecurrent();
  return s;
}

std::shared_ptr<const RecurrentState> Sequence::CopyRecurrent() const { return rec_; }

}  // namespace lineage::engine
