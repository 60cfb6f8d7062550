// The layout-file dispatcher, the OmegaConf interpolations, and NeMo YAML: NeMo's own configs
// read as NeMo reads them, and our export inside NeMo's base config and read back unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include <yaml-cpp/yaml.h>

#include "interop/layout_files.h"
#include "interop/omegaconf.h"
#include "sim/json_fields.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;
using layout_test::layout;
using layout_test::reference;
using layout_test::simulated;

TEST(OmegaConf, ReferencesAndTheResolversNemoAndItsLauncherRegister) {
  const interop::OmegaConfTree y(
      "a: 3\n"
      "b:\n"
      "  c: ${multiply:${a}, 4}\n"
      "  d: ${.c}\n"
      "  e: ${..a}\n"
      "  f: ${sum:${.c},-1}\n"
      "  g: ${divide_ceil:7,2}\n"
      "  h: ${divide_floor:7,2}\n"
      "  l: [5, 6]\n"
      "  i: ${b.l.1}\n"
      "  path: ${a}/runs\n"
      "  unused: ${nowhere}\n",
      "t.yaml");
  EXPECT_EQ(y.scalar("b.c"), "12");  // 3 x 4
  EXPECT_EQ(y.scalar("b.d"), "12");  // the sibling c
  EXPECT_EQ(y.scalar("b.e"), "3");   // one level up: the top's a
  EXPECT_EQ(y.scalar("b.f"), "11");  // 12 + (-1)
  EXPECT_EQ(y.scalar("b.g"), "4");   // ceil(3.5)
  EXPECT_EQ(y.scalar("b.h"), "3");   // floor(3.5)
  EXPECT_EQ(y.scalar("b.i"), "6");   // list index 1
  EXPECT_EQ(y.scalar("b.path"), "3/runs");
  EXPECT_EQ(y.scalar("b.missing"), std::nullopt);
  // Resolved when read, as OmegaConf does: b.unused only fails when someone reads it.
  EXPECT_NE(error_of([&] { (void)y.scalar("b.unused"); }).find("'${nowhere}'"), std::string::npos);
}

