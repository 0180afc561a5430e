#include "text/jinja/render_memory.h"

#include <string>

#include "text/jinja/error.h"

namespace lineage::jinja {
namespace {

thread_local RenderMemory* t_memory = nullptr;

[[noreturn]] void FailBudget(size_t max_bytes) {
  Fail(ErrorKind::kLimit, "values too large: the render's memory budget is " + std::to_string(max_bytes) + " bytes");
}

}  // namespace

RenderMemory::Use::Use(RenderMemory* memory) : previous_(t_memory) { t_memory = memory; }
RenderMemory::Use::~Use() { t_memory = previous_; }

bool ChargeRenderBytes(size_t bytes) {
  RenderMemory* m = t_memory;
  if (!m) return false;
  if (bytes > m->max_bytes_ - m->live_bytes_) FailBudget(m->max_bytes_);
  m->live_bytes_ += bytes;
  return true;
}

void ReleaseRenderBytes(size_t bytes) {
  RenderMemory* m = t_memory;
  if (!m) return;
  m->live_bytes_ = bytes < m->live_bytes_ ? m->live_bytes_ - bytes : 0;
}

void CheckRoom(size_t bytes) {
  if (bytes > RoomLeft()) FailOutOfRoom();
}

size_t CheckRoomFor(uint64_t count, size_t unit_bytes) {
  if (unit_bytes != 0 && count > RoomLeft() / unit_bytes) FailOutOfRoom();
  return static_cast<size_t>(count) * unit_bytes;
}

void FailOutOfRoom() { FailBudget(t_memory ? t_memory->max_bytes_ : kUnbudgetedMaxBytes); }

size_t RoomLeft() {
  RenderMemory* m = t_memory;
  return m ? m->max_bytes_ - m->live_bytes_ : kUnbudgetedMaxBytes;
}

}  // namespace lineage::jinja
