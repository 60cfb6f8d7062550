"""Megatron-LM README, H100 weak-scaling table (Megatron-Core, 2024) -> megatron_readme_h100.csv

Source: NVIDIA/Megatron-LM commit f2e5db402c44ae309aa6448bcb4ae87e8ae0f5f4 (2024-07-15,
"New scaling figures on H100 GPUs"): README.md section "Training Speed and Scalability" and the
table image it shows, images/model_table.png (unchanged up to mirror HEAD
d98e8a64ddf34856e74b24714e3bedb2f5a39553). The numbers below were transcribed by reading that
PNG (columns: model size, attention heads, hidden size, layers, tensor MP size, pipeline MP size,
data-parallel size, GPUs, batch size, per-GPU teraFLOP/s, MFU, aggregate petaFLOP/s); the
script checks each row's internal consistency (aggregate = per-GPU x GPUs, MFU = per-GPU / 989,
TP x PP x DP = GPUs, 12 l h^2 + 2 V h = the model size within 3 %).
README text: "All models use a vocabulary size of 131,072 and a sequence length of 4096 ... Our
experiments use up to 6144 H100 GPUs. We perform fine-grained overlapping of data-parallel
(--overlap-grad-reduce --overlap-param-gather), tensor-parallel (--tp-comm-overlap) and
pipeline-parallel communication ... The reported throughputs are measured for end-to-end
training and include all operations including data loading, optimizer steps, communication, and
even logging." The strong-scaling figure next to it is labelled "Megatron-Core r0.8.0" (it is a
plot without numbers and is not used).
Implied by the flags: --overlap-param-gather needs the distributed optimizer; --tp-comm-overlap
needs sequence parallelism (both on, stated by implication). The parameter counts (e.g. 1.7B =
12 l h^2 + 2 V h) imply untied input/output embeddings (no column for that).

Conversion: T = F / (GPUs x per-GPU FLOP/s), with F = Megatron-LM's own
num_floating_point_operations (megatron/training/training.py at f2e5db402c) for an MHA,
non-gated, ffn = 4h model: 12 B s l h^2 (2 + s/h + 4 + V/(2 l h)) = 72 B s l h^2 (1 + s/6h +
V/12lh). (A SwiGLU model with ffn = 8h/3 gives the same count, so T does not depend on that
assumption.) Per-GPU teraFLOP/s has 4 significant digits.
Assumed: bf16 (MFU column = per-GPU / 989 TFLOP/s, the H100 BF16 dense peak), micro batch 1
(batch / DP = 4 x PP in every row), no interleaving (VP not stated), no recompute, flash (TE)
attention, GeLU ffn = 4h, LayerNorm, the DGX H100 preset.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema

S, V = 4096, 131072
PEAK = 989.0
# (size, heads, hidden, layers, TP, PP, DP, GPUs, batch, TFLOP/s/GPU, MFU %, aggregate PFLOP/s)
TABLE = [
    ("1.7b", 16, 2048, 24, 1, 1, 48, 48, 192, 408.8, 41, 19.6),
    ("7.1b", 32, 4096, 30, 2, 1, 48, 96, 192, 465.9, 47, 44.7),
    ("16b", 48, 6144, 32, 4, 1, 48, 192, 192, 489.1, 49, 93.9),
    ("32b", 56, 7168, 48, 8, 1, 48, 384, 192, 459.6, 46, 176.5),
    ("70b", 64, 8192, 84, 8, 2, 48, 768, 384, 419.7, 42, 322.3),
    ("119b", 80, 10240, 92, 8, 4, 48, 1536, 768, 420.5, 43, 645.9),
    ("177b", 96, 12288, 96, 8, 6, 48, 2304, 1152, 432.8, 44, 997.2),
    ("314b", 128, 16384, 96, 8, 8, 48, 3072, 1536, 474.4, 48, 1457.4),
    ("462b", 144, 18432, 112, 8, 16, 48, 6144, 3072, 459.9, 47, 2825.6),
]


def megatron_flops(B, l, h):
    return 12 * B * S * l * h * h * (2 + S / h + 4 + V / (2 * l * h))


def main(out):
    rows = []
    for size, a, h, l, tp, pp, dp, n, B, x, mfu, agg in TABLE:
        assert tp * pp * dp == n
        assert abs(x * n / 1000 - agg) < 0.15, (size, x * n / 1000, agg)
        assert abs(100 * x / PEAK - mfu) < 0.6, (size, 100 * x / PEAK, mfu)
        assert l % pp == 0 and B % dp == 0
        params = 12 * l * h * h + 2 * V * h          # checks layers/hidden against "size"
        assert abs(params / (float(size[:-1]) * 1e9) - 1) < 0.03, (size, params)
        T = megatron_flops(B, l, h) / (n * x * 1e12)
        rows.append(dict(
            id=f"mcore-readme-h100-{size}-{n}", source="megatron-lm-readme-h100",
            model=f"gpt-{size}-v131k", num_layers=l, hidden_size=h, num_attention_heads=a,
            num_query_groups=a, ffn_hidden_size=4 * h, swiglu=0, normalization="layernorm",
            seq_length=S, vocab_size=V, cluster="dgx-h100", gpus=n, framework="megatron-core",
            attention="flash", precision="bf16", tp=tp, pp=pp, dp=dp, virtual_stages=1,
            first_stage_layers="", last_stage_layers="", sequence_parallel=1 if tp > 1 else 0,
            recompute_granularity="none", recompute_method="", recompute_num_layers="",
            micro_batch=1, global_batch=B, distributed_optimizer=1,
            overlap_grad_reduce=1, overlap_param_gather=1, tp_comm_overlap=1 if tp > 1 else 0,
            iteration_time_s=f"{T:.4f}", peak_memory_gib="",
            assumed="cluster;precision;attention;ffn_hidden_size;swiglu;normalization;"
                    "micro_batch;virtual_stages;recompute_granularity",
            note=f"README model_table.png: {x} TFLOP/s/GPU ({mfu}% MFU) -> T = Megatron "
                 f"num_floating_point_operations / (GPUs*X); overlap grad-reduce/param-gather/"
                 f"tp-comm on; untied embeddings"))
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "megatron_readme_h100.csv"))
