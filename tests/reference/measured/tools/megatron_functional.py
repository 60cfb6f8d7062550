"""Megatron-LM functional-test golden values -> megatron_functional_tests.csv

Reads NVIDIA/Megatron-LM at commit d98e8a64ddf34856e74b24714e3bedb2f5a39553:
  tests/functional_tests/test_cases/gpt/<test>/model_config.yaml   (MODEL_ARGS: shape, layout)
  tests/functional_tests/test_cases/gpt/<test>/golden_values_<env>_<platform>.json
  tests/test_utils/recipes/h100/gpt.yaml  (spec: nodes 1, gpus 8 for dgx_a100 / dgx_h100)
GPU type is encoded in the golden-values file name: ..._dgx_a100.json and
..._dgxa100_dracooci[-ord].json -> A100; ..._dgx_h100.json -> H100; gb200 files skipped
(no preset); golden_values_lts.json (no platform in the name) skipped; *_2nd.json (second,
resumed run of a checkpoint-resume test) skipped.
iteration_time_s = median of the golden 'iteration-time' values at steps > SKIP.
peak_memory_gib = max of 'mem-max-allocated-bytes' / 2^30 (logged by rank world_size-1 only).
Tests with --context-parallel-size > 1 go, held out, to excluded/megatron_functional_tests_cp.csv
(main(..., context_parallel=True)); the hierarchical a2a+p2p ones are skipped (the schema has no
column for --hierarchical-context-parallel-sizes).
Usage: python3 megatron_functional.py [/path/to/Megatron-LM.git]
"""
import json, os, re, statistics, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
BASE = "tests/functional_tests/test_cases/gpt"
SKIP = 10            # warm-up steps dropped before the median
GPUS = 8             # recipes/h100/gpt.yaml: nodes: 1, gpus: 8
# test names skipped outright, with the reason (reported in the README)
SKIP_NAME = [
    ("memory_speed", "reserved for judging / MoE"),
    ("inference", "inference, not training"), ("grpo", "RL, not pretraining"),
    ("release", "multi-node release run, node count not in the repository"),
    ("_gdn", "gated delta-net layers"), ("_mla", "multi-latent attention"),
    ("_dsa", "sparse attention"), ("modelopt_distill", "distillation (teacher model)"),
    ("fsdp", "FSDP sharding (not in the schema)"), ("zp_z3", "FSDP ZeRO-3"),
    ("reruns", "fault-injection / rerun-machine tests"),
]


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def parse_args(text):
    args, section = {}, None
    for line in text.splitlines():
        if re.match(r"^\S", line):
            section = line.split(":")[0].strip()
            continue
        m = re.match(r"^\s+(--[\w-]+):\s*(.*?)\s*(#.*)?$", line)
        if m and section == "MODEL_ARGS":
            v = m.group(2).strip().strip('"').strip("'")
            args[m.group(1)] = v
    return args


def platform_of(fname):
    m = re.match(r"golden_values_(dev|lts)_(dgx_a100|dgx_h100|dgxa100_dracooci(-ord)?)\.json$",
                 fname)
    if not m:
        return None
    env, plat = m.group(1), m.group(2)
    gpu = "h100" if plat == "dgx_h100" else "a100"
    return env, plat, gpu


def truthy(args, k):
    return str(args.get(k, "false")).lower() == "true"


