// framework_spec.h — the software stack a run executes under (Megatron-Core, Megatron-LM
// 2021, NeMo, Megatron-DeepSpeed): what it does that changes time but not the layout's
// arithmetic — whether pipeline sends block, how layers are spread over stages. Presets
// are data files in traces/presets/frameworks/; the fitted per-stack overheads (host
// launch, per-pass and per-iteration costs) live in the calibration file (calibration.h).
#pragma once

#include <string>
#include <vector>

namespace cc {

enum class LayerPartition {
  Even,              // Megatron-LM: num_layers / PP per stage (or explicit first/last stage layers)
  DeepSpeedUniform,  // DeepSpeed: floor or ceil of num_layers / PP per stage, heavier stages first
};

struct FrameworkSpec {
  std::string name;
  std::string description;
  bool blocking_p2p = true;  // the sender's next pass waits for its pipeline send
  // Under the interleaved schedule the sends do not block: Megatron-Core's
  // --overlap-p2p-communication (on unless --no-overlap-p2p-communication) posts them and
  // waits only where the data is needed.
  bool interleaved_p2p_overlap = false;
  LayerPartition layer_partition = LayerPartition::Even;
  // What the stack does when a launch line does not say: bucketed DP reduction during
  // backward, and (distributed optimizer) the parameter all-gather hidden in the forward.
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  // The attention kernel when a launch line does not say: fused/flash (no s x s scores kept)
  // or the unfused kernels that store them, as the 2021-2022 papers' runs did.
  bool flash_attention = false;
  // The GEMM libraries whose workspaces the stack keeps allocated (library_workspaces.h): PyTorch's
  // cuBLAS, Transformer Engine's; and one PyTorch workspace's size where the stack sets
  // CUBLAS_WORKSPACE_CONFIG (MiB; 0: PyTorch's default for the GPU).
  bool pytorch = true;
  bool transformer_engine = false;
  double cublas_workspace_mib = 0;
  // Kernel choices the stack's measured runs made, which its fitted constants (calibration.h)
  // carry with them: no fitted quantity yet prices either on its own, so a launch line that
  // states the other choice is refused under this stack (resolve_run) and names the stack
  // whose runs made it.
  bool deterministic_mode = false;            // Megatron-LM --deterministic-mode
  bool gradient_accumulation_fusion = true;   // off: --no-gradient-accumulation-fusion
  // Megatron-Core's fused vocab-parallel cross-entropy (fusions/fused_cross_entropy.py) exists in
  // the stack, so --cross-entropy-loss-fusion can run (and is priced) under it.
  bool fused_cross_entropy = false;
};

inline constexpr const char* kDefaultFramework = "megatron-core";

// A preset name from traces/presets/frameworks/; anything else is a SpecError listing them.
// Returns a reference to a parsed-once table entry.
const FrameworkSpec& load_framework(const std::string& name);
std::vector<std::string> framework_preset_names();

const char* to_string(LayerPartition p);

}  // namespace cc
