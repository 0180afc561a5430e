// The last-position logits of llama.cpp's default path on a model file for
// the prompt in prompt_ids.txt and for the 16 prompts of
// QuantForwardFast.MeanOverPromptsNearExactPath (README.md). Built against
// llama.cpp, not by this project's CMake.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "llama.h"

static std::vector<float> Run(llama_model* model, std::vector<llama_token> prompt) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 256;
  cp.n_batch = 256;
  cp.n_threads = 2;
  cp.n_threads_batch = 2;
  llama_context* ctx = llama_init_from_model(model, cp);
  llama_batch b = llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size()));
  if (llama_decode(ctx, b) != 0) { fprintf(stderr, "decode failed\n"); exit(1); }
  const int n = llama_vocab_n_tokens(llama_model_get_vocab(model));
  const float* l = llama_get_logits_ith(ctx, -1);
  std::vector<float> out(l, l + n);
  llama_free(ctx);
  return out;
}

static void Write(const std::string& path, const std::vector<float>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

int main(int argc, char** argv) {
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  const std::string out = argv[2];
  std::ifstream pf(argv[3]);
  std::string line;
  std::getline(pf, line);
  std::vector<llama_token> oracle;
  std::stringstream ss(line);
  std::string tok;
  while (std::getline(ss, tok, ',')) oracle.push_back(std::stoi(tok));
  Write(out + "_oracle.f32", Run(model, oracle));
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  uint32_t x = 12345;
  for (int p = 0; p < 16; ++p) {
    std::vector<llama_token> prompt;
    for (int i = 0; i < 40; ++i) {
      x = x * 1664525u + 1013904223u;
      prompt.push_back(static_cast<llama_token>((x >> 8) % static_cast<uint32_t>(vocab)));
    }
    Write(out + "_p" + std::to_string(p) + ".f32", Run(model, prompt));
  }
  llama_model_free(model);
}
