#include "sim/shapes.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lineage::sim {
namespace {
constexpr int64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

// Qwen3.5 / Qwen3-Next GDN layer in fp32 (spec §8): H_v·d_k·d_v + 3·conv_dim elements.
constexpr int64_t GdnStateBytes(int64_t layers, int64_t h_v, int64_t conv_dim) {
  return layers * (h_v * 128 * 128 + 3 * conv_dim) * 4;
}
}  // namespace

const std::vector<ModelShape>& KnownShapes() {
  static const std::vector<ModelShape> shapes = {
      // Seed 000: ~27 KB/token of KV over 11 sparse-attention layers, a 143 MB KDA state,
      // 420 tokens/s prefill and 0.033 s/token decode on an M3 Ultra, 48 GB RAM, 1 TB disk.
      {"glm-5.3-flash", 27 * 1024, 143 * 1000 * 1000, 420.0, 0.033, 48 * GiB, 1 * TiB, 5.0e9, 4.0e9, 10.0e9, 11, 34},
      // The same model as Lineage runs it on this project's 2-core machine
      // (docs/sim.md): KV and state from the engine's own layout of
      // `lineage mkmodel --arch kda_dsa --shape glm-5.3-flash` (f32 pages:
      // 11 x (576 + 128) x 4 B; 34 KDA states of 64 x 128 x 128 plus the
      // convs' 3 x 3 x 8192, f32), speeds from `lineage bench` of that
      // shape cut to 4 and 8 layers (Q4_K_M) extrapolated to 45, the RAM
      // budget `lineage serve`'s default, disk and copy rates measured.
      {"glm-5.3-flash-cpu", 11 * (576 + 128) * 4, 34 * (3 * 3 * 8192 + 64 * 128 * 128) * int64_t{4}, 15.6, 0.0695,
       8 * GiB, 64 * GiB, 0.58e9, 0.5e9, 33.0e9, 11, 34},
      // Spec §8: 6 attention layers × 2 × 2 KV heads × 256 × bf16 = 12,288 B/token;
      // 18 GDN layers with 16 value heads, conv_dim 6144, fp32.
      {"qwen3.5-0.8b", 12288, GdnStateBytes(18, 16, 6144), 60.0, 0.08, 4 * GiB, 64 * GiB, 1.0e9, 0.5e9, 5.0e9, 6, 18},
      // Spec §8: 12 attention layers × 2 × 2 × 256 × bf16 = 24,576 B/token;
      // 36 GDN layers with 32 value heads, conv_dim 8192, fp32.
      {"qwen3-next-80b", 24576, GdnStateBytes(36, 32, 8192), 12.0, 0.25, 16 * GiB, 256 * GiB, 1.0e9, 0.5e9, 5.0e9, 12, 36},
      // Spec §8: 7 MLA layers × one latent row of 576 × bf16 = 8,064 B/token; 20 KDA
      // layers of 32 heads × 128 × 128 plus 3 convs × 3 × 4096, fp32 (42.8 MiB). Speeds
      // as qwen3-next-80b: both activate ~3B parameters per token.
      {"kimi-linear-48b-a3b", 7 * 576 * 2, 20 * (32 * 128 * 128 + 3 * 3 * 4096) * 4, 12.0, 0.25, 16 * GiB, 256 * GiB,
       1.0e9, 0.5e9, 5.0e9, 7, 20},
      // Spec §11: 28 layers × 2 × 8 KV heads × 128 × bf16 = 114,688 B/token, no recurrent state.
      {"qwen3-0.6b", 114688, 0, 80.0, 0.06, 4 * GiB, 64 * GiB, 1.0e9, 0.5e9, 5.0e9, 28, 0},
  };
  return shapes;
}

Result<ModelShape> FindShape(const std::string& name) {
  for (const ModelShape& s : KnownShapes())
    if (s.name == name) return s;
  std::string known;
  for (const ModelShape& s : KnownShapes()) known += (known.empty() ? "" : ", ") + s.name;
  return NotFound("unknown shape '" + name + "' (known: " + known + ")");
}

Result<int64_t> ParseBytes(const std::string& text) {
  if (text.empty()) return InvalidArgument("empty byte size");
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v >= 0) || !std::isfinite(v)) return InvalidArgument("bad byte size '" + text + "'");
  std::string suffix(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I')) suffix.pop_back();
  double mult = 1;
  if (suffix.empty()) mult = 1;
  else if (suffix == "K" || suffix == "k") mult = KiB;
  else if (suffix == "M" || suffix == "m") mult = MiB;
  else if (suffix == "G" || suffix == "g") mult = GiB;
  else if (suffix == "T" || suffix == "t") mult = TiB;
  else return InvalidArgument("bad byte size suffix in '" + text + "'");
  double bytes = v * mult;
  if (bytes > 9.0e18) return OutOfRange("byte size too large: '" + text + "'");
  return static_cast<int64_t>(std::llround(bytes));
}

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T", "P"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld%s", static_cast<long long>(bytes), units[0]);
  else std::snprintf(buf, sizeof buf, v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s", v, units[u]);
  return buf;
}

}  // namespace lineage::sim
