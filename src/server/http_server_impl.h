// HttpServer's private state, shared by the files that add its routes
// (http_server.cpp, cache_page_routes.cpp). Not for other modules.
#pragma once

#include <mutex>

#include "server/http/admission.h"
#include "server/http/guarded_listener.h"
#include "server/http_server.h"
#include "server/http/memory_trim.h"
#include "server/observe/request_history.h"

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
