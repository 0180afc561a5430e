// `lineage serve`: the OpenAI- and Anthropic-compatible HTTP server on the
// lineage prompt cache (DESIGN.md §6). Flags follow llama-server where the
// concept is the same.
#include <CLI/CLI.hpp>
#include <sys/resource.h>

#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cli/command.h"
#include "core/read_file.h"
#include "model/load_model.h"
#include "server/generation/engine_backend.h"
#include "server/http_server.h"
#include "cli/version.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace lineage::cli {
namespace {

struct ServeArgs {
  bool file_order = false;
  std::string model;
  std::string alias;
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 0;
  int64_t ctx_size = 0;
  int parallel = 4;
  int64_t cache_ram_mib = 8192;
  std::string cache_dir;
  int64_t cache_disk_max_mib = 0;
  bool cache_disk_shared = false;
  std::string kv_events;
  int64_t kv_events_block = 64;
  int64_t cache_reuse = 0;
  std::string api_key;
  std::string chat_template_file;
  std::string trace_log;
  bool no_lineage = false;
  bool no_extend = false;
  int64_t prefill_chunk = 256;
  int max_queue = 64;
  int64_t max_body_mib = 16;
  double header_timeout_s = 30;
  double body_timeout_s = 120;
  int max_connections = 0;
  int max_connections_per_client = 0;
  int64_t n_predict = -1;
  bool keep_billing_header = false;
  std::string spec_type = std::string(engine::SpecTypeName(server::EngineBackendOptions{}.spec.type));
  int64_t draft_max = server::EngineBackendOptions{}.spec.draft_max;
  int64_t draft_min = server::EngineBackendOptions{}.spec.draft_min;
};

// Each connection holds a descriptor, and a soft limit of 1024 is below what
// a burst of clients opens; any process may raise it to the hard limit.
void RaiseDescriptorLimit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max) return;
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// SIGINT/SIGTERM are taken by one waiting thread, so every other thread
// (server pool, scheduler, disk tier) is created with them blocked. The
// waiter runs from the first instruction: a signal during start-up (loading
// the model, scanning the disk cache) ends the process at once; once the
// server is serving, it stops the server.
class SignalWaiter {
 public:
  SignalWaiter() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this] { Wait(); });
  }
  ~SignalWaiter() { Release(); }

  // From now on a signal stops `http` (which must outlive Release()).
  void Serving(server::HttpServer* http) {
    std::lock_guard<std::mutex> lock(mu_);
    http_ = http;
  }
  // Ends the waiter without a signal having come.
  void Release() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }

 private:
  void Wait() {
    int sig = 0;
    sigwait(&signals_, &sig);
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    if (http_ == nullptr) {
      std::fprintf(stderr, "serve: signal %d during start-up, exiting\n", sig);
      std::_Exit(128 + sig);
    }
    std::fprintf(stderr, "serve: signal %d, stopping\n", sig);
    http_->Stop();
  }

  sigset_t signals_;
  std::mutex mu_;
  server::HttpServer* http_ = nullptr;
  bool released_ = false;
  std::thread thread_;
};

