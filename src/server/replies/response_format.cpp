#include "server/replies/response_format.h"

#include <random>

namespace lineage::server {

std::string Dump(const nlohmann::ordered_json& v) {
  return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string SseEvent(const nlohmann::ordered_json& data, const char* event_name) {
  std::string out;
  if (event_name) out += std::string("event: ") + event_name + "\n";
  out += "data: " + Dump(data) + "\n\n";
  return out;
}

std::string RandomId(const char* prefix) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id.push_back(kAlphabet[rng() % (sizeof(kAlphabet) - 1)]);
  return id;
}

}  // namespace lineage::server
