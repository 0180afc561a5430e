#include "sim/machine.h"

#include <algorithm>
#include <cmath>

#include "core/prefill_steps.h"

namespace lineage::sim {
namespace {

int64_t CeilMs(double seconds) { return static_cast<int64_t>(std::ceil(seconds * 1000.0)); }

}  // namespace

Machine::Machine(const ModelShape& shape, const MachineOptions& options) : shape_(shape), options_(options) {
  options_.parallel = std::max(1, options_.parallel);
  options_.chunk_tokens = std::max<int64_t>(1, options_.chunk_tokens);
}

void Machine::Start(int64_t index, const Work& work) {
  Running r;
  r.work = work;
  running_[index] = r;
  Promote();
}

int64_t Machine::ComputedTokens(int64_t index) const {
  auto it = running_.find(index);
  if (it == running_.end()) return -1;
  const Running& r = it->second;
  switch (r.phase) {
    case Phase::kWaiting: return 0;
    case Phase::kIo: return r.work.restore_tokens;
    case Phase::kPrefill: return r.work.restore_tokens + r.done;
    case Phase::kDecode: return r.work.prompt_tokens + r.done;
  }
  return 0;
}

void Machine::Promote() {
  // A source started before its waiter, so one pass in start order settles
  // chains (a waiter of a waiter).
  for (auto& [index, r] : running_) {
    if (r.phase == Phase::kWaiting) {
      if (r.work.wait_for >= 0) {
        const int64_t have = ComputedTokens(r.work.wait_for);
        if (have >= 0 && have < r.work.wait_tokens) continue;  // -1: the source has finished
      }
      r.phase = Phase::kIo;
      r.ready_ms = now_ms_ + r.work.io_ms;
    }
    if (r.phase == Phase::kIo && r.ready_ms <= now_ms_) {
      r.phase = Phase::kPrefill;
      r.done = 0;
    }
  }
}

int64_t Machine::FrontierTokens(int64_t index) const {
  const int64_t done = ComputedTokens(index);
  return done >= 0 && turn_.prefill_index == index ? done + turn_.chunk : done;
}

void Machine::Kick() {
  if (turn_.end_ms != kNever) return;
  Promote();
  Turn t;
  // Round robin: the first prefilling request after the last one served.
  auto pick = running_.end();
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    if (it->second.phase != Phase::kPrefill) continue;
    if (pick == running_.end() || (pick->first <= last_prefill_ && it->first > last_prefill_)) pick = it;
  }
  double seconds = 0;
  if (pick != running_.end()) {
    const Running& r = pick->second;
    t.prefill_index = pick->first;
    const int64_t pos = r.work.restore_tokens + r.done;
    t.chunk = PrefillStepEnd(pos, r.work.prompt_tokens, options_.chunk_tokens) - pos;
    const double c = static_cast<double>(t.chunk);
    seconds += shape_.prefill_step_s + c / shape_.prefill_tokens_per_s +
               shape_.prefill_pair_s * c * (static_cast<double>(pos) + (c - 1) / 2);
    last_prefill_ = pick->first;
  }
  double context = 0;
  for (const auto& [index, r] : running_)
    if (r.phase == Phase::kDecode) {
      t.decoding.push_back(index);
      context += static_cast<double>(r.work.prompt_tokens + r.done);
    }
  if (!t.decoding.empty())
    seconds += shape_.decode_s_per_token + shape_.decode_row_s * static_cast<double>(t.decoding.size() - 1) +
               shape_.decode_pair_s * context;
  if (t.prefill_index < 0 && t.decoding.empty()) return;
  t.end_ms = now_ms_ + std::max<int64_t>(1, CeilMs(seconds));
  turn_ = std::move(t);
}

int64_t Machine::NextEventMs() const {
  int64_t next = turn_.end_ms;
  for (const auto& [index, r] : running_)
    if (r.phase == Phase::kIo) next = std::min(next, std::max(now_ms_, r.ready_ms));
  return next;
}

Machine::Ended Machine::Advance() {
  Ended ended;
  const int64_t t = NextEventMs();
  if (t == kNever) return ended;
  now_ms_ = t;
  if (turn_.end_ms == t) {
    const Turn turn = std::move(turn_);
    turn_ = {};
    if (turn.prefill_index >= 0) {
      Running& r = running_.at(turn.prefill_index);
      r.done += turn.chunk;
      if (r.work.restore_tokens + r.done >= r.work.prompt_tokens) {
        ended.prompts.push_back(turn.prefill_index);
        r.phase = Phase::kDecode;
        r.done = 0;
        if (r.work.output_tokens == 0) ended.replies.push_back(turn.prefill_index);
      }
    }
    for (int64_t index : turn.decoding) {
      Running& r = running_.at(index);
      if (++r.done >= r.work.output_tokens) ended.replies.push_back(index);
    }
    std::sort(ended.replies.begin(), ended.replies.end());
    for (int64_t index : ended.replies) running_.erase(index);
  }
  Promote();
  return ended;
}

}  // namespace lineage::sim
