// GgufWriter output read back by GgufFile: every metadata type, the tensor
// directory, and alignment (default 32, or general.alignment).
#include <gtest/gtest.h>

#include <cstring>

#include "model/gguf_file.h"
#include "tools/gguf_writer.h"
#include "test_util.h"

namespace lineage::model {
namespace {

GgufWriter::Producer Bytes(std::vector<float> values) {
  return [values](FileSink& sink) { return sink.Write(values.data(), values.size() * 4); };
}

TEST(GgufWriter, EveryValueTypeRoundTrips) {
  GgufWriter w;
  w.AddUint8("u8", 200);
  w.AddInt8("i8", -100);
  w.AddUint16("u16", 60000);
  w.AddInt16("i16", -30000);
  w.AddUint32("u32", 4000000000u);
  w.AddInt32("i32", -2000000000);
  w.AddUint64("u64", 1ull << 40);
  w.AddInt64("i64", -(1ll << 40));
  w.AddFloat32("f32", 1.5f);
  w.AddFloat64("f64", 0.1);
  w.AddBool("b", true);
  w.AddString("s", "héllo");
  w.AddStringArray("as", {"a", "", "ccc"});
  w.AddUint8Array("au8", {1, 2});
  w.AddInt8Array("ai8", {-1, 2});
  w.AddUint16Array("au16", {3});
  w.AddInt16Array("ai16", {-4});
  w.AddUint32Array("au32", {5, 6});
  w.AddInt32Array("ai32", {11, 11, 10, 0});
  w.AddUint64Array("au64", {7});
  w.AddInt64Array("ai64", {-8});
  w.AddFloat32Array("af32", {0.5f, -2.0f});
  w.AddFloat64Array("af64", {0.25});
  w.AddBoolArray("ab", {true, false});
  w.AddTensor("t0", {3}, 0, 12, Bytes({1, 2, 3}));
  w.AddTensor("t1", {2, 2}, 0, 16, Bytes({4, 5, 6, 7}));
  std::string path = testing_util::TempPath("types.gguf");
  ASSERT_TRUE(w.WriteFile(path).ok());

  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g->GetInt("u8"), 200);
  EXPECT_EQ(*g->GetInt("i8"), -100);
  EXPECT_EQ(*g->GetInt("u16"), 60000);
  EXPECT_EQ(*g->GetInt("i16"), -30000);
  EXPECT_EQ(*g->GetInt("u32"), 4000000000ll);
  EXPECT_EQ(*g->GetInt("i32"), -2000000000);
  EXPECT_EQ(*g->GetInt("u64"), 1ll << 40);
  EXPECT_EQ(*g->GetInt("i64"), -(1ll << 40));
  EXPECT_EQ(*g->GetFloat("f32"), 1.5);
  EXPECT_EQ(*g->GetFloat("f64"), 0.1);
  EXPECT_TRUE(*g->GetBool("b"));
  EXPECT_EQ(*g->GetString("s"), "héllo");
  EXPECT_EQ(*g->GetStringArray("as"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(*g->GetIntArray("au8"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(*g->GetIntArray("ai8"), (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(*g->GetIntArray("au16"), (std::vector<int64_t>{3}));
  EXPECT_EQ(*g->GetIntArray("ai16"), (std::vector<int64_t>{-4}));
  EXPECT_EQ(*g->GetIntArray("au32"), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(*g->GetIntArray("ai32"), (std::vector<int64_t>{11, 11, 10, 0}));
  EXPECT_EQ(*g->GetIntArray("au64"), (std::vector<int64_t>{7}));
  EXPECT_EQ(*g->GetIntArray("ai64"), (std::vector<int64_t>{-8}));
  EXPECT_EQ(*g->GetFloatArray("af32"), (std::vector<double>{0.5, -2.0}));
  EXPECT_EQ(*g->GetFloatArray("af64"), (std::vector<double>{0.25}));
  EXPECT_EQ(*g->GetIntArray("ab"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(g->metadata().size(), 24u);

  ASSERT_EQ(g->tensors().size(), 2u);
  EXPECT_EQ(g->tensors()[1].offset, 32u);  // 12 bytes padded to the 32-byte alignment
  auto t1 = g->Tensor("t1");
  ASSERT_TRUE(t1.ok());
  EXPECT_EQ(t1->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(static_cast<const float*>(t1->data)[3], 7.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t1->data) % 32, 0u);
}

TEST(GgufWriter, HonoursGeneralAlignment) {
  GgufWriter w;
  w.AddUint32("general.alignment", 64);
  w.AddTensor("a", {1}, 0, 4, Bytes({1}));
  w.AddTensor("b", {1}, 0, 4, Bytes({2}));
  std::string path = testing_util::TempPath("align.gguf");
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->alignment(), 64u);
  EXPECT_EQ(g->tensors()[1].offset, 64u);
  EXPECT_EQ(static_cast<const float*>(g->Tensor("b")->data)[0], 2.0f);
}

TEST(GgufWriter, ProducerWritingTheWrongSizeFails) {
  GgufWriter w;
  w.AddTensor("a", {2}, 0, 8, Bytes({1}));
  std::string path = testing_util::TempPath("short.gguf");
  Status s = w.WriteFile(path);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'a'"), std::string::npos);
}

}  // namespace
}  // namespace lineage::model
