// The cache page (src/server/cache_page/cache.html), embedded at build time
// by cmake/embed.cmake.
#pragma once

#include <cstddef>

namespace lineage::server {

extern const unsigned char kCachePageHtml[];
extern const size_t kCachePageHtmlSize;

}  // namespace lineage::server
