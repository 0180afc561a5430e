#include "jinja_reference.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace lineage::testing {

namespace fs = std::filesystem;

std::string ReferenceUnavailableReason() {
  if (!fs::exists("/usr/bin/python3")) return "/usr/bin/python3 is missing";
  if (std::system("/usr/bin/python3 -c 'import jinja2' 2>/dev/null") != 0) return "python3-jinja2 is not installed";
  return {};
}

Result<nlohmann::ordered_json> RunReference(const nlohmann::ordered_json& request) {
  static int counter = 0;
  fs::path in = fs::temp_directory_path() /
                ("lineage_jinja_ref_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".json");
  {
    std::ofstream f(in, std::ios::binary);
    f << request.dump();
  }
  std::string cmd = "/usr/bin/python3 " + std::string(LINEAGE_SOURCE_DIR) + "/tests/text/jinja_reference.py < " +
                    in.string();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    fs::remove(in);
    return IoError("cannot run " + cmd);
  }
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  fs::remove(in);
  if (rc != 0) return IoError("reference script exited with " + std::to_string(rc));
  auto j = nlohmann::ordered_json::parse(out, nullptr, false);
  if (j.is_discarded()) return Corrupt("reference output is not JSON");
  return j;
}

std::string ExpectedErrorFragment(const std::string& ref_error) {
  auto starts = [&](const char* p) { return ref_error.rfind(p, 0) == 0; };
  if (starts("TemplateError: ")) return "template raised: " + ref_error.substr(15);
  if (starts("UndefinedError")) return "undefined: ";
  if (starts("SecurityError")) return "sandbox: ";
  if (starts("TemplateSyntaxError") || starts("TemplateAssertionError")) return "syntax error: ";
  if (starts("OverflowError")) return "limit: ";
  return "type error: ";
}

}  // namespace lineage::testing
