// HttpServer's private state, shared by the files that add its routes
// (http_server.cpp, cache_page_routes.cpp). Not for other modules.
#pragma once

#include <mutex>

#include "server/admission.h"
#include "server/guarded_listener.h"
#include "server/http_server.h"
#include "server/memory_trim.h"
#include "server/request_history.h"

namespace lineage::server {

struct HttpServer::Impl {
  Impl(const ConnectionLimits& limits, int max_in_flight) : http(limits), admission(max_in_flight) {}
  GuardedListener http;
  Admission admission;
  MemoryTrimmer trimmer;
  RequestHistory history;
  std::mutex log_mu;
};

}  // namespace lineage::server
