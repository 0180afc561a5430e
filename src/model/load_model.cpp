#include "model/load_model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/lane_order.h"
#include "core/mapped_file.h"
#include "model/bind_weights.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/mxfp4_checkpoint.h"
#include "model/safetensors_file.h"

namespace lineage::model {
namespace {

namespace fs = std::filesystem;

// The safetensors files of a HF directory and which one holds each tensor.
struct ShardSet {
  std::vector<SafetensorsFile> files;
  std::map<std::string, size_t> owner;  // tensor name -> index in files

  Result<FoundTensor> Find(const std::string& name) const {
    auto it = owner.find(name);
    if (it == owner.end()) {
      std::string where = files.size() == 1 ? files[0].path() : fs::path(files[0].path()).parent_path().string();
      return NotFound(where + ": tensor '" + name + "' is missing");
    }
    const SafetensorsFile& f = files[it->second];
    LINEAGE_ASSIGN_OR_RETURN(TensorView v, f.Tensor(name));
    return FoundTensor{v, f.path()};
  }
};

Result<ShardSet> OpenShards(const std::string& dir) {
  ShardSet set;
  std::error_code ec;
  const std::string index_path = dir + "/model.safetensors.index.json";
  std::vector<std::string> shard_names;
  if (fs::exists(index_path, ec)) {
    LINEAGE_ASSIGN_OR_RETURN(nlohmann::json index, ReadJsonFile(index_path));
    LINEAGE_RETURN_IF_ERROR(JsonField(index, index_path)["weight_map"].ForEachMember(
        [&](const std::string&, const JsonField& file) -> Status {
          LINEAGE_ASSIGN_OR_RETURN(std::string shard, file.String());
          if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
            return file.Error("a plain file name");
          if (std::find(shard_names.begin(), shard_names.end(), shard) == shard_names.end())
            shard_names.push_back(shard);
          return Status::Ok();
        }));
  } else if (fs::exists(dir + "/model.safetensors", ec)) {
    shard_names.push_back("model.safetensors");
  } else {
    return NotFound(dir + ": neither model.safetensors nor model.safetensors.index.json exists");
  }
  for (const std::string& name : shard_names) {
    LINEAGE_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::Open(dir + "/" + name));
    for (const std::string& t : f.names()) set.owner.emplace(t, set.files.size());
    set.files.push_back(std::move(f));
  }
  return set;
}

// HF checkpoints put the text model under `model.language_model.` (VLM
// wrapped) or `model.`; the plan uses the usual one per arch, the other is
// accepted too.
std::string OtherPrefixName(const std::string& name) {
  const std::string vlm = "model.language_model.", flat = "model.";
  if (name.rfind(vlm, 0) == 0) return flat + name.substr(vlm.size());
  if (name.rfind(flat, 0) == 0) return vlm + name.substr(flat.size());
  return name;
}

// `lookup` with its Q4_K and Q6_K tensors copied into lane order (when
// options.lane_order), into buffers `model` owns; a tensor looked up twice
// (tied embeddings) is copied once.
TensorLookup InLaneOrder(TensorLookup lookup, const LoadOptions& options, Model* model) {
  if (!options.lane_order) return lookup;
  auto copies = std::make_shared<std::map<const void*, TensorView>>();
  return [lookup = std::move(lookup), copies, model](const std::string& name) -> Result<FoundTensor> {
    LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(name));
    const DType lanes = quant::LaneTypeOf(f.view.dtype);
    if (lanes == f.view.dtype) return f;
    auto it = copies->find(f.view.data);
    if (it == copies->end()) {
      std::shared_ptr<uint8_t> owned = AllocateWeightBytes(static_cast<size_t>(f.view.nbytes));
      if (!owned) return Internal(f.file + ": no memory for a copy of tensor '" + name + "'");
      const int64_t blocks = f.view.nbytes / Info(f.view.dtype).block_bytes;
      quant::ToLaneOrder(f.view.dtype, static_cast<const uint8_t*>(f.view.data), blocks, owned.get());
      ReleaseMappedPages(f.view.data, static_cast<size_t>(f.view.nbytes));
      TensorView v = f.view;
      v.dtype = lanes;
      v.data = owned.get();
      model->buffers.push_back(std::move(owned));
      it = copies->emplace(f.view.data, v).first;
    }
    FoundTensor out = f;
    out.view = it->second;
    out.view.name = f.view.name;
    return out;
  };
}

