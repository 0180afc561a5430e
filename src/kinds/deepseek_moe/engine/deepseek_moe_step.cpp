// The DeepSeek-V3 MoE in a step (layer_table.h): the MoE forward
// (src/kinds/moe/engine/moe_layer.cpp), which reads the router's form from
// the config.
#include "engine/layer_table.h"
#include "kinds/moe/engine/moe_step.h"

namespace lineage::kinds::deepseek_moe {

extern const engine::FfnStep kEngineStep{moe::RunMoe};

}  // namespace lineage::kinds::deepseek_moe
