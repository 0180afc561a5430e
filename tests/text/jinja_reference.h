// Runs tests/text/jinja_reference.py (Debian's python3-jinja2 in the
// environment transformers uses) on one batch request and returns its JSON
// answer. The reference is what our interpreter is checked against.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace lineage::testing {

// Empty when the reference can run; otherwise why not (for GTEST_SKIP).
std::string ReferenceUnavailableReason();

Result<nlohmann::ordered_json> RunReference(const nlohmann::ordered_json& request);

// The fragment our error message must contain for the class of error the
// reference raised ("TemplateError: msg" -> "template raised: msg").
std::string ExpectedErrorFragment(const std::string& reference_error);

}  // namespace lineage::testing
