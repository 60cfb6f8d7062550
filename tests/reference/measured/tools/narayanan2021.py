"""Narayanan et al. 2021, arXiv 2104.04473, Table 1 (weak scaling) -> narayanan2021_table1.csv

Table 1 values (heads, hidden, layers, t, p, GPUs, batch, achieved teraFLOP/s per GPU) are
transcribed from the paper.  Micro batch, recompute and interleaving come from the paper's own
launch script for this table: NVIDIA/Megatron-LM
examples/academic_paper_scripts/sc21/run_table_1.sh (+ CONFIG.sh: seq 2048, --fp16) at commit
f2e72c8a16124dc98af19a2cfe36ba8fac5758df (last commit touching the file; mirror HEAD
d98e8a64ddf34856e74b24714e3bedb2f5a39553).
Iteration time = F / (GPUs * X), F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (paper eq. 3,
which counts the recompute forward pass; every Table 1 run uses full recompute).
"""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

S, V = 2048, 51200
# params(B), heads, hidden, layers, t, p, gpus, batch, TFLOP/s per GPU  (Table 1)
TABLE1 = [
    ("1.7", 24, 2304, 24, 1, 1, 32, 512, 137),
    ("3.6", 32, 3072, 30, 2, 1, 64, 512, 138),
    ("7.5", 32, 4096, 36, 4, 1, 128, 512, 142),
    ("18.4", 48, 6144, 40, 8, 1, 256, 1024, 135),
    ("39.1", 64, 8192, 48, 8, 2, 512, 1536, 138),
    ("76.1", 80, 10240, 60, 8, 4, 1024, 1792, 140),
    ("145.6", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    ("310.1", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    ("529.6", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    ("1008.0", 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
# run_table_1.sh: MBS, DDP impl, --num-layers-per-virtual-pipeline-stage (None = not interleaved)
SCRIPT = {
    "1.7": (16, "torch", None), "3.6": (16, "torch", None), "7.5": (16, "torch", None),
    "18.4": (8, "torch", None), "39.1": (4, "local", None), "76.1": (2, "local", 5),
    "145.6": (2, "local", 5), "310.1": (1, "local", 3), "529.6": (1, "local", 1),
    "1008.0": (1, "local", None),
}


def main(out):
    rows = []
    for params, a, h, l, t, p, n, B, X in TABLE1:
        mb, ddp, lpv = SCRIPT[params]
        dp = n // (t * p)
        vs = 1 if lpv is None else (l // p) // lpv
        F = schema.gpt_flops_per_iter(B, S, l, h, V, recompute_full=True)
        T = F / (n * X * 1e12)
        rows.append(dict(
            id=f"narayanan2021-t1-{params}b", source="narayanan2021-table1",
            model=f"gpt-{params}b", num_layers=l, hidden_size=h, num_attention_heads=a,
            num_query_groups=a, ffn_hidden_size=4 * h, swiglu=0, normalization="layernorm",
            seq_length=S, vocab_size=V, cluster="dgx-a100-80gb", gpus=n,
            framework="megatron-2021", attention="unfused", precision="fp16", tp=t, pp=p,
            dp=dp, virtual_stages=vs, first_stage_layers="", last_stage_layers="",
            sequence_parallel=0, recompute_granularity="full", recompute_method="uniform",
            recompute_num_layers=1, micro_batch=mb, global_batch=B, distributed_optimizer=0,
            # torch DDP reduces gradients in 25 MB buckets during the last microbatch's
            # backward; Megatron's "local" DDP of 2021 in one call after it
            overlap_grad_reduce=int(ddp == "torch"), overlap_param_gather=0, tp_comm_overlap=0,
            iteration_time_s=f"{T:.4f}", peak_memory_gib="",
            assumed="",
            note=f"Table 1: {X} TFLOP/s/GPU -> time via eq.3 96Bslh^2(1+s/6h+V/16lh); "
                 f"mb/vp/recompute from sc21/run_table_1.sh; DDP-impl {ddp}"))
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "narayanan2021_table1.csv"))
