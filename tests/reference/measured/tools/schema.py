"""Shared schema for the measured-run corpus (tests/reference/measured/*.csv)."""
import csv

COLUMNS = ("id,source,model,num_layers,hidden_size,num_attention_heads,num_query_groups,"
           "ffn_hidden_size,swiglu,normalization,seq_length,vocab_size,cluster,gpus,framework,"
           "attention,precision,tp,cp,cp_comm_type,pp,dp,virtual_stages,pipeline_layout,first_stage_layers,last_stage_layers,"
           "sequence_parallel,recompute_granularity,recompute_method,recompute_num_layers,"
           "micro_batch,global_batch,distributed_optimizer,overlap_grad_reduce,overlap_param_gather,"
           "tp_comm_overlap,iteration_time_s,peak_memory_gib,position_embedding,untie_embeddings,"
           "add_bias_linear,distributed_optimizer_instances,cross_entropy_loss_fusion,apply_rope_fusion,"
           "assumed,note").split(",")
# Architecture a run states (Megatron-LM's --position-embedding-type learned_absolute|rope,
# --untie-embeddings-and-output-weights 1/0, --disable-bias-linear as add_bias_linear 0/1), or
# leaves empty for the reader's rule: a Llama-style row (SwiGLU with RMSNorm) RoPE, untied and
# without biases, any other learned positions, tied and with biases.
ARCHITECTURE_COLUMNS = ("position_embedding", "untie_embeddings", "add_bias_linear")
# Speed flags a run states (1/0) or leaves to its stack's default (empty): Megatron-LM's
# --overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap.
OVERLAP_COLUMNS = ("overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap")
# Megatron-LM's --num-distributed-optimizer-instances where a run sets it above 1 (the partial
# distributed optimizer); empty: one instance.
# Kernel fusions a run states (1/0) or leaves to Megatron-LM's defaults (empty): the fused
# cross-entropy loss (--cross-entropy-loss-fusion; default off) and RoPE's fused kernel (off:
# --no-rope-fusion; default on).
FUSION_COLUMNS = ("cross_entropy_loss_fusion", "apply_rope_fusion")

# Context parallelism: CP ranks each hold 1/CP of every sequence; how they exchange keys and
# values is Megatron-LM's --cp-comm-type (its default p2p; the type of a CP 1 run is moot).
CP_COMM_TYPES = ("p2p", "a2a", "allgather", "a2a+p2p")

CLUSTERS = {"dgx-a100-40gb", "dgx-a100-80gb", "azure-nd-a100-v4", "dgx-h100", "h200"}
FRAMEWORKS = {"megatron-2021", "megatron-2022", "megatron-core", "megatron-core-ci", "nemo", "megatron-deepspeed"}


def check(row):
    for c in OVERLAP_COLUMNS:
        row.setdefault(c, "")
        assert str(row[c]) in ("", "0", "1"), (row["id"], c, row[c])
    for c in ARCHITECTURE_COLUMNS:
        row.setdefault(c, "")
    assert row["position_embedding"] in ("", "learned_absolute", "rope"), (row["id"], row["position_embedding"])
    assert str(row["untie_embeddings"]) in ("", "0", "1"), (row["id"], row["untie_embeddings"])
    assert str(row["add_bias_linear"]) in ("", "0", "1"), (row["id"], row["add_bias_linear"])
    row.setdefault("distributed_optimizer_instances", "")
    n = str(row["distributed_optimizer_instances"])
    assert n == "" or (n.isdigit() and int(n) > 1 and row["distributed_optimizer"] in (1, "1")), (row["id"], n)
    for c in FUSION_COLUMNS:
        row.setdefault(c, "")
        assert str(row[c]) in ("", "0", "1"), (row["id"], c, row[c])
    row.setdefault("pipeline_layout", "")
    row.setdefault("cp", 1)
    row.setdefault("cp_comm_type", "p2p")
    assert row["cp_comm_type"] in CP_COMM_TYPES, (row["id"], row["cp_comm_type"])
    missing = [c for c in COLUMNS if c not in row]
    assert not missing, missing
    assert row["cluster"] in CLUSTERS, row["cluster"]
    assert row["framework"] in FRAMEWORKS, row["framework"]
    assert row["attention"] in ("unfused", "flash")
    assert row["precision"] in ("bf16", "fp16", "fp8", "fp32")
    assert row["normalization"] in ("layernorm", "rmsnorm")
    assert row["recompute_granularity"] in ("none", "selective", "full")
    assert row["recompute_method"] in ("", "uniform", "block")
    tp, cp, pp, dp = int(row["tp"]), int(row["cp"]), int(row["pp"]), int(row["dp"])
    assert tp * cp * pp * dp == int(row["gpus"]), (row["id"], tp, cp, pp, dp, row["gpus"])
    mb, gb = int(row["micro_batch"]), int(row["global_batch"])
    assert gb % (mb * dp) == 0, (row["id"], mb, gb, dp)
    assert float(row["iteration_time_s"]) > 0
    for c in row["assumed"].split(";"):
        assert c == "" or c in COLUMNS, c


def write(path, rows, columns=COLUMNS, check_row=check):
    """Checks every row (ids unique) and writes the CSV; schema_moe.py passes its own columns and check."""
    ids = set()
    for r in rows:
        check_row(r)
        assert r["id"] not in ids, r["id"]
        ids.add(r["id"])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r[c] for c in columns})
    print(f"wrote {len(rows)} rows to {path}")


def gpt_flops_per_iter(B, s, l, h, V, recompute_full):
    """Narayanan et al. 2021 eq. 3 (with recompute, 96) or the model-FLOPs form (72)."""
    if recompute_full:
        return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
