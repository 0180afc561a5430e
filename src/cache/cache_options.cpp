#include "cache/cache_options.h"

#include <unistd.h>

namespace lineage::cache {

int64_t MachineRamBudgetBytes(double fraction) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(fraction * static_cast<double>(pages) * static_cast<double>(page_size));
}

}  // namespace lineage::cache