Status Run(const ServeArgs& a) {
  SignalWaiter waiter;

  if (a.cache_dir.empty() && a.cache_disk_max_mib > 0)
    std::fprintf(stderr, "serve: --cache-disk-max without --cache-dir: RAM only\n");

  auto t0 = std::chrono::steady_clock::now();
  std::fprintf(stderr, "serve: loading model %s ...\n", a.model.c_str());
  model::LoadOptions load_options;
  if (a.file_order) load_options.lane_order = false;
  LINEAGE_ASSIGN_OR_RETURN(std::shared_ptr<const model::Model> m, model::LoadModel(a.model, load_options));
  std::fprintf(stderr, "serve: model loaded in %.2f s; loading tokenizer ...\n", SecondsSince(t0));
  LINEAGE_ASSIGN_OR_RETURN(text::Tokenizer tokenizer, text::LoadTokenizer(a.model));
  int64_t cache_reuse = std::max<int64_t>(0, a.cache_reuse);
  if (cache_reuse > 0 && m->config.num_linear_layers() > 0) {
    // As llama-server does: the flag is ignored, not an error, so one command
    // line serves both kinds of model.
    std::fprintf(stderr,
                 "serve: --cache-reuse %lld ignored: %s has recurrent layers, whose state cannot be spliced "
                 "(chunk reuse is for attention-only models)\n",
                 static_cast<long long>(cache_reuse), model::ArchName(m->config.arch));
    cache_reuse = 0;
  } else if (cache_reuse > 0) {
    std::fprintf(stderr,
                 "serve: --cache-reuse %lld: runs of at least that many tokens after the common prefix are shifted "
                 "into place (an approximation)\n",
                 static_cast<long long>(cache_reuse));
  }

  std::string template_source = tokenizer.chat_template();
  if (!a.chat_template_file.empty()) {
    LINEAGE_ASSIGN_OR_RETURN(template_source, ReadFileBounded(a.chat_template_file, kMaxTemplateFileBytes));
  }
  std::optional<ChatTemplate> chat_template;
  if (!template_source.empty()) {
    LINEAGE_ASSIGN_OR_RETURN(ChatTemplate t,
                             ChatTemplate::Create(template_source, std::string(tokenizer.TokenText(tokenizer.bos_id())),
                                                  std::string(tokenizer.TokenText(tokenizer.eos_id()))));
    chat_template = std::move(t);
  } else {
    std::fprintf(stderr, "serve: the model has no chat template; only /v1/completions will work\n");
  }

  std::unique_ptr<trace::TraceLog> trace_log;
  if (!a.trace_log.empty()) {
    LINEAGE_ASSIGN_OR_RETURN(trace_log, trace::TraceLog::Open(a.trace_log));
  }
  server::EngineBackendOptions bo;
  bo.scheduler.trace_log = trace_log.get();
  bo.model_id = !a.alias.empty() ? a.alias : a.model.substr(a.model.find_last_of('/') + 1);
  bo.model_path = a.model;
  bo.chat_template_source = template_source;
  bo.engine.num_threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bo.scheduler.context_tokens = a.ctx_size;
  bo.scheduler.max_live = std::max(1, a.parallel);
  bo.scheduler.max_queue = std::max(1, a.max_queue);
  bo.scheduler.prefill_chunk_tokens = std::max<int64_t>(16, a.prefill_chunk);
  bo.scheduler.extend_after_generation = !a.no_extend;
  bo.cache.mode = a.no_lineage ? cache::CacheMode::kExact : cache::CacheMode::kLineage;
  bo.cache.ram_budget_bytes = a.cache_ram_mib < 0 ? (int64_t{1} << 62) : a.cache_ram_mib << 20;
  bo.cache_dir = a.cache_dir;
  bo.cache_disk_shared = a.cache_disk_shared;
  bo.kv_events.endpoint = a.kv_events;
  bo.kv_events.block_tokens = a.kv_events_block;
  bo.cache_reuse_min_tokens = cache_reuse;
  bo.max_predict_tokens = a.n_predict;
  bo.prompt.keep_billing_header = a.keep_billing_header;
  LINEAGE_ASSIGN_OR_RETURN(bo.spec.type, engine::ParseSpecType(a.spec_type));
  // The MTP block's KV layer is in every sequence's pages, so its drafts are
  // a server-wide choice; requests may still choose none or prompt lookup.
  bo.engine.mtp = bo.spec.type == engine::SpecType::kMtp;
  if (a.draft_max < 0 || a.draft_min < 0 || a.draft_max > 256)
    return InvalidArgument("--draft-max must be in [0, 256] and --draft-min not negative");
  bo.spec.draft_max = a.draft_max;
  bo.spec.draft_min = a.draft_min;
  if (a.cache_disk_max_mib > 0) bo.cache_disk_max_bytes = a.cache_disk_max_mib << 20;
  LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<server::EngineBackend> backend,
                           server::EngineBackend::Create(m, tokenizer, std::move(chat_template), bo));
  if (a.ctx_size > backend->context_tokens())
    std::fprintf(stderr, "serve: --ctx-size %lld is above the model's context of %lld tokens; using %lld\n",
                 static_cast<long long>(a.ctx_size), static_cast<long long>(backend->context_tokens()),
                 static_cast<long long>(backend->context_tokens()));

  server::ServerOptions so;
  so.host = a.host;
  so.port = a.port;
  so.api_key = a.api_key;
  so.build_info = VersionLine();
  so.max_body_bytes = static_cast<size_t>(a.max_body_mib) << 20;
  so.max_in_flight = bo.scheduler.max_live + bo.scheduler.max_queue;
  if (a.max_body_mib < 1 || a.header_timeout_s <= 0 || a.body_timeout_s <= 0 || a.max_connections < 0 ||
      a.max_connections_per_client < 0)
    return InvalidArgument("--max-body-mb, --header-timeout and --body-timeout must be positive, "
                           "--max-connections and --max-connections-per-client not negative");
  so.header_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.header_timeout_s * 1000));
  so.body_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.body_timeout_s * 1000));
  so.max_connections = a.max_connections;
  so.max_connections_per_client = a.max_connections_per_client;
  RaiseDescriptorLimit();
  server::HttpServer http(backend.get(), so);
  LINEAGE_RETURN_IF_ERROR(http.Bind());
  std::fprintf(stderr,
               "serve: %s ready in %.2f s on http://%s:%d (context %lld tokens, %d parallel, cache %s, %lld MiB RAM, "
               "disk %s%s)\n",
               bo.model_id.c_str(), SecondsSince(t0), a.host.c_str(), http.port(),
               static_cast<long long>(backend->context_tokens()), bo.scheduler.max_live,
               a.no_lineage ? "exact (lineage off)" : "lineage", static_cast<long long>(a.cache_ram_mib),
               a.cache_dir.empty() ? "off" : a.cache_dir.c_str(),
               a.n_predict >= 0 ? (", at most " + std::to_string(a.n_predict) + " tokens per reply").c_str() : "");
  waiter.Serving(&http);
  http.Serve();
  // Stopped by a signal, or the listener failed: release the waiter.
  waiter.Release();
  return Status::Ok();
}

