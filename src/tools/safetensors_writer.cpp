#include "tools/safetensors_writer.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "model/safetensors_file.h"

namespace lineage::model {

void SafetensorsWriter::AddTensor(const std::string& name, DType dtype, std::vector<int64_t> shape,
                                  Producer producer) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const uint64_t nbytes = static_cast<uint64_t>(RowBytes(dtype, numel));
  tensors_.push_back({name, SafetensorsDTypeName(dtype), std::move(shape), nbytes, std::move(producer)});
}

void SafetensorsWriter::AddBytes(const std::string& name, std::vector<int64_t> shape, Producer producer) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  tensors_.push_back({name, "U8", std::move(shape), static_cast<uint64_t>(numel), std::move(producer)});
}

Status SafetensorsWriter::WriteShard(const std::string& path, size_t begin, size_t end) const {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (size_t i = begin; i < end; ++i) {
    const Tensor& t = tensors_[i];
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.nbytes}}};
    offset += t.nbytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_bytes = text.size();
  FileSink sink(path);
  LINEAGE_RETURN_IF_ERROR(sink.Open());
  LINEAGE_RETURN_IF_ERROR(sink.Write(&header_bytes, 8));
  LINEAGE_RETURN_IF_ERROR(sink.Write(text.data(), text.size()));
  for (size_t i = begin; i < end; ++i) {
    const uint64_t start = sink.bytes_written();
    LINEAGE_RETURN_IF_ERROR(tensors_[i].producer(sink));
    if (sink.bytes_written() - start != tensors_[i].nbytes)
      return Internal(path + ": tensor '" + tensors_[i].name + "' producer wrote the wrong number of bytes");
  }
  return sink.Commit();
}

Status SafetensorsWriter::WriteFile(const std::string& path) const { return WriteShard(path, 0, tensors_.size()); }

Result<int> SafetensorsWriter::WriteSharded(const std::string& dir, uint64_t max_shard_bytes) const {
  std::vector<std::pair<size_t, size_t>> shards;
  size_t begin = 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (i > begin && bytes + tensors_[i].nbytes > max_shard_bytes) {
      shards.emplace_back(begin, i);
      begin = i;
      bytes = 0;
    }
    bytes += tensors_[i].nbytes;
  }
  if (begin < tensors_.size() || shards.empty()) shards.emplace_back(begin, tensors_.size());
  const int n = static_cast<int>(shards.size());
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  uint64_t total = 0;
  for (int s = 0; s < n; ++s) {
    char file[64];
    std::snprintf(file, sizeof(file), "model-%05d-of-%05d.safetensors", s + 1, n);
    LINEAGE_RETURN_IF_ERROR(WriteShard(dir + "/" + file, shards[s].first, shards[s].second));
    for (size_t i = shards[s].first; i < shards[s].second; ++i) {
      weight_map[tensors_[i].name] = file;
      total += tensors_[i].nbytes;
    }
  }
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = weight_map;
  LINEAGE_RETURN_IF_ERROR(WriteTextFile(dir + "/model.safetensors.index.json", index.dump(2) + "\n"));
  return n;
}

}  // namespace lineage::model
