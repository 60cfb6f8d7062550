"""Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness"
(NeurIPS 2022, arXiv 2205.14135) -> dao2022_flashattention.csv

Rows: the two **Megatron-LM** baselines of Table 2 (GPT-2 small and GPT-2 medium on OpenWebText,
"Training time reported on 8xA100s GPUs"): 4.7 days and 11.5 days. (The Huggingface and
FlashAttention rows are not Megatron; Table 4's Megatron-LM row is the same GPT-2 small run.)
Appendix E.2: "We use the standard implementations of GPT-2 ... from Nvidia's Megatron-LM repo.
We follow the training recipe of the Megatron-LM repo. We use an effective batch size of 512, and
use gradient accumulation to fit into available GPU memory. ... All models are trained with the
same hyperparameters for 400K steps. We run all implementations with mixed-precision training ...
GPT-2 BPE tokenizer ... We train the model on 8 x A100-40GB GPUs, and we measure the wall-clock
training time."
Shapes: GPT-2 small = 12 layers, hidden 768, 12 heads; GPT-2 medium = 24 layers, hidden 1024,
16 heads; context 1024 (Table 4: the Megatron-LM baseline runs GPT-2 small at 1K context).

Conversion: iteration time = wall-clock days x 86400 / 400,000 steps. The wall clock includes
evaluation (the Megatron recipe evaluates 10 iterations every 1,000: ~0.3 %), checkpoint saves
and start-up; "4.7" / "11.5" days carry +-1 % / +-0.4 % rounding.
Assumed (the paper does not give them): the layout (8-way data parallel, TP = PP = 1), micro
batch 8 and full activation recompute (uniform, 1 layer) -- both from the Megatron-LM recipe the
paper says it follows, examples/pretrain_gpt_distributed.sh at NVIDIA/Megatron-LM commit
00129014dc4bf02c16a9271544265b3146ae5164 (last commit before 2022-05-01: --micro-batch-size 8,
--activations-checkpoint-method uniform, --fp16, --eval-interval 1000, --eval-iters 10) --
fp16, and the server (DGX A100 40GB preset). attention = unfused: Megatron-LM of 2022 had no
flash attention (added Jan 2023).
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema

S, V, GB, STEPS, GPUS = 1024, 50257, 512, 400_000, 8
TABLE2 = [("gpt2-small", 12, 768, 12, 4.7), ("gpt2-medium", 24, 1024, 16, 11.5)]


def main(out):
    rows = []
    for name, l, h, a, days in TABLE2:
        T = days * 86400 / STEPS
        rows.append(dict(
            id=f"flashattn-t2-megatron-{name}", source="dao2022-flashattention", model=name,
            num_layers=l, hidden_size=h, num_attention_heads=a, num_query_groups=a,
            ffn_hidden_size=4 * h, swiglu=0, normalization="layernorm", seq_length=S,
            vocab_size=V, cluster="dgx-a100-40gb", gpus=GPUS, framework="megatron-2021",
            attention="unfused", precision="fp16", tp=1, pp=1, dp=GPUS, virtual_stages=1,
            first_stage_layers="", last_stage_layers="", sequence_parallel=0,
            recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1,
            micro_batch=8, global_batch=GB, distributed_optimizer=0,
            iteration_time_s=f"{T:.4f}", peak_memory_gib="",
            assumed="cluster;precision;tp;pp;dp;micro_batch;recompute_granularity;"
                    "recompute_method;recompute_num_layers",
            note=f"Table 2 Megatron-LM: {days} days for 400K steps of 512x1024 tokens on "
                 f"8xA100-40GB (wall clock incl. eval/checkpoints); mb/recompute from the "
                 f"Megatron-LM GPT recipe of 2022"))
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dao2022_flashattention.csv"))
