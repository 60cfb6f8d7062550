"""Peng et al., "FP8-LM: Training FP8 Large Language Models" (Microsoft; arXiv 2310.18313)
-> peng2023_fp8lm.csv

Rows used: Table 5's "BF16" rows (the paper's baseline, "the widely adopted BF16 framework (i.e.,
Megatron-LM)", abstract) and "FP8 (TE)" rows (Megatron-LM with Transformer Engine FP8 GEMMs).
The "FP8 (Ours)" rows are skipped: MS-AMP's FP8 gradients / FP8 optimizer / FP8 ZeRO are not
modelled.

Transcribed from the paper (ar5iv HTML rendering of arXiv 2310.18313):
  Table 1: 7B = hidden 4096, 32 heads, 32 layers, TP 1, PP 1, SP; 13B = 5120/40/40, TP 2, PP 1, SP;
    175B = 12288/96/96, TP 8, PP 4, SP; batch 4M tokens (7B, 13B) and 1M tokens (175B);
    Sec. 3.1.2: sequence length 2048, rotary position embeddings, Flash Attention.
  Table 5 ("System-level performance on Nvidia H100 GPUs 80GB"): TP, PP, DP, micro BS, GPU memory
    (GB), throughput (#samples/s, all GPUs together), TFLOPS, MFU:
      GPT-7B   TP1 PP1 DP32 mbs2: BF16 69.6 GB 159.2 samples/s 445 TFLOPS; FP8 (TE) 77.3 / 224.5 / 627
      GPT-13B  TP2 PP1 DP16 mbs2: BF16 68.2 / 79.3 / 420;  FP8 (TE) 76.4 / 111.7 / 592
      GPT-175B TP8 PP4 DP4  mbs1: BF16 66.1 / 22.4 / 386;  FP8 (TE) 69.6 / 28.7 / 493
    (the table's "Weight-related Comm." = all-gather of weights + reduce-scatter of gradients,
    i.e. a ZeRO-1-style distributed optimizer; Table 7 confirms sequence parallelism).
  Sec. 3.1.2: "The training is conducted on Azure NDv5 H100 GPU platform" (8 x H100 SXM 80GB,
    NVLink 4, 8 x 400 Gb/s InfiniBand per VM).
Conversion: iteration time T = global batch / throughput. Table 5 does not state the global
batch of the throughput runs; Table 1's training batch is assumed (4M tokens = 2048 sequences for
7B/13B, 1M tokens = 512 sequences for 175B), so `global_batch` is in `assumed`. For the DP-only
7B/13B rows the per-sample time hardly depends on it; for 175B (PP 4) it sets the bubble.
Check: TFLOPS = throughput / GPUs x 72 s l h^2 (1 + s/6h + V/12lh) (model FLOPs per sample) is
reproduced to within 2 % (below), so the throughput column is read as all-GPU samples/s.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema

S = 2048
V = 50257   # assumed (GPT-2 BPE, the Megatron-LM GPT default); not stated
# name -> (layers, hidden, heads, tp, pp, dp, mbs, assumed global batch in sequences)
MODELS = {"7b": (32, 4096, 32, 1, 1, 32, 2, 2048),
          "13b": (40, 5120, 40, 2, 1, 16, 2, 2048),
          "175b": (96, 12288, 96, 8, 4, 4, 1, 512)}
# Table 5: (model, precision label, GPU mem GB, samples/s, TFLOPS)
TABLE5 = [("7b", "BF16", 69.6, 159.2, 445), ("7b", "FP8 (TE)", 77.3, 224.5, 627),
          ("13b", "BF16", 68.2, 79.3, 420), ("13b", "FP8 (TE)", 76.4, 111.7, 592),
          ("175b", "BF16", 66.1, 22.4, 386), ("175b", "FP8 (TE)", 69.6, 28.7, 493)]


def flops_per_sample(l, h):
    # 72 B s l h^2 (1 + s/6h + V/12lh) per batch, Narayanan et al. model FLOPs
    return 72 * S * l * h * h * (1 + S / (6 * h) + V / (12 * l * h))


def main(out):
    rows = []
    for model, label, mem, thr, tflops in TABLE5:
        l, h, a, tp, pp, dp, mbs, gb = MODELS[model]
        n = tp * pp * dp
        check = thr * flops_per_sample(l, h) / n / 1e12
        assert abs(check / tflops - 1) < 0.02, (model, label, check, tflops)
        T = gb / thr
        prec = "bf16" if label == "BF16" else "fp8"
        rows.append(dict(
            id=f"fp8lm-t5-{model}-{prec}", source="peng2023-fp8lm", model=f"gpt-{model}-rope",
            num_layers=l, hidden_size=h, num_attention_heads=a, num_query_groups=a,
            ffn_hidden_size=4 * h, swiglu=0, normalization="layernorm", seq_length=S,
            vocab_size=V, cluster="dgx-h100", gpus=n, framework="megatron-core",
            attention="flash", precision=prec, tp=tp, pp=pp, dp=dp, virtual_stages=1,
            first_stage_layers="", last_stage_layers="", sequence_parallel=1 if tp > 1 else 0,
            recompute_granularity="none", recompute_method="", recompute_num_layers="",
            micro_batch=mbs, global_batch=gb, distributed_optimizer=1,
            iteration_time_s=f"{T:.4f}", peak_memory_gib=mem,
            assumed="vocab_size;cluster;recompute_granularity;global_batch;peak_memory_gib",
            note=f"Table 5 {label}: {thr} samples/s on {n} GPUs ({tflops} TFLOPS/GPU) -> "
                 f"T = GBS/throughput with Table 1's batch; memory = Table 5 'GPU Mem. (GB)'"))
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peng2023_fp8lm.csv"))
