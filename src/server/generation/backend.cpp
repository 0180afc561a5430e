#include "server/generation/backend.h"

#include <utility>

namespace lineage::server {

void GenerationStream::Admitted(int64_t cached_tokens) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cached_tokens_ = cached_tokens;
    admitted_news_ = true;
  }
  cv_.notify_all();
}

void GenerationStream::Prefilled(int64_t prefilled_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  prefilled_tokens_ = prefilled_tokens;
}

GenerationStream::Progress GenerationStream::progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {cached_tokens_, prefilled_tokens_, generated_tokens_};
}

void GenerationStream::PushText(std::string text, int64_t num_tokens, std::optional<TokenLogprob> logprob) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    if (logprob) logprobs_.push_back(std::move(*logprob));
    text_.append(text);
    num_tokens_ += num_tokens;
    generated_tokens_ += num_tokens;
    pieces_.push_back({text.size(), num_tokens});
  }
  cv_.notify_all();
}

void GenerationStream::Close(FinishReason finish, RequestReport report, Status error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    final_.done = true;
    final_.finish = finish;
    final_.report = std::move(report);
    final_.error = std::move(error);
  }
  cv_.notify_all();
}

GenerationItem GenerationStream::Pull(std::chrono::milliseconds timeout, bool* got) {
  std::unique_lock<std::mutex> lock(mu_);
  *got = cv_.wait_for(lock, timeout, [&] { return closed_ || !text_.empty() || admitted_news_; });
  GenerationItem item;
  item.cached_tokens = cached_tokens_;
  item.prefilled_tokens = prefilled_tokens_;
  if (!*got) return item;
  admitted_news_ = false;
  item.text = std::exchange(text_, std::string());
  item.num_tokens = std::exchange(num_tokens_, 0);
  item.pieces = std::exchange(pieces_, {});
  item.logprobs = std::exchange(logprobs_, {});
  if (closed_) {
    item.done = true;
    item.finish = final_.finish;
    item.report = final_.report;
    item.error = final_.error;
  }
  return item;
}

void GenerationStream::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
}

bool GenerationStream::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

}  // namespace lineage::server
