"""Megatron-LM functional-test golden values, MoE cases -> moe/megatron_functional_tests_moe.csv

Reads NVIDIA/Megatron-LM at commit d98e8a64ddf34856e74b24714e3bedb2f5a39553 (the commit the
dense megatron_functional.py reads):
  tests/functional_tests/test_cases/<folder>/<test>/model_config.yaml  (MODEL_ARGS)
  tests/functional_tests/test_cases/<folder>/<test>/golden_values_<env>_<platform>.json
  tests/test_utils/recipes/h100/moe.yaml        nodes 1 x gpus 8   (dgx_a100, dgx_h100)
  tests/test_utils/recipes/gb200/moe.yaml       nodes 2 x gpus 4   (dgx_gb200)
  tests/test_utils/recipes/gb200/moe-1node.yaml nodes 1 x gpus 4   (dgx_gb200, the *_1node tests)
Every folder is scanned; a test is MoE when its MODEL_ARGS set --num-experts.
Conventions of megatron_functional.py: iteration_time_s = median of 'iteration-time' at steps
> SKIP; peak_memory_gib = max of 'mem-max-allocated-bytes' / 2^30 (rank world_size-1 logs it);
golden_values_{dev,lts}.json without a platform and *_2nd.json (the resumed half of a
checkpoint-resume test) skipped. allocated_memory_gib = median of 'mem-allocated-bytes' at steps
> SKIP. Megatron-LM defaults fill what MODEL_ARGS leave out (megatron/training/arguments.py:
--moe-router-topk 2, --moe-token-dispatcher-type allgather, --expert-tensor-parallel-size = TP,
--moe-ffn-hidden-size = --ffn-hidden-size, --kv-lora-rank 32, --qk-head-dim 128,
--qk-pos-emb-head-dim 64, --v-head-dim 128, --fp8-recipe delayed); such a default of a fully
given command line counts as stated, as in the dense corpus.
Usage: python3 megatron_functional_moe.py [/path/to/Megatron-LM.git]
"""
import json, os, re, statistics, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema_moe
from megatron_functional import parse_args, truthy

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
CASES = "tests/functional_tests/test_cases"
SKIP = 10
# test-name fragments skipped outright, with the reason (reported in moe/README.md)
SKIP_NAME = [
    ("memory_speed", "reserved for judging (memory_speed tests are held back, MoE ones too)"),
    ("inference", "inference, not training"), ("grpo", "RL, not pretraining"),
    ("release", "multi-node release run: node count not in the repository"),
    ("fsdp", "Megatron-FSDP sharding (no column)"), ("zp_z3", "FSDP ZeRO-3 (no column)"),
    ("_gdn", "gated delta-net layers"),
]
SKIP_FOLDER = {"hybrid": "Mamba-hybrid model, not a GPT-MoE", "nemotron": "Mamba-hybrid model, not a GPT-MoE"}
# platform in the golden-values file name -> (cluster preset, exact machine?)
PLATFORMS = {"dgx_a100": ("dgx-a100-80gb", False), "dgxa100_dracooci": ("dgx-a100-80gb", False),
             "dgxa100_dracooci-ord": ("dgx-a100-80gb", False), "dgx_h100": ("dgx-h100", True),
             "dgxh100_dgxc": ("dgx-h100", False), "dgx_gb200": ("gb200-nvl72", False)}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def gb200_gpus(repo):
    """Test case -> GPUs on dgx_gb200, from the two GB200 MoE recipes (nodes x gpus)."""
    out = {}
    for recipe in ("moe.yaml", "moe-1node.yaml"):
        text = git(repo, "show", f"{COMMIT}:tests/test_utils/recipes/gb200/{recipe}")
        nodes = int(re.search(r"^\s+nodes:\s*(\d+)", text, re.M).group(1))
        gpus = int(re.search(r"^\s+gpus:\s*(\d+)", text, re.M).group(1))
        for t in re.findall(r"^\s*#?\s*- test_case: \[(\w+)\]", text, re.M):
            out[t] = nodes * gpus
    return out


def first_dense(freq, layers):
    """Leading dense layers and a check that the rest are all MoE, from --moe-layer-freq."""
    m = re.fullmatch(r"\(\[0\]\*(\d+)\+\[1\]\*(\d+)\)", freq.replace(" ", ""))
    if m:
        dense, moe = int(m.group(1)), int(m.group(2))
        return dense, dense + moe
    if freq.isdigit() and int(freq) == 1:
        return 0, layers
    return None, None