TEST(OmegaConf, WhatCannotBeResolvedIsRefusedByName) {
  auto read = [](const std::string& text) {
    return error_of([&] { (void)interop::OmegaConfTree(text, "t.yaml").scalar("x"); });
  };
  EXPECT_NE(read("x: ${subtract:3,1}\n").find("resolver 'subtract'"), std::string::npos);
  EXPECT_NE(read("x: ${multiply:3}\n").find("two arguments"), std::string::npos);
  EXPECT_NE(read("x: ${multiply:3,abc}\n").find("'abc'"), std::string::npos);
  EXPECT_NE(read("x: ${.y}\ny: ${.x}\n").find("deeper than"), std::string::npos);
  EXPECT_NE(read("x: ???\n").find("x is ???"), std::string::npos);
  EXPECT_NE(read("x: ${y\n").find("unclosed"), std::string::npos);
  EXPECT_NE(read("x: [1, 2\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(read("x: " + std::string(100, '[') + std::string(100, ']') + "\n").find("nests brackets"),
            std::string::npos);
  EXPECT_NE(read("- a\n- b\n").find("not one"), std::string::npos);
  EXPECT_NE(read("x: ${multiply:99999999999999999999,99999999999999999999}\n").find("beyond the whole numbers"),
            std::string::npos);
  // Each level refers twice to the next: 2^25 lookups within the depth limit, unless the work
  // is bounded.
  std::string doubling = "x: ${l0}${l0}\n";
  for (int i = 0; i < 25; ++i) doubling += fmt::format("l{}: ${{l{}}}${{l{}}}\n", i, i + 1, i + 1);
  doubling += "l25: 1\n";
  EXPECT_NE(read(doubling).find("more than 10000 interpolations"), std::string::npos);
}

TEST(OmegaConf, OneDocumentIsReadAndASecondIsRefusedWhereItBegins) {
  auto x = [](const std::string& text) { return interop::OmegaConfTree(text, "t.yaml").scalar("x"); };
  // Markers that only open or close the one document, and dashes that are not markers.
  EXPECT_EQ(x("# a header\n---\nx: 1\n"), "1");
  EXPECT_EQ(x("%YAML 1.2\n--- # the document\nx: 1\n...\n# trailing notes\n"), "1");
  EXPECT_EQ(x("x: |\n  ---\n  a\ny: ---\n"), "---\na\n");
  EXPECT_EQ(x("x: 1\n----: 2\n"), "1");
  auto error = [](const std::string& text) {
    return error_of([&] { (void)interop::OmegaConfTree(text, "t.yaml"); });
  };
  EXPECT_NE(error("x: 1\n---\nx: 2\n").find("a second YAML document begins after the '---' at line 2"),
            std::string::npos);
  EXPECT_NE(error("x: 1\n--- {x: 2}\n").find("after the '---' at line 2"), std::string::npos);
  EXPECT_NE(error("x: 1\n...\n# notes\ny: 2\n").find("after the '...' at line 2"), std::string::npos);
}

TEST(NemoYaml, TheLaunchersGpt3175bConfigReadsAsNemoRunsIt) {
  const LayoutFile f = read_layout_file(reference("nemo/gpt3_175b.yaml"));
  const ParallelConfig& c = f.config;
  EXPECT_EQ(c.tp, 4);
  EXPECT_EQ(c.pp, 8);
  EXPECT_EQ(c.virtual_stages, 6);
  EXPECT_TRUE(c.sequence_parallel);
  EXPECT_EQ(c.micro_batch, 1);
  EXPECT_EQ(c.global_batch, 2048);
  ASSERT_TRUE(f.gpus);
  EXPECT_EQ(*f.gpus, 1024);  // num_nodes 128 x devices 8
  EXPECT_EQ(c.dp, 32);       // 1024 / (4 x 8)
  EXPECT_TRUE(c.distributed_optimizer);  // mcore_distributed_optim
  EXPECT_TRUE(c.overlap_grad_reduce);
  EXPECT_TRUE(c.overlap_param_gather);
  EXPECT_FALSE(c.tp_comm_overlap);                 // ub_tp_comm_overlap: False
  EXPECT_EQ(c.attention, AttentionKernel::Flash);  // transformer_engine: True
  EXPECT_EQ(c.precision, Precision::BF16);         // trainer.precision: bf16
  ASSERT_TRUE(f.model);
  const ModelSpec& m = *f.model;
  EXPECT_EQ(m.num_layers, 96);
  EXPECT_EQ(m.hidden_size, 12288);
  EXPECT_EQ(m.num_attention_heads, 96);
  EXPECT_EQ(m.num_query_groups, 96);    // num_query_groups: null
  EXPECT_EQ(m.ffn_hidden_size, 49152);  // ${multiply:4, ${.hidden_size}}
  EXPECT_EQ(m.seq_length, 2048);
  // GPT2BPETokenizer: 50257 tokens, padded to a multiple of 128 x TP 4 = 512: 99 x 512.
  EXPECT_EQ(m.vocab_size, 50688);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.dropout);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::Learned);
}

TEST(NemoYaml, NemosBaseConfigReadsWithItsInterpolations) {
  const LayoutFile f = read_layout_file(reference("nemo/megatron_gpt_config.yaml"));
  ASSERT_TRUE(f.model);
  EXPECT_EQ(f.model->num_layers, 12);
  EXPECT_EQ(f.model->hidden_size, 768);
  EXPECT_EQ(f.model->ffn_hidden_size, 3072);
  EXPECT_EQ(f.model->seq_length, 512);  // max_position_embeddings: ${.encoder_seq_length} agrees
  EXPECT_EQ(f.model->vocab_size, 50304);  // 50257 padded to a multiple of 128 x TP 1: 393 x 128
  EXPECT_EQ(f.config.precision, Precision::BF16);
  EXPECT_EQ(f.config.attention, AttentionKernel::Unfused);  // no Transformer Engine, no flash
  EXPECT_FALSE(f.config.distributed_optimizer);             // fused_adam
  EXPECT_EQ(f.gpus, 1);
}