Result<std::shared_ptr<const Model>> LoadHf(const std::string& dir, const LoadOptions& options) {
  const std::string config_path = dir + "/config.json";
  LINEAGE_ASSIGN_OR_RETURN(nlohmann::json config_json, ReadJsonFile(config_path));
  auto model = std::make_shared<Model>();
  LINEAGE_ASSIGN_OR_RETURN(model->config, ParseHfConfig(config_json, config_path));
  model->config.source_path = dir;
  std::error_code ec;
  if (fs::exists(dir + "/generation_config.json", ec)) {
    LINEAGE_ASSIGN_OR_RETURN(nlohmann::json gen, ReadJsonFile(dir + "/generation_config.json"));
    LINEAGE_RETURN_IF_ERROR(MergeGenerationConfig(gen, dir + "/generation_config.json", &model->config));
  }
  LINEAGE_ASSIGN_OR_RETURN(const bool mxfp4, ReadMxfp4Quantization(JsonField(config_json, config_path)));
  LINEAGE_ASSIGN_OR_RETURN(ShardSet shards, OpenShards(dir));
  auto stored_name = [&](const std::string& name) {
    return !shards.owner.count(name) && shards.owner.count(OtherPrefixName(name)) ? OtherPrefixName(name) : name;
  };
  auto lookup = [&](const std::string& planned) -> Result<FoundTensor> {
    const std::string name = stored_name(planned);
    const Mxfp4Names packed = mxfp4 ? Mxfp4NamesFor(name) : Mxfp4Names{};
    if (shards.owner.count(name) || packed.packed.empty() || !shards.owner.count(packed.packed))
      return shards.Find(name);
    // A compressed-tensors MXFP4 weight: its codes moved into GGUF's
    // blocks, held by the model.
    const SafetensorsFile& f = shards.files[shards.owner.at(packed.packed)];
    LINEAGE_ASSIGN_OR_RETURN(RawTensor codes, f.Raw(packed.packed));
    if (!shards.owner.count(packed.scale)) return shards.Find(packed.scale);
    LINEAGE_ASSIGN_OR_RETURN(RawTensor scales, shards.files[shards.owner.at(packed.scale)].Raw(packed.scale));
    auto blocks = RepackMxfp4(name, codes, scales);
    if (!blocks.ok()) return InvalidArgument(f.path() + ": " + blocks.status().message());
    auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(*blocks));
    model->buffers.push_back(owned);
    TensorView v{name, DType::kMXFP4, {codes.shape[0], 2 * codes.shape[1]}, owned->data(),
                 static_cast<int64_t>(owned->size())};
    return FoundTensor{v, f.path()};
  };
  LINEAGE_ASSIGN_OR_RETURN(model->weights, BindWeights(model->config, InLaneOrder(lookup, options, model.get())));
  for (const SafetensorsFile& f : shards.files) model->files.push_back(f.file());
  return std::shared_ptr<const Model>(std::move(model));
}

Result<std::shared_ptr<const Model>> LoadGguf(const std::string& path, const LoadOptions& options) {
  LINEAGE_ASSIGN_OR_RETURN(GgufFile g, GgufFile::Open(path));
  auto model = std::make_shared<Model>();
  LINEAGE_ASSIGN_OR_RETURN(model->config, ParseGgufConfig(g));
  auto lookup = [&](const std::string& name) -> Result<FoundTensor> {
    LINEAGE_ASSIGN_OR_RETURN(TensorView v, g.Tensor(name));
    return FoundTensor{v, path};
  };
  LINEAGE_ASSIGN_OR_RETURN(model->weights, BindWeights(model->config, InLaneOrder(lookup, options, model.get())));
  model->files.push_back(g.file());
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace

Result<std::shared_ptr<const Model>> LoadModel(const std::string& path, const LoadOptions& options) {
  // Every check returns a Status; this catch is the backstop that keeps a
  // missed case (or an allocation failure) an error instead of an abort.
  try {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return LoadHf(path, options);
    if (!fs::exists(path, ec)) return NotFound(path + ": no such file or directory");
    return LoadGguf(path, options);
  } catch (const std::exception& e) {
    return Internal(path + ": loading failed: " + e.what());
  }
}

Result<VocabSource> LoadVocabSource(const std::string& path) {
  std::error_code ec;
  VocabSource src;
  if (fs::is_directory(path, ec)) {
    src.format = FileFormat::kSafetensors;
    src.tokenizer_json = path + "/tokenizer.json";
    if (!fs::exists(src.tokenizer_json, ec)) return NotFound(src.tokenizer_json + ": no such file");
    if (fs::exists(path + "/tokenizer_config.json", ec)) src.tokenizer_config_json = path + "/tokenizer_config.json";
    return src;
  }
  LINEAGE_ASSIGN_OR_RETURN(GgufFile g, GgufFile::Open(path));
  src.format = FileFormat::kGguf;
  src.gguf = std::make_shared<const GgufFile>(std::move(g));
  return src;
}

}  // namespace lineage::model
