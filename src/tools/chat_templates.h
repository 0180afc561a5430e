// Chat templates written into random-weight models (tokenizer_config.json
// "chat_template" or GGUF tokenizer.chat_template).
#pragma once

#include "model/config.h"

namespace lineage::model {

// The published Jinja template of the real model family of `arch`.
const char* ChatTemplateFor(Arch arch);

}  // namespace lineage::model
