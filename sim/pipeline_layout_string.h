// pipeline_layout_string.h — Megatron-Core's --pipeline-model-parallel-layout read as
// Megatron-Core reads it (PipelineParallelLayerLayout): every virtual stage's layers spelled
// out, "E" the embedding, "t" a transformer layer, "m" a multi-token prediction layer, "L" the
// loss, "|" between virtual stages,
// in virtual-stage order (chunk · PP + stage). Commas are cosmetic; "(...)*N" repeats a group
// and "x*N" one character. The step plan turns the stages into each chunk's layers.
#pragma once

#include <string>
#include <vector>

namespace cc {

// What one virtual stage of a layout string holds.
struct LayoutStage {
  int transformer_layers = 0;
  bool embedding = false;
  bool loss = false;
  int mtp_layers = 0;
  bool operator==(const LayoutStage&) const = default;
};

// The virtual stages of `layout`, first to last. Refuses (field --pipeline-model-parallel-layout)
// a character other than E, t, m, L, a string that expands past a million layers, and what
// Megatron-Core refuses whatever the model: the embedding other than once, at the head of the
// first virtual stage; the loss other than once, at the end of the last; a transformer layer
// after an MTP layer. MTP layers are priced on the last stage, beside the loss: placed in any
// other virtual stage (Megatron-Core's standalone MTP stage) they are refused by name.
std::vector<LayoutStage> parse_pipeline_layout(const std::string& layout);

// The virtual stages per rank of a parsed layout: its stage count / PP, which must divide (a
// message starts with `where`).
int layout_virtual_stages(const std::string& layout, const std::vector<LayoutStage>& stages, int pp,
                          const std::string& where);

// Megatron-Core's checks of a parsed layout against the run: the stage count a multiple of PP
// (the quotient is the virtual stages per rank, which must equal `virtual_stages`), `num_layers`
// transformer layers and `mtp_num_layers` MTP layers in all. A stage may hold no transformer layer.
void check_pipeline_layout(const std::string& layout, const std::vector<LayoutStage>& stages, int num_layers,
                           int mtp_num_layers, int pp, int virtual_stages);

}  // namespace cc