def main(repo, out, context_parallel=False):
    """The CP 1 tests, or with context_parallel the CP > 1 ones."""
    files = [f for f in git(repo, "ls-tree", "-r", "--name-only", COMMIT, BASE).splitlines()]
    tests = sorted({f.split("/")[4] for f in files})
    rows, skipped = [], {}
    for t in tests:
        reason = next((r for k, r in SKIP_NAME if k in t), None)
        gfiles = [f for f in files if f.startswith(f"{BASE}/{t}/golden_values_")]
        if reason:
            skipped[t] = reason
            continue
        if not gfiles:
            skipped[t] = "no golden values"
            continue
        a = parse_args(git(repo, "show", f"{COMMIT}:{BASE}/{t}/model_config.yaml"))
        if "--num-experts" in a:
            skipped[t] = "MoE"; continue
        cp = int(a.get("--context-parallel-size", 1))
        if (cp > 1) != context_parallel:
            skipped[t] = "context parallel > 1" if cp > 1 else "context parallel 1"; continue
        cp_comm = a.get("--cp-comm-type", "p2p")
        if "--hierarchical-context-parallel-sizes" in a:
            skipped[t] = "hierarchical CP sizes (no column)"; continue
        if "--experimental-attention-variant" in a or truthy(a, "--multi-latent-attention"):
            skipped[t] = "non-standard attention"; continue
        if truthy(a, "--use-torch-fsdp2") or truthy(a, "--use-megatron-fsdp"):
            skipped[t] = "FSDP"; continue
        l, h, heads = int(a["--num-layers"]), int(a["--hidden-size"]), int(a["--num-attention-heads"])
        if "--kv-channels" in a and int(a["--kv-channels"]) != h // heads:
            skipped[t] = "kv-channels != hidden/heads"; continue
        if "--step-batch-size-schedule" in a or "--rampup-batch-size" in a:
            skipped[t] = "batch-size ramp"; continue
        tp = int(a.get("--tensor-model-parallel-size", 1))
        pp = int(a.get("--pipeline-model-parallel-size", 1))
        dp = GPUS // (tp * pp * cp)
        swiglu = truthy(a, "--swiglu")
        ffn = int(a["--ffn-hidden-size"]) if "--ffn-hidden-size" in a else (
            int((4 * h * 2 / 3) / 64) * 64 if swiglu else 4 * h)
        groups = int(a["--num-query-groups"]) if truthy(a, "--group-query-attention") else heads
        norm = "rmsnorm" if a.get("--normalization", "LayerNorm") == "RMSNorm" else "layernorm"
        if "--fp8-format" in a:
            prec = "fp8"
        elif truthy(a, "--bf16"):
            prec = "bf16"
        elif truthy(a, "--fp16"):
            prec = "fp16"
        else:
            prec = "fp32"
        impl = a.get("--transformer-impl", "transformer_engine")
        backend = a.get("--attention-backend", "auto")
        assumed = []
        if backend == "unfused" or (impl == "local" and backend in ("auto", "local")):
            attn = "unfused"
        else:
            attn = "flash"
        if "--attention-backend" not in a:
            assumed.append("attention")
        vs = 1
        if "--num-layers-per-virtual-pipeline-stage" in a:
            vs = (l // pp) // int(a["--num-layers-per-virtual-pipeline-stage"])
        if "--num-virtual-stages-per-pipeline-rank" in a:
            vs = int(a["--num-virtual-stages-per-pipeline-rank"])
        first = a.get("--decoder-first-pipeline-num-layers", "")
        last = a.get("--decoder-last-pipeline-num-layers", "")
        gran = a.get("--recompute-granularity", "none")
        meth = a.get("--recompute-method", "") if gran == "full" else ""
        nrl = a.get("--recompute-num-layers", "") if gran == "full" else ""
        if "--vocab-size" in a:
            vocab = int(a["--vocab-size"])
        elif "vocab.json" in a.get("--vocab-file", "") and a.get("--tokenizer-type", "GPT2BPETokenizer") == "GPT2BPETokenizer":
            vocab = 50257
            assumed.append("vocab_size")
        else:
            skipped[t] = "tokenizer vocabulary size unknown"; continue
        # The vocabulary Megatron-LM trains: padded to a multiple of
        # --make-vocab-size-divisible-by (128) x TP (vocab_utils.py calculate_padded_vocab_size).
        unit = int(a.get("--make-vocab-size-divisible-by", 128)) * tp
        vocab = (vocab + unit - 1) // unit * unit
        mb = int(a["--micro-batch-size"])
        gb = int(a.get("--global-batch-size", mb * dp))
        if "--global-batch-size" not in a:
            assumed.append("global_batch")
        flags = [k[2:] for k in ("--overlap-grad-reduce", "--overlap-param-gather",
                                 "--tp-comm-overlap", "--untie-embeddings-and-output-weights",
                                 "--disable-bias-linear", "--account-for-embedding-in-pipeline-split",
                                 "--account-for-loss-in-pipeline-split", "--deterministic-mode",
                                 "--calculate-per-token-loss", "--defer-embedding-wgrad-compute",
                                 "--cross-entropy-loss-fusion", "--qk-layernorm", "--manual-gc",
                                 "--no-gradient-accumulation-fusion", "--fp8-param-gather",
                                 "--use-tp-pp-dp-mapping")
                 if truthy(a, k)]
        pos = a.get("--position-embedding-type", "learned_absolute")
        for f in sorted(gfiles):
            p = platform_of(os.path.basename(f))
            if not p:
                continue
            env, plat, gpu = p
            g = json.loads(git(repo, "show", f"{COMMIT}:{f}"))
            it = g.get("iteration-time", {}).get("values", {})
            vals = [float(v) for k, v in it.items() if int(k) > SKIP and v not in ("nan", None)]
            vals = [v for v in vals if v == v]
            if len(vals) < 3:
                skipped[f"{t}:{os.path.basename(f)}"] = "fewer than 3 iteration-time values after warm-up"
                continue
            mem = g.get("mem-max-allocated-bytes", {}).get("values", {})
            memv = [float(v) for v in mem.values() if v not in ("nan", None)]
            peak = f"{max(memv) / 2**30:.3f}" if memv else ""
            cluster = "dgx-h100" if gpu == "h100" else "dgx-a100-80gb"
            ra = list(assumed) + (["cluster"] if gpu == "a100" else [])
            rows.append(dict(
                id=f"mcore-ft-{t}-{env}-{plat}", source="megatron-functional-tests",
                model=f"gpt-l{l}-h{h}", num_layers=l, hidden_size=h, num_attention_heads=heads,
                num_query_groups=groups, ffn_hidden_size=ffn, swiglu=int(swiglu),
                normalization=norm, seq_length=a["--seq-length"], vocab_size=vocab,
                cluster=cluster, gpus=GPUS, framework="megatron-core-ci", attention=attn,
                precision=prec, tp=tp, cp=cp, cp_comm_type=cp_comm, pp=pp, dp=dp, virtual_stages=vs,
                first_stage_layers=first, last_stage_layers=last,
                sequence_parallel=int(truthy(a, "--sequence-parallel")),
                recompute_granularity=gran, recompute_method=meth, recompute_num_layers=nrl,
                micro_batch=mb, global_batch=gb,
                distributed_optimizer=int(truthy(a, "--use-distributed-optimizer")),
                overlap_grad_reduce=int(truthy(a, "--overlap-grad-reduce")),
                overlap_param_gather=int(truthy(a, "--overlap-param-gather")),
                tp_comm_overlap=int(truthy(a, "--tp-comm-overlap")),
                position_embedding=pos,
                untie_embeddings=int(truthy(a, "--untie-embeddings-and-output-weights")),
                add_bias_linear=int(not truthy(a, "--disable-bias-linear")),
                distributed_optimizer_instances=(a["--num-distributed-optimizer-instances"]
                                                 if int(a.get("--num-distributed-optimizer-instances", 1)) > 1 else ""),
                cross_entropy_loss_fusion=int(truthy(a, "--cross-entropy-loss-fusion")),
                apply_rope_fusion=int(not truthy(a, "--no-rope-fusion")),
                iteration_time_s=f"{statistics.median(vals):.5f}", peak_memory_gib=peak,
                assumed=";".join(ra),
                note=(f"{f.split('/')[-1]}; median of {len(vals)} steps>{SKIP}; impl={impl}; "
                      f"attention-backend={backend}; pos={pos}; "
                      f"peak mem from rank world_size-1; " + " ".join(flags))))
    schema.write(out, rows)
    return skipped


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA+Megatron-LM/repo"
    here = os.path.dirname(os.path.abspath(__file__))
    for cp, name in ((False, "megatron_functional_tests.csv"), (True, "excluded/megatron_functional_tests_cp.csv")):
        sk = main(repo, os.path.join(here, "..", name), context_parallel=cp)
        reasons = {}
        for k, r in sk.items():
            reasons.setdefault(r, []).append(k)
        for r, ks in sorted(reasons.items()):
            if r != "context parallel 1":
                print(f"skipped ({r}): {len(ks)}")
