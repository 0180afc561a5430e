// Every tensor of every llama.cpp-written file in ../shared/data/models
// (dense and MoE, every block type llama-quantize wrote) dequantizes, read in
// place from the mapped file, to the oracle's first 16 values bit for bit and
// to its sum and sum of squares (computed by the oracle in double); so does
// each Q4_K / Q6_K tensor moved into lane order (core/lane_order.h), and
// the loader binds those copies only when asked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/lane_order.h"
#include "model/gguf_file.h"
#include "model/load_model.h"
#include "oracle_files.h"

namespace lineage::model {
namespace {


using oracle_files::ModelsDir;

std::vector<std::string> OracleFiles() { return oracle_files::NamesEndingIn(".dequant.json"); }

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class QuantOracle : public ::testing::TestWithParam<std::string> {};

// With lane_order, each Q4_K / Q6_K tensor is first moved into lane order
// as the loader moves it.
void ExpectEveryTensorDequantizesToTheOracle(const std::string& name_of_file, bool lane_order) {
  const std::string base = ModelsDir() + "/" + name_of_file;
  std::ifstream in(base + ".dequant.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json oracle = nlohmann::json::parse(in);
  auto file = GgufFile::Open(base + ".gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::set<std::string> types;
  size_t checked = 0;
  for (const auto& t : oracle["tensors"]) {
    const std::string name = t["name"];
    auto view = file->Tensor(name);
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    std::vector<uint8_t> lanes;
    if (lane_order && quant::IsLaneOrder(quant::LaneTypeOf(view->dtype))) {
      lanes.resize(static_cast<size_t>(view->nbytes));
      quant::ToLaneOrder(view->dtype, static_cast<const uint8_t*>(view->data),
                         view->nbytes / Info(view->dtype).block_bytes, lanes.data());
      view->dtype = quant::LaneTypeOf(view->dtype);
      view->data = lanes.data();
    }
    const GgufTensorInfo* info = file->FindTensor(name);
    EXPECT_EQ(GgmlTypeName(info->ggml_type), t["type"].get<std::string>()) << name;
    EXPECT_EQ(info->ne, t["ne"].get<std::vector<int64_t>>()) << name;
    types.insert(t["type"].get<std::string>());
    const int64_t n = view->numel();
    ASSERT_EQ(n, t["n"].get<int64_t>()) << name;
    std::vector<float> values(static_cast<size_t>(n));
    DecodeToFloat(*view, 0, n, values.data());
    const auto& first16 = t["first16"];
    for (size_t i = 0; i < first16.size(); ++i)
      EXPECT_EQ(Bits(values[i]), Bits(static_cast<float>(first16[i].get<double>())))
          << name << " [" << i << "]: " << values[i] << " vs " << first16[i].get<double>();
    double sum = 0, sum_sq = 0;
    for (float v : values) {
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
    const double want_sum = t["sum"], want_sq = t["sum_sq"];
    // The sum can cancel to near zero: relative to the sum of magnitudes.
    EXPECT_NEAR(sum, want_sum, 1e-9 * std::max(1.0, std::sqrt(want_sq * static_cast<double>(n)))) << name;
    EXPECT_NEAR(sum_sq, want_sq, 1e-9 * want_sq) << name;
    ++checked;
  }
  EXPECT_EQ(checked, file->tensors().size()) << "the oracle lists every tensor";
  std::string list;
  for (const auto& s : types) list += s + " ";
  std::printf("  %s%s: %zu tensors, types %s\n", name_of_file.c_str(), lane_order ? " (lane order)" : "", checked,
              list.c_str());
}

TEST_P(QuantOracle, EveryTensorDequantizesToTheOracle) { ExpectEveryTensorDequantizesToTheOracle(GetParam(), false); }

TEST_P(QuantOracle, EveryTensorInLaneOrderDequantizesToTheOracle) {
  ExpectEveryTensorDequantizesToTheOracle(GetParam(), true);
}

// The loader binds lane-order copies when asked, the mapped file otherwise.
TEST_P(QuantOracle, TheLoaderMovesQ4KAndQ6KOnlyWhenAsked) {
  const std::string path = ModelsDir() + "/" + GetParam() + ".gguf";
  for (bool lane_order : {false, true}) {
    LoadOptions options;
    options.lane_order = lane_order;
    auto m = LoadModel(path, options);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const TensorView& head = (*m)->weights.lm_head;
    const DType file_type = quant::FileTypeOf(head.dtype);
    if (file_type != DType::kQ4_K && file_type != DType::kQ6_K) GTEST_SKIP() << "head is " << Info(head.dtype).name;
    EXPECT_EQ(head.dtype, lane_order ? quant::LaneTypeOf(file_type) : file_type);
    const bool owned = std::any_of((*m)->buffers.begin(), (*m)->buffers.end(),
                                   [&](const auto& b) { return b.get() == head.data; });
    EXPECT_EQ(owned, lane_order) << "a lane-order head is a copy the model owns; a file-order one is mapped";
  }
}

INSTANTIATE_TEST_SUITE_P(SharedModels, QuantOracle, ::testing::ValuesIn(OracleFiles()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(QuantOracle);

}  // namespace
}  // namespace lineage::model