TEST(NemoYaml, KeysUnderModelNotReadAreNamedAMisspeltOneAmongThem) {
  std::ifstream in(reference("nemo/megatron_gpt_config.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\n  hidden_dropout:";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(text.find(key), key.size(), "\n  hiden_dropout:");  // misspelt: the default dropout is used
  const LayoutFile f = parse_layout_text(text, "base.yaml");
  ASSERT_EQ(f.notes.size(), 1u);
  const std::string& note = f.notes[0];
  EXPECT_NE(note.find("base.yaml: keys under model not read"), std::string::npos) << note;
  EXPECT_NE(note.find("hiden_dropout"), std::string::npos) << note;
  EXPECT_NE(note.find("init_method_std"), std::string::npos) << note;  // in the file, and not priced
  for (const char* read : {"num_layers", "hidden_size", "encoder_seq_length", "attention_dropout", "micro_batch_size"})
    EXPECT_EQ(note.find(std::string(" ") + read + ","), std::string::npos) << read << " is read: " << note;
  EXPECT_EQ(note.find("optim"), std::string::npos) << note;  // a mapping: not listed
}

// NeMo takes the vocabulary from the tokenizer: a HuggingFace one named by its Hub repository
// has that repository's (128,256 for Llama 3 and 3.1), padded as Megatron-LM pads it.
TEST(NemoYaml, HuggingFaceTokenizersGiveTheirHubVocabulary) {
  auto read = [](const std::string& name) {
    std::ifstream in(reference(name));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parse_layout_text(text, name);
  };
  const LayoutFile llama3 = read("nemo/llama/llama3_8b.yaml");
  ASSERT_TRUE(llama3.model);
  EXPECT_EQ(llama3.config.tp, 1);
  EXPECT_EQ(llama3.model->vocab_size, 128256);  // 1,002 x 128: no padding at TP 1
  for (const std::string& note : llama3.notes) EXPECT_EQ(note.find("tokenizer"), std::string::npos) << note;
  // Meta's 8.03B (Dubey et al. 2024, Table 3 rounds to 8B; the model card says 8.03B).
  EXPECT_NEAR(static_cast<double>(llama3.model->total_parameters()), 8.03e9, 0.005e9);
  const LayoutFile llama405 = read("nemo/llama/llama3_1_405b.yaml");
  ASSERT_TRUE(llama405.model);
  EXPECT_EQ(llama405.config.tp, 8);
  EXPECT_EQ(llama405.model->vocab_size, 126 * 128 * 8);  // the next multiple of 128 x TP above 128,256
}

TEST(NemoYaml, Layernorm1pIsLayerNorm) {
  std::ifstream in(reference("nemo/megatron_gpt_config.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "  normalization: 'layernorm'";
  ASSERT_NE(text.find(key), std::string::npos);
  const LayoutFile plain = parse_layout_text(text, "base.yaml");
  text.replace(text.find(key), key.size(), "  normalization: 'layernorm1p'");
  const LayoutFile one_p = parse_layout_text(text, "base.yaml");
  ASSERT_TRUE(plain.model && one_p.model);
  EXPECT_EQ(one_p.model->normalization, Normalization::LayerNorm);
  EXPECT_EQ(one_p.model->total_parameters(), plain.model->total_parameters());
}

TEST(NemoYaml, KeysThatChangeTheLayoutUnmodelledAreRefusedByName) {
  std::ifstream in(reference("nemo/megatron_gpt_config.yaml"));
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto refusal = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    EXPECT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
    return error_of([&] { parse_layout_text(text, "base.yaml"); });
  };
  EXPECT_NE(refusal("  fsdp: False", "  fsdp: True").find("base.yaml: model.fsdp true (PyTorch FSDP"),
            std::string::npos);
  EXPECT_NE(refusal("  num_micro_batches_with_partial_activation_checkpoints: null",
                    "  num_micro_batches_with_partial_activation_checkpoints: 4")
                .find("model.num_micro_batches_with_partial_activation_checkpoints 4 (recompute for only some"),
            std::string::npos);
  EXPECT_NE(refusal("  activations_checkpoint_layers_per_pipeline: null",
                    "  activations_checkpoint_layers_per_pipeline: 3")
                .find("model.activations_checkpoint_layers_per_pipeline 3"),
            std::string::npos);
  EXPECT_NE(refusal("  fp32_residual_connection: False", "  fp32_residual_connection: True")
                .find("model.fp32_residual_connection true"),
            std::string::npos);
  EXPECT_NE(refusal("  cpu_offloading: False", "  cpu_offloading: True").find("model.cpu_offloading true"),
            std::string::npos);
  // NeMo's build_transformer_config needs a format beside fp8 (the base config sets fp8_hybrid).
  EXPECT_NE(refusal("  fp8: False # enables fp8 in TransformerLayer forward\n  fp8_e4m3: False # sets fp8_format = "
                    "recipe.Format.E4M3\n  fp8_hybrid: True",
                    "  fp8: True\n  fp8_hybrid: False")
                .find("model.fp8 is true but neither model.fp8_e4m3 nor model.fp8_hybrid is"),
            std::string::npos);
}

// Every key path of a YAML mapping, dotted ("model.optim.name"); list items are values.
void key_paths(const YAML::Node& node, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& kv : node) {
    const std::string path = prefix + kv.first.as<std::string>();
    out.insert(path);
    if (kv.second.IsMap()) key_paths(kv.second, path + ".", out);
  }
}

std::vector<SimResult> exports_to_check() {
  std::vector<SimResult> out;
  ParallelConfig distopt = layout(8, 4, 4, 1, 512);
  distopt.distributed_optimizer = distopt.overlap_grad_reduce = distopt.overlap_param_gather = true;
  distopt.sequence_parallel = distopt.tp_comm_overlap = true;  // NeMo's model.ub_tp_comm_overlap
  out.push_back(simulated(load_model("gpt3-13b"), distopt));
  ParallelConfig fp8 = layout(8, 1, 8, 1, 64);
  fp8.precision = Precision::FP8;
  fp8.attention = AttentionKernel::Flash;
  out.push_back(simulated(load_model("llama3-8b"), fp8, "dgx-h100"));
  ParallelConfig fp32 = layout(8, 2, 1, 1, 8);
  fp32.precision = Precision::FP32;
  fp32.recompute = RecomputeGranularity::Full;
  fp32.recompute_method = RecomputeMethod::Block;
  fp32.recompute_num_layers = 2;
  out.push_back(simulated(load_model("gpt3-1.3b"), fp32));
  // Uneven stages, DP overlap without the distributed optimizer, fp16, selective recompute.
  ParallelConfig uneven = layout(8, 8, 2, 1, 64);
  uneven.first_stage_layers = uneven.last_stage_layers = 6;  // 96 = 6 + 6 x 14 + 6
  uneven.overlap_grad_reduce = true;
  uneven.precision = Precision::FP16;
  uneven.recompute = RecomputeGranularity::Selective;
  out.push_back(simulated(load_model("gpt3-175b"), uneven));
  ParallelConfig bloom = layout(8, 7, 1, 1, 8);  // 70 layers, 10 per stage
  bloom.attention = AttentionKernel::Flash;
  out.push_back(simulated(load_model("bloom-176b"), bloom));  // ALiBi
  // Context parallelism, hierarchical: all-to-all in pairs, a ring of two pairs (CP 4).
  ParallelConfig cp = layout(4, 2, 2, 1, 64);
  cp.cp = 4;
  cp.cp_comm_type = CpCommType::AllToAllP2P;
  cp.cp_a2a_size = 2;
  cp.sequence_parallel = true;
  cp.attention = AttentionKernel::Flash;
  cp.distributed_optimizer = true;
  out.push_back(simulated(load_model("llama3-70b"), cp, "dgx-h100"));
  return out;
}

TEST(NemoYaml, EveryExportedKeyIsInNemosBaseConfig) {
  // A strict merge into megatron_gpt_config.yaml succeeds when every key exists there. The one
  // open mapping is model.optim: NeMo hands its keys (less name and sched) to the optimizer's
  // constructor (ModelPT.setup_optimization), so there the test is the optimizer's keyword
  // arguments: apex's DistributedFusedAdam takes overlap_grad_sync and overlap_param_sync,
  // FusedAdam takes neither.
  std::set<std::string> base;
  key_paths(YAML::LoadFile(reference("nemo/megatron_gpt_config.yaml")), "", base);
  ASSERT_TRUE(base.count("model.fp8") && base.count("trainer.precision"));  // the fixture is the real tree
  const std::map<std::string, std::set<std::string>> optimizer_kwargs = {
      {"distributed_fused_adam", {"overlap_grad_sync", "overlap_param_sync"}}, {"fused_adam", {}}};
  for (const SimResult& r : exports_to_check()) {
    const YAML::Node doc = YAML::Load(nemo_yaml(r, {}));
    std::set<std::string> written;
    key_paths(doc, "", written);
    const std::string optimizer = doc["model"]["optim"]["name"].as<std::string>();
    ASSERT_TRUE(optimizer_kwargs.count(optimizer)) << optimizer;
    for (const std::string& key : written) {
      // Context parallelism's keys are not in the base GPT config: context_parallel_size is a
      // key of NeMo-Framework-Launcher's Llama 3 configs (tests/reference/nemo/llama/), and
      // cp_comm_type and hierarchical_context_parallel_sizes fields of Megatron-Core's configs,
      // which NeMo's build_transformer_config fills from model keys of the same name.
      // rotary_base likewise: a key of the launcher's Mixtral config (tests/reference/nemo/),
      // which NeMo's GPT model reads with cfg.get('rotary_base', 10000).
      if (key == "model.context_parallel_size" || key == "model.cp_comm_type" ||
          key.rfind("model.hierarchical_context_parallel_sizes", 0) == 0 || key == "model.rotary_base")
        continue;
      if (key.rfind("model.optim.", 0) == 0 && key != "model.optim.name") {
        EXPECT_TRUE(optimizer_kwargs.at(optimizer).count(key.substr(12))) << key << " with " << optimizer;
        continue;
      }
      EXPECT_TRUE(base.count(key)) << key << " is not a key of NeMo's megatron_gpt_config.yaml (" << r.model.name
                                   << ")";
    }
  }
}

// NeMo's default mcore_gpt builds Megatron-Core's GPT, whose attention is flash or fused only with
// Transformer Engine's layer spec: a flash prediction exports transformer_engine true, an unfused
// one false (the local spec stores the s x s scores, as priced).
TEST(NemoYaml, FlashAttentionIsExportedAsTransformerEngine) {
  for (const SimResult& r : exports_to_check()) {
    const YAML::Node doc = YAML::Load(nemo_yaml(r, {}));
    EXPECT_EQ(doc["model"]["transformer_engine"].as<bool>(), r.config.attention == AttentionKernel::Flash)
        << r.model.name << " " << r.config.summary();
  }
  const auto results = exports_to_check();
  ASSERT_TRUE(std::any_of(results.begin(), results.end(),
                          [](const SimResult& r) { return r.config.attention == AttentionKernel::Unfused; }));
  ASSERT_TRUE(std::any_of(results.begin(), results.end(), [](const SimResult& r) {
    return r.config.attention == AttentionKernel::Flash && r.config.precision != Precision::FP8;
  }));
}

// NeMo's base config leaves apply_rope_fusion false, so a recipe that does not set it runs
// PyTorch's RoPE kernels and is priced so; NeMo-Framework-Launcher's Llama recipes set it, and the
// fused loss beside it. Every export of a RoPE model states the kernel that was priced.
TEST(NemoYaml, RopeFusionAndTheFusedLossAreReadAndRopeFusionWritten) {
  bool rope_seen = false;
  for (const SimResult& r : exports_to_check()) {
    const YAML::Node doc = YAML::Load(nemo_yaml(r, {}));
    const bool rope = r.model.position_embedding == PositionEmbedding::Rope;
    rope_seen |= rope;
    EXPECT_EQ(doc["model"]["apply_rope_fusion"].IsDefined(), rope) << r.model.name;
    if (rope) {
      EXPECT_EQ(doc["model"]["apply_rope_fusion"].as<bool>(), r.config.rope_fusion) << r.model.name;
    }
  }
  EXPECT_TRUE(rope_seen);
  const std::string rope_model =
      "model:\n  num_layers: 2\n  hidden_size: 512\n  num_attention_heads: 8\n  encoder_seq_length: 1024\n"
      "  max_position_embeddings: 1024\n  position_embedding_type: rope\n  tokenizer:\n    type: GPT2BPETokenizer\n";
  EXPECT_FALSE(parse_layout_text(rope_model, "n.yaml").config.rope_fusion);
  EXPECT_TRUE(parse_layout_text(rope_model + "  apply_rope_fusion: true\n", "n.yaml").config.rope_fusion);
  const LayoutFile llama = read_layout_file(reference("nemo/llama/llama3_1_70b.yaml"));
  EXPECT_TRUE(llama.config.rope_fusion);
  EXPECT_TRUE(llama.config.cross_entropy_fusion);
  EXPECT_FALSE(read_layout_file(reference("nemo/gpt3_175b.yaml")).config.cross_entropy_fusion);
}

// NeMo-Framework-Launcher's Mixtral recipe reduces gradients in bf16 (mcore_distributed_optim with
// grad_sync_dtype bf16): read as --grad-reduce-in-bf16.
TEST(NemoYaml, ADistributedOptimizersGradSyncDtypeIsTheGradientReduction) {
  const LayoutFile mixtral = read_layout_file(reference("nemo/mixtral_8x7b.yaml"));
  EXPECT_TRUE(mixtral.config.distributed_optimizer);
  EXPECT_TRUE(mixtral.config.grad_reduce_in_bf16);
  EXPECT_FALSE(read_layout_file(reference("nemo/llama/llama3_8b.yaml")).config.grad_reduce_in_bf16);
}

TEST(NemoYaml, PrecisionIsWrittenInNemosOwnKeys) {
  const auto results = exports_to_check();
  const YAML::Node fp8 = YAML::Load(nemo_yaml(results[1], {}));
  EXPECT_EQ(fp8["trainer"]["precision"].as<std::string>(), "bf16-mixed");
  EXPECT_TRUE(fp8["model"]["fp8"].as<bool>());
  EXPECT_TRUE(fp8["model"]["fp8_hybrid"].as<bool>());
  EXPECT_FALSE(fp8["model"]["fp8_e4m3"].as<bool>());
  EXPECT_TRUE(fp8["model"]["transformer_engine"].as<bool>());  // NeMo's FP8 runs in Transformer Engine
  const YAML::Node fp32 = YAML::Load(nemo_yaml(results[2], {}));
  EXPECT_EQ(fp32["trainer"]["precision"].as<int>(), 32);
  EXPECT_FALSE(fp32["model"]["fp8"].as<bool>());
  const YAML::Node fp16 = YAML::Load(nemo_yaml(results[3], {}));
  EXPECT_EQ(fp16["trainer"]["precision"].as<std::string>(), "16-mixed");
  // fused_adam rejects unknown keyword arguments: no overlap keys beside it.
  EXPECT_EQ(fp16["model"]["optim"]["name"].as<std::string>(), "fused_adam");
  EXPECT_FALSE(fp16["model"]["optim"]["overlap_grad_sync"]);
  EXPECT_FALSE(fp16["model"]["vocab_size"]);
}

TEST(NemoYaml, TheExportReadsBackAsTheLayoutThatWasSimulated) {
  for (const SimResult& r : exports_to_check()) {
    const LayoutFile back = parse_layout_text(nemo_yaml(r, {}), "export of " + r.model.name);
    ASSERT_TRUE(back.model) << r.model.name;
    EXPECT_EQ(model_to_json(*back.model).dump(), model_to_json([&] {
                ModelSpec m = r.model;
                m.name = back.model->name;  // the name is not a NeMo key
                return m;
              }())
                                                    .dump());
    ParallelConfig expected = r.config;
    expected.framework = back.config.framework;  // the stack is not a NeMo key
    EXPECT_EQ(config_to_json(back.config).dump(), config_to_json(expected).dump()) << r.model.name;
    EXPECT_EQ(back.gpus, r.config.gpus());
    EXPECT_TRUE(back.notes.empty()) << back.notes.front();
  }
}

TEST(LayoutFiles, TheFormatComesFromTheContent) {
  EXPECT_NE(error_of([] { parse_layout_text("  \n", "x"); }).find("x is empty"), std::string::npos);
  EXPECT_NE(error_of([] { parse_layout_text("#!/bin/bash\ntorchrun pretrain_gpt.py\n", "x"); })
                .find("is a shell script"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_layout_text("hello world\n", "x"); }).find("not a clustercast JSON layout"),
            std::string::npos);
  EXPECT_EQ(parse_layout_text("--tensor-model-parallel-size 4\n", "x").config.tp, 4);
  EXPECT_EQ(parse_layout_text("model:\n  tensor_model_parallel_size: 2\n", "x").config.tp, 2);
}

}  // namespace
}  // namespace cc