def median_after_warmup(g, metric):
    vals = g.get(metric, {}).get("values", {})
    v = [float(x) for k, x in vals.items() if int(k) > SKIP and x not in ("nan", None)]
    return [x for x in v if x == x]


def row_for(t, a, gfile, g, gpus, cluster, exact_cluster, env, plat):
    l, h, heads = int(a["--num-layers"]), int(a["--hidden-size"]), int(a["--num-attention-heads"])
    tp = int(a.get("--tensor-model-parallel-size", 1))
    pp = int(a.get("--pipeline-model-parallel-size", 1))
    cp = int(a.get("--context-parallel-size", 1))
    dp = gpus // (tp * pp * cp)
    swiglu = truthy(a, "--swiglu")
    ffn = int(a["--ffn-hidden-size"]) if "--ffn-hidden-size" in a else (
        int((4 * h * 2 / 3) / 64) * 64 if swiglu else 4 * h)  # Megatron-LM's arguments.py default
    groups = int(a["--num-query-groups"]) if truthy(a, "--group-query-attention") else heads
    norm = "rmsnorm" if a.get("--normalization", "LayerNorm") == "RMSNorm" else "layernorm"
    assumed, features = [], []
    if "--fp8-format" in a:
        prec, fp8_recipe = "fp8", a.get("--fp8-recipe", "delayed")
        if fp8_recipe == "blockwise":
            features.append("fp8-blockwise")
    else:
        prec = "bf16" if truthy(a, "--bf16") else "fp16" if truthy(a, "--fp16") else "fp32"
        fp8_recipe = ""
    impl = a.get("--transformer-impl", "transformer_engine")
    backend = a.get("--attention-backend", "auto")
    attn = "unfused" if backend == "unfused" or (impl == "local" and backend in ("auto", "local")) else "flash"
    if "--attention-backend" not in a:
        assumed.append("attention")
    vs = int(a.get("--num-virtual-stages-per-pipeline-rank", 1))
    if "--num-layers-per-virtual-pipeline-stage" in a:
        vs = (l // pp) // int(a["--num-layers-per-virtual-pipeline-stage"])
    layout = a.get("--pipeline-model-parallel-layout", "")
    if layout:  # stages = '|'-separated segments once (...)*N repeats are expanded
        expanded = re.sub(r"\(([^()]*)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), layout)
        vs = (expanded.count("|") + 1) // pp
    gran = a.get("--recompute-granularity", "none")
    if "--recompute-modules" in a:
        features.append("selective-recompute-modules")
    meth = a.get("--recompute-method", "") if gran == "full" else ""
    nrl = a.get("--recompute-num-layers", "") if gran == "full" else ""
    vocab = 50257  # GPT-2 BPE vocab.json of the CI data (tokenizer GPT2BPETokenizer)
    assumed.append("vocab_size")
    mb = int(a["--micro-batch-size"])
    gb = int(a.get("--global-batch-size", mb * dp))
    if "--global-batch-size" not in a:
        assumed.append("global_batch")
    experts = int(a["--num-experts"])
    freq = a.get("--moe-layer-freq", "1")
    dense, total = first_dense(freq, l)
    kv_channels = int(a["--kv-channels"]) if "--kv-channels" in a else ""
    if kv_channels == h // heads:
        kv_channels = ""
    mla = truthy(a, "--multi-latent-attention")
    if truthy(a, "--moe-router-enable-expert-bias"):
        features.append("expert-bias")
    if "--moe-router-num-groups" in a:
        features.append("group-limited-routing")
    if truthy(a, "--overlap-moe-expert-parallel-comm"):
        features.append("moe-a2a-overlap")
    if "--cuda-graph-impl" in a or truthy(a, "--enable-cuda-graph") or truthy(a, "--external-cuda-graph"):
        features.append("cuda-graphs")
    if truthy(a, "--fine-grained-activation-offloading"):
        features.append("fine-grained-offloading")
    if a.get("--optimizer", "adam") in ("muon", "dist_muon"):
        features.append("muon")
    if int(a.get("--num-distributed-optimizer-instances", 1)) > 1:
        features.append("distributed-optimizer-instances")
    if "frozen" in t:
        features.append("frozen-weights")
    if truthy(a, "--qk-layernorm"):
        features.append("qk-layernorm")
    if "--moe-expert-capacity-factor" in a:
        features.append("token-drop")
    its = median_after_warmup(g, "iteration-time")
    peakv = [float(v) for v in g.get("mem-max-allocated-bytes", {}).get("values", {}).values()
             if v not in ("nan", None)]
    alloc = median_after_warmup(g, "mem-allocated-bytes")
    if not exact_cluster:
        assumed.append("cluster")
    flags = [k[2:] for k in ("--deterministic-mode", "--no-gradient-accumulation-fusion",
                             "--untie-embeddings-and-output-weights", "--disable-bias-linear",
                             "--moe-permute-fusion", "--moe-router-fusion", "--moe-router-pre-softmax",
                             "--cross-entropy-loss-fusion", "--manual-gc", "--fp8-param-gather",
                             "--use-tp-pp-dp-mapping", "--delay-wgrad-compute",
                             "--use-transformer-engine-op-fuser", "--calculate-per-token-loss",
                             "--first-last-layers-bf16")
             if truthy(a, k)]
    extra = " ".join(f"{k}={a[k]}" for k in ("--recompute-modules", "--cuda-graph-modules",
                                              "--offload-modules", "--num-distributed-optimizer-instances",
                                              "--moe-router-dtype", "--make-vocab-size-divisible-by",
                                              "--moe-router-topk-scaling-factor", "--moe-router-group-topk",
                                              "--moe-router-num-groups")
                     if k in a)
    return dict(
        id=f"mcore-ft-moe-{t}-{env}-{plat}", source="megatron-functional-tests-moe",
        model=f"moe-l{l}-h{h}-e{experts}", num_layers=l, hidden_size=h, num_attention_heads=heads,
        num_query_groups=groups, ffn_hidden_size=ffn, swiglu=int(swiglu), normalization=norm,
        seq_length=a["--seq-length"], vocab_size=vocab, cluster=cluster, gpus=gpus,
        framework="megatron-core-ci", attention=attn, precision=prec, tp=tp, cp=cp,
        cp_comm_type=a.get("--cp-comm-type", "p2p"), pp=pp, dp=dp, virtual_stages=vs,
        pipeline_layout=layout, first_stage_layers=a.get("--decoder-first-pipeline-num-layers", ""),
        last_stage_layers=a.get("--decoder-last-pipeline-num-layers", ""),
        sequence_parallel=int(truthy(a, "--sequence-parallel")), recompute_granularity=gran,
        recompute_method=meth, recompute_num_layers=nrl, micro_batch=mb, global_batch=gb,
        distributed_optimizer=int(truthy(a, "--use-distributed-optimizer")),
        overlap_grad_reduce=int(truthy(a, "--overlap-grad-reduce")),
        overlap_param_gather=int(truthy(a, "--overlap-param-gather")),
        tp_comm_overlap=int(truthy(a, "--tp-comm-overlap")),
        iteration_time_s=f"{statistics.median(its):.5f}",
        peak_memory_gib=f"{max(peakv) / 2**30:.3f}" if peakv else "",
        kv_channels=kv_channels, num_experts=experts,
        router_topk=int(a.get("--moe-router-topk", 2)),
        moe_ffn_hidden_size=int(a.get("--moe-ffn-hidden-size", ffn)),
        shared_expert_ffn_hidden_size=a.get("--moe-shared-expert-intermediate-size", ""),
        moe_layer_freq=freq, first_dense_layers=dense,
        ep=int(a.get("--expert-model-parallel-size", 1)),
        etp=int(a.get("--expert-tensor-parallel-size", tp)),
        token_dispatcher=a.get("--moe-token-dispatcher-type", "allgather"),
        grouped_gemm=int(truthy(a, "--moe-grouped-gemm")),
        capacity_factor=a.get("--moe-expert-capacity-factor", ""),
        pad_to_capacity=int(truthy(a, "--moe-pad-expert-input-to-capacity")),
        router_score_function=a.get("--moe-router-score-function", "softmax"),
        router_load_balancing=a.get("--moe-router-load-balancing-type", "aux_loss"),
        multi_latent_attention=int(mla),
        q_lora_rank=a.get("--q-lora-rank", "") if mla else "",
        kv_lora_rank=a.get("--kv-lora-rank", "32") if mla else "",
        qk_head_dim=a.get("--qk-head-dim", "128") if mla else "",
        qk_pos_emb_head_dim=a.get("--qk-pos-emb-head-dim", "64") if mla else "",
        v_head_dim=a.get("--v-head-dim", "128") if mla else "",
        mtp_num_layers=int(a.get("--mtp-num-layers", 0)), fp8_recipe=fp8_recipe,
        overlap_moe_expert_parallel_comm=int(truthy(a, "--overlap-moe-expert-parallel-comm")),
        moe_shared_expert_overlap=int(truthy(a, "--moe-shared-expert-overlap")),
        allocated_memory_gib=f"{statistics.median(alloc) / 2**30:.3f}" if alloc else "",
        features=";".join(features), assumed=";".join(assumed),
        note=(f"{t}/{gfile}; median of {len(its)} steps>{SKIP}; impl={impl}; "
              f"attention-backend={backend}; pos={a.get('--position-embedding-type', 'learned_absolute')}; "
              f"optimizer={a.get('--optimizer', 'adam')}; peak mem from rank world_size-1; "
              + " ".join(flags) + (f"; {extra}" if extra else "")))


def main(repo, out):
    files = git(repo, "ls-tree", "-r", "--name-only", COMMIT, CASES).splitlines()
    tests = sorted({tuple(f.split("/")[3:5]) for f in files if f.count("/") >= 5})
    g200 = gb200_gpus(repo)
    rows, skipped = [], {}
    for folder, t in tests:
        reason = next((r for k, r in SKIP_NAME if k in t), None)
        cfg = f"{CASES}/{folder}/{t}/model_config.yaml"
        if cfg not in files:
            continue
        if reason:  # decided by the name alone, before the file is read
            skipped[f"{folder}/{t}"] = reason
            continue
        a = parse_args(git(repo, "show", f"{COMMIT}:{cfg}"))
        if "--num-experts" not in a:
            continue
        if folder in SKIP_FOLDER:
            skipped[f"{folder}/{t}"] = SKIP_FOLDER[folder]
            continue
        if truthy(a, "--use-megatron-fsdp") or truthy(a, "--use-torch-fsdp2"):
            skipped[f"{folder}/{t}"] = "Megatron-FSDP sharding (no column)"
            continue
        l = int(a["--num-layers"])
        freq = a.get("--moe-layer-freq", "1")
        dense, total = first_dense(freq, l)
        if dense is None or total != l:
            skipped[f"{folder}/{t}"] = f"--moe-layer-freq {freq} not a leading-dense pattern"
            continue
        gfiles = sorted(f for f in files if f.startswith(f"{CASES}/{folder}/{t}/golden_values_"))
        for f in gfiles:
            name = os.path.basename(f)
            m = re.fullmatch(r"golden_values_(dev|lts)_([\w-]+)\.json", name)
            if not m or m.group(2) not in PLATFORMS:
                skipped[f"{folder}/{t}/{name}"] = ("second (resumed) run" if name.endswith("_2nd.json")
                                                   else "no platform in the file name")
                continue
            env, plat = m.groups()
            cluster, exact = PLATFORMS[plat]
            if plat == "dgx_gb200":
                if t not in g200:
                    skipped[f"{folder}/{t}/{name}"] = "not in a GB200 recipe: GPU count unknown"
                    continue
                gpus = g200[t]
            else:
                gpus = 8  # recipes/h100/moe.yaml: nodes 1, gpus 8
            text = git(repo, "show", f"{COMMIT}:{f}")
            if not text.strip():
                skipped[f"{folder}/{t}/{name}"] = "empty golden-values file"
                continue
            g = json.loads(text)
            if len(median_after_warmup(g, "iteration-time")) < 3:
                skipped[f"{folder}/{t}/{name}"] = "fewer than 3 iteration-time values after warm-up"
                continue
            rows.append(row_for(t, a, name, g, gpus, cluster, exact, env, plat))
    schema_moe.write(out, rows)
    return skipped


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA+Megatron-LM/repo"
    here = os.path.dirname(os.path.abspath(__file__))
    sk = main(repo, os.path.join(here, "..", "moe", "megatron_functional_tests_moe.csv"))
    reasons = {}
    for k, r in sk.items():
        reasons.setdefault(r, []).append(k)
    for r, ks in sorted(reasons.items()):
        print(f"skipped ({r}): {len(ks)}")
