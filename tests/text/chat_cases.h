// Chat requests for the template differential test: conversations covering
// what real clients send (system prompts, multi-turn, tool calls with object
// and string arguments, reasoning_content, tool results, tool lists with
// nested JSON schemas, unicode and special characters, malformed orders),
// each crossed with add_generation_prompt and enable_thinking settings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/chat_template.h"

namespace lineage::testing {

struct ChatCase {
  std::string name;
  ChatRequest request;
};

std::vector<ChatCase> MakeChatCases();
nlohmann::ordered_json SampleTools();

// The real chat templates under LINEAGE_SHARED_DATA/templates, by file stem
// (empty when the directory is missing).
std::map<std::string, std::string> LoadRealTemplates();
std::string RealTemplateDir();

// The fixed time strftime_now sees in the differential test.
std::tm FixedNow();

}  // namespace lineage::testing
