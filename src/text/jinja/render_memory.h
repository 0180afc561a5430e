// RenderMemory: the byte budget of one template render.
//
// A template comes with every downloaded model, so a render must not be able
// to exhaust the machine: every value alive during a render is charged to the
// budget of the render running on its thread, as it is made, and released
// when it is destroyed. A Value charges sizeof(Value) plus the bytes of its
// string (copies charge again: a Value owns its string); a Dict charges its
// keys; the interpreter charges its output as it grows. Strings being built
// (join, tojson, format, repetition, padding) check the room left before they
// allocate (CheckRoom). A template that doubles a list or repeats a string
// thus fails with a kLimit RenderError at the budget, not at the kernel's
// out-of-memory killer.
//
// Invariants: live_bytes() <= max_bytes() after every call that did not
// throw; a charge that would pass the budget throws and charges nothing.
//
// Scope and threads: the budget is installed on the calling thread for the
// duration of a render (RenderMemory::Use); it is not thread-safe, as one
// render runs on one thread. Values made outside any render (the context
// converted from JSON, the constants of a parsed template) charge nothing.
// A value charged in a render and destroyed after it releases nothing; one
// destroyed during a later render on the same thread releases into that
// render's budget, which saturates at zero (such values come only from a
// context dict a template mutated).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lineage::jinja {

// The room CheckRoom allows when no render budget is installed.
constexpr size_t kUnbudgetedMaxBytes = 64u << 20;
// Budgets are capped so that any single charge fits in 32 bits.
constexpr size_t kMaxBudgetBytes = 2u << 30;

class RenderMemory;
[[noreturn]] void FailOutOfRoom();

class RenderMemory {
 public:
  explicit RenderMemory(size_t max_bytes) : max_bytes_(max_bytes < kMaxBudgetBytes ? max_bytes : kMaxBudgetBytes) {}
  RenderMemory(const RenderMemory&) = delete;
  RenderMemory& operator=(const RenderMemory&) = delete;

  size_t live_bytes() const { return live_bytes_; }
  size_t max_bytes() const { return max_bytes_; }

  // Installs a budget on the calling thread until destroyed, then restores
  // the one that was installed before (renders do not nest today, but a
  // guard that restores costs nothing).
  class Use {
   public:
    explicit Use(RenderMemory* memory);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    RenderMemory* previous_;
  };

 private:
  friend bool ChargeRenderBytes(size_t bytes);
  friend void ReleaseRenderBytes(size_t bytes);
  friend void CheckRoom(size_t bytes);
  friend size_t RoomLeft();
  friend void FailOutOfRoom();

  size_t max_bytes_;
  size_t live_bytes_ = 0;
};

// Charges bytes to the calling thread's render budget. Returns false (and
// charges nothing) when no budget is installed; throws a kLimit RenderError
// when the budget cannot hold them.
bool ChargeRenderBytes(size_t bytes);
// Returns bytes charged earlier; a no-op without a budget.
void ReleaseRenderBytes(size_t bytes);
// Throws a kLimit RenderError unless `bytes` more (not charged) would fit:
// the check a builder makes before it grows a string to `bytes`.
void CheckRoom(size_t bytes);
// The bytes left in the budget (kUnbudgetedMaxBytes without one).
size_t RoomLeft();
// count * unit_bytes, after checking that many bytes fit (CheckRoom); for
// padding and repetition counts that come from a template.
size_t CheckRoomFor(uint64_t count, size_t unit_bytes);
// The error CheckRoom throws, for builders that found out by themselves.
[[noreturn]] void FailOutOfRoom();

}  // namespace lineage::jinja
