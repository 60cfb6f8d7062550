"""Megatron-LM README, "GPT-3 Example" (NVIDIA, January 2021) -> megatron_readme_2021.csv

Source: NVIDIA/Megatron-LM commit 152aab304d4eabe4f992def6296156642e11c28d (2021-01-11,
"Readme update + change gpt2 to gpt"), README.md section "GPT-3 Example":
  "We have provided an example of how to configure Megatron to run GPT-3 with 175 billion
  parameters on 1024 GPUs. ... It uses 8-way and 16-way tensor and pipeline parallelism ...
  With full global batch size of 1536 on 1024 A100 GPUs, each iteration takes around 32 seconds
  resulting in 138 teraFLOPs per GPU which is 44% of the theoretical peak FLOPs."
The launch script it names, examples/pretrain_gpt3_175B.sh at the same commit: TP 8, PP 16,
96 layers, hidden 12288, 96 heads, seq 2048, micro batch 1, global batch 1536 (after a ramp-up
from 16), --fp16, --checkpoint-activations (full recompute, 1 layer per checkpoint by default),
GPT-2 BPE vocab (50,257, padded by Megatron to a multiple of 128 x TP = 51,200), no interleaving
(not yet in Megatron-LM), container nvcr.io/nvidia/pytorch:20.12-py3, 128 nodes x 8 GPUs.
(The text is unchanged in the README until commit cde92b27ac of 2025-08-14.)

Time: the stated "around 32 seconds". Check: Narayanan et al.'s eq. (3) with recompute,
F = 96 B s l h^2 (1 + s/6h + V/16lh) with V = 51,200, at 138 TFLOP/s on 1024 GPUs gives 31.9 s.
One row: A100 (memory size not stated -> dgx-a100-80gb, `cluster` assumed), DP = 8.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema

L, H, A, S, V = 96, 12288, 96, 2048, 51200
TP, PP, GPUS, GB, MB = 8, 16, 1024, 1536, 1
T_STATED, TFLOPS = 32.0, 138


def main(out):
    F = schema.gpt_flops_per_iter(GB, S, L, H, V, recompute_full=True)
    T_check = F / (GPUS * TFLOPS * 1e12)
    assert abs(T_check / T_STATED - 1) < 0.02, T_check
    rows = [dict(
        id="megatron-readme-2021-gpt3-175b-1024", source="megatron-lm-readme-2021",
        model="gpt3-175b", num_layers=L, hidden_size=H, num_attention_heads=A,
        num_query_groups=A, ffn_hidden_size=4 * H, swiglu=0, normalization="layernorm",
        seq_length=S, vocab_size=V, cluster="dgx-a100-80gb", gpus=GPUS,
        framework="megatron-2021", attention="unfused", precision="fp16", tp=TP, pp=PP,
        dp=GPUS // (TP * PP), virtual_stages=1, first_stage_layers="", last_stage_layers="",
        sequence_parallel=0, recompute_granularity="full", recompute_method="uniform",
        recompute_num_layers=1, micro_batch=MB, global_batch=GB, distributed_optimizer=0,
        iteration_time_s=f"{T_STATED:.4f}", peak_memory_gib="", assumed="cluster",
        note=f"README 'around 32 seconds' per iteration, 138 TFLOP/s/GPU (eq.3 gives "
             f"{T_check:.1f} s); examples/pretrain_gpt3_175B.sh at 152aab30")]
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "megatron_readme_2021.csv"))
