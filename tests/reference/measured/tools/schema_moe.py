"""Schema of the mixture-of-experts measured runs (tests/reference/measured/moe/*.csv).

The dense corpus's columns (schema.COLUMNS, same meaning) followed by the MoE columns below, in
Megatron-LM's argument names where one exists. The folder is staged data: the corpus loader
(tests/accuracy/corpus.cpp) reads only *.csv directly in measured/ and measured/excluded/.
"""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

MOE_COLUMNS = (
    # head dimension (Megatron's --kv-channels) where it is not hidden / heads; empty otherwise
    "kv_channels,"
    # --num-experts, --moe-router-topk, --moe-ffn-hidden-size
    "num_experts,router_topk,moe_ffn_hidden_size,"
    # --moe-shared-expert-intermediate-size (all shared experts together; empty = none)
    "shared_expert_ffn_hidden_size,"
    # --moe-layer-freq as the run wrote it (an integer N: every N-th layer; or a Python list
    # expression such as ([0]*3+[1]*58)); first_dense_layers: leading dense layers it implies
    "moe_layer_freq,first_dense_layers,"
    # --expert-model-parallel-size, --expert-tensor-parallel-size
    "ep,etp,"
    # --moe-token-dispatcher-type (allgather, alltoall, flex), --moe-grouped-gemm (1/0)
    "token_dispatcher,grouped_gemm,"
    # --moe-expert-capacity-factor (empty = dropless), --moe-pad-expert-input-to-capacity (1/0)
    "capacity_factor,pad_to_capacity,"
    # --moe-router-score-function (softmax, sigmoid), --moe-router-load-balancing-type
    "router_score_function,router_load_balancing,"
    # --multi-latent-attention (1/0) and its shape: --q-lora-rank (empty = no q compression),
    # --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim, --v-head-dim
    "multi_latent_attention,q_lora_rank,kv_lora_rank,qk_head_dim,qk_pos_emb_head_dim,v_head_dim,"
    # --mtp-num-layers (0 = none)
    "mtp_num_layers,"
    # --fp8-recipe for fp8 rows (delayed, tensorwise, blockwise, mxfp8; empty when not fp8 or unstated)
    "fp8_recipe,"
    # --overlap-moe-expert-parallel-comm, --moe-shared-expert-overlap (1/0, empty = stack default)
    "overlap_moe_expert_parallel_comm,moe_shared_expert_overlap,"
    # 'mem-allocated-bytes' after warm-up (GiB) where the source logs it: weights, gradients and
    # optimizer state resident between steps, the static part of the peak
    "allocated_memory_gib,"
    # what this run uses that a Megatron-Core GPT-MoE model does not say by its shape and
    # layout (e.g. dualpipe, sliding-window, cuda-graphs, muon): ';'-separated, from FEATURES
    "features").split(",")
COLUMNS = schema.COLUMNS[:-2] + MOE_COLUMNS + schema.COLUMNS[-2:]  # assumed, note stay last

# Presets the MoE hardware work adds (traces/presets/clusters/, issue 31 item 7) beside the dense ones.
CLUSTERS = schema.CLUSTERS | {"dgx-b200", "gb200-nvl72", "h800"}
# DeepSeek's own HAI-LLM (DeepSeek-V3 report, section 3.2) and ByteDance's MegaScale-MoE.
FRAMEWORKS = schema.FRAMEWORKS | {"hai-llm", "megascale-moe"}
DISPATCHERS = ("allgather", "alltoall", "flex", "")
FP8_RECIPES = ("delayed", "tensorwise", "blockwise", "mxfp8", "")
FEATURES = {
    "dualpipe": "DeepSeek's DualPipe schedule (bidirectional, compute/all-to-all overlap)",
    "sliding-window": "sliding-window attention in some layers (gpt-oss alternates 128-token windows)",
    "attention-sinks": "learned attention-sink logits (gpt-oss)",
    "cuda-graphs": "CUDA graphs capture part of the step (host launch cost removed)",
    "fine-grained-offloading": "activations offloaded to host memory per module",
    "muon": "Muon optimizer instead of Adam (different optimizer state and step cost)",
    "distributed-optimizer-instances": "the distributed optimizer replicated over several instances "
    "(--num-distributed-optimizer-instances > 1): its state sharded over DP / instances",
    "nvfp4": "NVFP4 precision",
    "fp8-blockwise": "FP8 with 128x128 block scaling (DeepSeek-V3, Megatron --fp8-recipe blockwise)",
    "mxfp8": "MXFP8 (Blackwell microscaling FP8)",
    "deepep": "DeepEP kernels for dispatch/combine (Megatron's flex dispatcher)",
    "hybridep": "HybridEP kernels for dispatch/combine (flex dispatcher on NVL72)",
    "expert-bias": "aux-loss-free load balancing by expert bias (sigmoid router)",
    "group-limited-routing": "node/group-limited top-k routing (--moe-router-num-groups / --moe-router-group-topk)",
    "selective-recompute-modules": "recompute of named modules (--recompute-modules), not Megatron's attention-only selective",
    "moe-a2a-overlap": "dispatch/combine overlapped with another microbatch's compute (--overlap-moe-expert-parallel-comm)",
    "force-balanced-routing": "routing forced to a uniform token split (benchmark mode: load imbalance 1.0)",
    "frozen-weights": "some weights frozen (no gradients or optimizer state for them)",
    "qk-layernorm": "normalisation of q and k",
    "token-drop": "token dropping with a capacity factor",
}