Register reg{{"serve", "Serve a model over HTTP (OpenAI and Anthropic APIs)", [](CLI::App& sub) {
                auto a = std::make_shared<ServeArgs>();
                sub.add_option("-m,--model", a->model, "model file (.gguf) or Hugging Face directory")->required();
                sub.add_option("-a,--alias", a->alias, "model name reported by the API (default: file name)");
                sub.add_option("--host", a->host, "address to bind")->capture_default_str();
                sub.add_option("--port", a->port, "port to listen on, 1..65535 (0: any free port)")
                    ->check(CLI::Range(0, 65535))
                    ->capture_default_str();
                sub.add_option("-t,--threads", a->threads, "compute threads (0: all cores)")
                    ->check(CLI::Range(0, 1 << 16))
                    ->capture_default_str();
                sub.add_option("-c,--ctx-size", a->ctx_size,
                               "tokens per sequence (0: the model's; above the model's: clamped, with a warning)")
                    ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
                    ->capture_default_str();
                sub.add_option("-n,--n-predict", a->n_predict,
                               "most tokens generated per request, whatever it asks for (-1: no server limit)")
                    ->check(CLI::Range(int64_t{-1}, int64_t{1} << 30))
                    ->capture_default_str();
                sub.add_option("--parallel", a->parallel, "sequences decoded together")
                    ->check(CLI::Range(1, 1 << 16))
                    ->capture_default_str();
                sub.add_flag("--keep-billing-header", a->keep_billing_header,
                             "render Claude Code's x-anthropic-billing-header system block (stripped by default: it "
                             "changes every session and would defeat the system-prompt cache)");
                sub.add_option("--cache-ram", a->cache_ram_mib, "prompt-cache RAM budget in MiB (-1: no limit)")
                    ->capture_default_str();
                sub.add_option("--cache-dir", a->cache_dir, "directory of the disk tier");
                sub.add_option("--cache-disk-max", a->cache_disk_max_mib, "disk tier cap in MiB");
                sub.add_option("--kv-events", a->kv_events,
                               "publish restorable prefixes as vLLM KV events on this ZMQ PUB endpoint "
                               "(tcp://127.0.0.1:PORT; docs/kv-events.md)");
                sub.add_option("--kv-events-block", a->kv_events_block, "tokens per KV-event block")
                    ->capture_default_str()
                    ->check(CLI::PositiveNumber);
                sub.add_flag("--cache-disk-shared", a->cache_disk_shared,
                             "share --cache-dir with other servers started with this flag (replicas); the cap is joint");
                sub.add_option("--cache-reuse", a->cache_reuse, "attention-only models: min chunk size to reuse by shifting (0: off)")
                    ->capture_default_str();
                sub.add_option("--api-key", a->api_key, "require this key (Bearer or x-api-key) on all but /health")
                    ->check([](const std::string& key) -> std::string {
                      // An empty key would silently leave the server open.
                      if (key.empty()) return "the API key must not be empty (leave --api-key out for no key)";
                      for (unsigned char c : key)
                        if (c < 0x21 || c > 0x7e) return "the API key must be printable ASCII without spaces";
                      return "";
                    });
                sub.add_option("--chat-template-file", a->chat_template_file, "Jinja chat template overriding the model's");
                sub.add_option("--trace-log", a->trace_log, "write requests in the simulator's trace format");
                sub.add_flag("--no-lineage", a->no_lineage, "previous behaviour: whole snapshots at m-16 and m, small LRU");
                sub.add_flag("--file-order", a->file_order,
                             "keep Q4_K / Q6_K weights as stored, not copied into lane order for the AVX-512 kernels");
                sub.add_flag("--no-extend", a->no_extend, "do not extend entries over the generated reply");
                sub.add_option("--spec-type", a->spec_type,
                               "speculative decoding: none, ngram-simple (drafts by prompt lookup) or draft-mtp (the "
                               "model file's MTP block); verified in one step, exact, drafted only while they pay")
                    ->capture_default_str();
                sub.add_option("--draft-max,--spec-draft-n-max", a->draft_max, "drafts per step at most")
                    ->capture_default_str();
                sub.add_option("--draft-min,--spec-draft-n-min", a->draft_min,
                               "drafts per step at least (fewer worth drafting: none)")
                    ->capture_default_str();
                sub.add_option("--prefill-chunk", a->prefill_chunk, "prompt tokens per scheduler step")->capture_default_str();
                sub.add_option("--max-queue", a->max_queue, "waiting requests before 503")->capture_default_str();
                sub.add_option("--max-body-mb", a->max_body_mib, "largest request body in MiB")->capture_default_str();
                sub.add_option("--header-timeout", a->header_timeout_s,
                               "seconds for a request's line and headers to arrive")->capture_default_str();
                sub.add_option("--body-timeout", a->body_timeout_s, "seconds for a request's body to arrive")
                    ->capture_default_str();
                sub.add_option("--max-connections", a->max_connections,
                               "connections served at once (0: HTTP workers - 4); more get 503, /health still answers")
                    ->capture_default_str();
                sub.add_option("--max-connections-per-client", a->max_connections_per_client,
                               "connections from one address (0: --max-connections)")->capture_default_str();
                return std::function<int()>([a] {
                  Status st = Run(*a);
                  if (!st.ok()) {
                    std::fprintf(stderr, "serve: %s\n", st.ToString().c_str());
                    return 1;
                  }
                  return 0;
                });
              }}};

}  // namespace
}  // namespace lineage::cli
