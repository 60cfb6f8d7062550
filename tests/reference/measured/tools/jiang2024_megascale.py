"""Jiang et al., "MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs"
(arXiv 2402.15627v1, 23 Feb 2024; NSDI '24) -> jiang2024_megascale.csv

Only the paper's **Megatron-LM baseline** rows are used (MegaScale's own rows use a parallel
transformer block, sliding-window attention and LAMB: a different model and optimizer).

Transcribed from the paper:
  Sec. 6.1: "Our experiments use the Megatron-LM (commit hash: 285068c8) on Github"; "We use
    interleaved pipeline-parallel schedule with six and three interleaving stages for the 175B
    and 530B models"; "Sequence length is 2,048 and vocabulary size is 64,000 for all the cases".
  Table 1: 175B = 128 heads, hidden 12288, 96 layers, TP 8, PP 8.
  Table 2 (strong scaling, 175B), Megatron-LM rows: batch 768 on 256/512/768/1024 GPUs,
    iteration time 40.0/21.2/15.2/11.9 s (tokens/s 39.3k/74.1k/103.8k/132.7k, MFU
    53.0/49.9/46.7/44.7 %); batch 6144 on 3072/6144/8192/12288 GPUs, 29.02/14.78/12.24/8.57 s
    (433.6k/851.6k/1027.9k/1466.8k tokens/s, MFU 48.7/47.8/43.3/41.2 %).
  Table 3 (ablation, 175B, 256 GPUs, batch 256): "baseline" (original Megatron-LM, networking
    optimizations on) MFU 47.7 %. No time is given; T = F / (MFU * 312e12 * GPUs), with the model
    FLOPs F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) -- the formula that reproduces Table 2's MFU
    column from its times to 0.3 % (checked below), on A100's 312 TFLOP/s BF16 peak.
  Sec. 3.6 / 6: NVIDIA Ampere GPUs, eight 200G NICs per server (RoCE, multi-rail), 3-tier CLOS
    of Tomahawk-4 switches.
Stack: `megatron-2021`. Commit 285068c8 (2023-01-11) predates Megatron-Core's schedules and,
in NVIDIA/Megatron-LM's history, the option to overlap pipeline sends (f9283c5a8a, 2023-05-31;
default on from 4eeff55d1f, 2023-10-12) and --overlap-grad-reduce (2d5220a424, 2023-08-16):
its interleaved sends block and its DP reduction runs after the last backward, as in the
2021-22 papers' Megatron-LM. Flash attention already existed there (d693034ecf, 2022-12-08).
Skipped: Figure 9 (530B weak scaling, bar labels only, and the 530B shape is MT-NLG's, whose
measurements are reserved); the 13B convergence runs (no times).
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema

S, V, L, H, A = 2048, 64000, 96, 12288, 128
TP, PP, VP = 8, 8, 6
# (batch, GPUs, iteration time s, tokens/s, MFU %)  -- Table 2, Megatron-LM rows
TABLE2 = [
    (768, 256, 40.0, 39.3e3, 53.0), (768, 512, 21.2, 74.1e3, 49.9),
    (768, 768, 15.2, 103.8e3, 46.7), (768, 1024, 11.9, 132.7e3, 44.7),
    (6144, 3072, 29.02, 433.6e3, 48.7), (6144, 6144, 14.78, 851.6e3, 47.8),
    (6144, 8192, 12.24, 1027.9e3, 43.3), (6144, 12288, 8.57, 1466.8e3, 41.2),
]
TABLE3_BASELINE = (256, 256, 47.7)  # (batch, GPUs, MFU %)
PEAK = 312e12

ASSUMED = ["cluster", "precision", "attention", "sequence_parallel", "recompute_granularity",
           "micro_batch", "distributed_optimizer"]


def model_flops(B):
    return 72 * B * S * L * H * H * (1 + S / (6 * H) + V / (12 * L * H))


def row(rid, B, n, T, note, extra_assumed=()):
    return dict(
        id=rid, source="jiang2024-megascale", model="gpt-175b-v64k", num_layers=L,
        hidden_size=H, num_attention_heads=A, num_query_groups=A, ffn_hidden_size=4 * H,
        swiglu=0, normalization="layernorm", seq_length=S, vocab_size=V, cluster="dgx-a100-80gb",
        gpus=n, framework="megatron-2021", attention="flash", precision="bf16", tp=TP, pp=PP,
        dp=n // (TP * PP), virtual_stages=VP, first_stage_layers="", last_stage_layers="",
        sequence_parallel=1, recompute_granularity="selective", recompute_method="",
        recompute_num_layers="", micro_batch=1, global_batch=B, distributed_optimizer=1,
        iteration_time_s=f"{T:.4f}", peak_memory_gib="",
        assumed=";".join(ASSUMED + list(extra_assumed)), note=note)


def main(out):
    rows = []
    for B, n, T, tok, mfu in TABLE2:
        # self-checks of the transcription: tokens/s and MFU follow from the time
        assert abs(B * S / T / tok - 1) < 0.01, (n, B * S / T, tok)
        mfu_calc = 100 * model_flops(B) / (T * n * PEAK)
        assert abs(mfu_calc - mfu) < 0.3, (n, mfu_calc, mfu)
        rows.append(row(f"megascale-t2-megatron-{n}", B, n, T,
                        f"Table 2 Megatron-LM baseline (commit 285068c8): {T} s/iteration, "
                        f"{tok/1e3:.1f}k tokens/s, MFU {mfu}%; VP 6 stated"))
    B, n, mfu = TABLE3_BASELINE
    T = model_flops(B) / (mfu / 100 * PEAK * n)
    rows.append(row(f"megascale-t3-megatron-{n}-b{B}", B, n, T,
                    f"Table 3 baseline (original Megatron-LM, networking optimizations on): "
                    f"MFU {mfu}% -> T = 72Bslh^2(1+s/6h+V/12lh)/(MFU*312e12*GPUs)",
                    extra_assumed=["iteration_time_s"]))
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jiang2024_megascale.csv"))