def check(row):
    for c in schema.OVERLAP_COLUMNS + ("overlap_moe_expert_parallel_comm", "moe_shared_expert_overlap"):
        row.setdefault(c, "")
        assert str(row[c]) in ("", "0", "1"), (row["id"], c, row[c])
    for c, v in (("pipeline_layout", ""), ("cp", 1), ("cp_comm_type", "p2p"), ("kv_channels", ""),
                 ("shared_expert_ffn_hidden_size", ""), ("moe_layer_freq", "1"),
                 ("first_dense_layers", 0), ("etp", row.get("tp", 1)), ("capacity_factor", ""),
                 ("pad_to_capacity", 0), ("router_score_function", "softmax"),
                 ("router_load_balancing", "aux_loss"), ("multi_latent_attention", 0),
                 ("q_lora_rank", ""), ("kv_lora_rank", ""), ("qk_head_dim", ""),
                 ("qk_pos_emb_head_dim", ""), ("v_head_dim", ""), ("mtp_num_layers", 0),
                 ("fp8_recipe", ""), ("allocated_memory_gib", ""), ("features", "")):
        row.setdefault(c, v)
    missing = [c for c in COLUMNS if c not in row]
    assert not missing, (row.get("id"), missing)
    rid = row["id"]
    assert row["cluster"] in CLUSTERS, (rid, row["cluster"])
    assert row["framework"] in FRAMEWORKS, (rid, row["framework"])
    assert row["attention"] in ("unfused", "flash"), rid
    assert row["precision"] in ("bf16", "fp16", "fp8", "fp32", "fp4"), (rid, row["precision"])
    assert row["fp8_recipe"] in FP8_RECIPES, (rid, row["fp8_recipe"])
    assert row["fp8_recipe"] == "" or row["precision"] == "fp8", rid
    assert row["normalization"] in ("layernorm", "rmsnorm"), rid
    assert row["recompute_granularity"] in ("none", "selective", "full"), rid
    assert row["recompute_method"] in ("", "uniform", "block"), rid
    assert row["cp_comm_type"] in schema.CP_COMM_TYPES, rid
    assert row["token_dispatcher"] in DISPATCHERS, (rid, row["token_dispatcher"])
    assert row["router_score_function"] in ("softmax", "sigmoid"), rid
    tp, cp, pp, dp = (int(row[c]) for c in ("tp", "cp", "pp", "dp"))
    assert tp * cp * pp * dp == int(row["gpus"]), (rid, tp, cp, pp, dp, row["gpus"])
    mb, gb = int(row["micro_batch"]), int(row["global_batch"])
    assert gb % (mb * dp) == 0, (rid, mb, gb, dp)
    experts, topk = int(row["num_experts"]), int(row["router_topk"])
    ep, etp = int(row["ep"]), int(row["etp"])
    assert 1 <= topk <= experts, (rid, topk, experts)
    assert experts % ep == 0, (rid, "EP must divide the experts", ep, experts)
    # Megatron-Core's folding: the expert grid etp x ep x edp fills the ranks of one pipeline stage.
    assert (tp * cp * dp) % (ep * etp) == 0, (rid, "EP x ETP must divide TP x CP x DP", ep, etp)
    if row["capacity_factor"] != "":
        assert float(row["capacity_factor"]) > 0, rid
    assert float(row["iteration_time_s"]) > 0, rid
    for f in filter(None, row["features"].split(";")):
        assert f in FEATURES, (rid, f)
    for c in row["assumed"].split(";"):
        assert c == "" or c in COLUMNS, (rid, c)


def write(path, rows):
    schema.write(path, rows, COLUMNS, check)
