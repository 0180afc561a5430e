// ParseJsonBounded against nlohmann's own parser as the oracle (same values,
// same key order, same duplicate-key rule), and its two bounds: depth and
// linear time on the shapes that made the DOM builder quadratic.
#include <gtest/gtest.h>

#include <chrono>

#include "server/api/json_parse.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

TEST(JsonParseTest, SameValuesAsNlohmann) {
  for (const char* text : {R"({"b":1,"a":[1,2.5,"x",null,true,{"z":{}}],"c":{"d":[]}})", R"([])", R"("s")", R"(-3)",
                           R"({"k":1,"j":2,"k":3})", R"({"u":18446744073709551615,"f":1e300})",
                           R"( {"nested":{"a":{"b":{"c":[[[]]]}},"t":1}} )"}) {
    Result<json> got = ParseJsonBounded(text, "body");
    ASSERT_TRUE(got.ok()) << text << ": " << got.status().ToString();
    json want = json::parse(text);
    EXPECT_EQ(got->dump(), want.dump()) << text;
  }
}

TEST(JsonParseTest, SyntaxErrorsNameWhatAndWhere) {
  for (const char* text : {"", "{", "{\"a\":}", "[1,]", "{} x", "nul"}) {
    Result<json> got = ParseJsonBounded(text, "request body");
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find("request body is not valid JSON"), std::string::npos);
  }
}

TEST(JsonParseTest, DepthIsCheckedBeforeTheDomIsBuilt) {
  EXPECT_TRUE(ParseJsonBounded(std::string(128, '[') + std::string(128, ']'), "x").ok());
  Result<json> deep = ParseJsonBounded(std::string(129, '[') + std::string(129, ']'), "x");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deeper than 128 levels"), std::string::npos);
  // A million levels, unterminated: rejected at level 129, nothing recursive.
  EXPECT_FALSE(ParseJsonBounded(std::string(1000000, '{'), "x").ok());
  EXPECT_FALSE(ParseJsonBounded(std::string(1000000, '['), "x").ok());
}

// Shapes on which nlohmann's ordered DOM builder is quadratic: objects nested
// with a trailing key (each level's reallocation copies its subtree) and one
// object with very many keys. Both must take well under the bound here.
TEST(JsonParseTest, LinearOnNestedObjectsWithTrailingKeysAndWideObjects) {
  std::string nested;
  for (int i = 0; i < 120; ++i) nested += "{\"a\":";
  nested += "[" + std::string(200000, '1').insert(0, "\"").append("\"") + "]";
  for (int i = 0; i < 120; ++i) nested += ",\"b\":1}";
  std::string wide = "{";
  for (int i = 0; i < 200000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  wide += "}";
  for (const std::string* text : {&nested, &wide}) {
    auto t0 = std::chrono::steady_clock::now();
    Result<json> got = ParseJsonBounded(*text, "x");
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_LT(s, 10.0);  // nlohmann's ordered builder: minutes
  }
  Result<json> w = ParseJsonBounded(wide, "x");
  EXPECT_EQ(w->size(), 200000u);
  EXPECT_EQ(w->begin().key(), "k0");
  EXPECT_EQ((*w)["k199999"], 199999);
}

}  // namespace
}  // namespace lineage::server
