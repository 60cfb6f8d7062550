"""Megatron-Bridge performance summary, MoE rows of every release -> moe/megatron_bridge_perf_moe.csv

Reads NVIDIA-NeMo/Megatron-Bridge, every commit up to 067f987df03b8355b03192d88d70f1709fedf51a
that changed docs/performance-summary.md or docs/performance-summary-archive.md (newest first;
a release's table as last published wins, so later typo corrections replace earlier numbers).
Keeps pre-training rows of the GPT-style MoE models (DeepSeek-V3, Kimi-K2, Qwen3-30B-A3B,
Qwen3-235B-A22B, gpt-oss-120B) on DGX-H100, DGX-B200 and DGX-GB200, FSDP 0.
Seconds per iteration from the published throughput: T = GBS * seq / (tokens_s_gpu * GPUs).

What the table states: GPUs, precision (from 25.11 on), GBS, MBS, sequence length, TP, PP, CP,
VP, EP, tokens/s/GPU, model TFLOP/s/GPU; the page's footnote that MoE benchmarks force-balance
the tokens among experts and run dropless (so load imbalance 1.0), except the "(tokendrop)"
rows, which src/megatron/bridge/training/utils/moe_token_drop.py at c575c1bec sets to capacity
factor 1.0, padded to capacity, alltoall dispatcher.
What it does not state (in `assumed` of every row): ETP (every perf config of every release that
sets --expert-tensor-parallel-size sets 1; taken as 1), the dispatcher and its backend (DeepEP or
HybridEP flex, or alltoall: per system and release in the perf recipes; left empty), recompute,
the pipeline layout, the overlap flags, grouped GEMM (1: the Bridge MoE providers set it).
The architectures are the models' public HuggingFace config.json files (repository named in
ARCH), which the Bridge's own model bridges convert.
Usage: python3 megatron_bridge_moe.py [/path/to/Megatron-Bridge.git]
"""
import os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema_moe

HEAD = "067f987df03b8355b03192d88d70f1709fedf51a"
FILES = ["docs/performance-summary.md", "docs/performance-summary-archive.md"]
MLA = dict(multi_latent_attention=1, q_lora_rank=1536, kv_lora_rank=512, qk_head_dim=128,
           qk_pos_emb_head_dim=64, v_head_dim=128, num_query_groups=128)
# HuggingFace config.json of each model (hidden_size, num_hidden_layers, num_attention_heads,
# num_key_value_heads, head_dim, intermediate_size, moe_intermediate_size, n_routed_experts /
# num_experts, num_experts_per_tok, n_shared_experts, first_k_dense_replace, vocab_size, MLA ranks)
ARCH = {
    "deepseekv3": dict(hf="deepseek-ai/DeepSeek-V3", num_layers=61, hidden_size=7168,
                       num_attention_heads=128, ffn_hidden_size=18432, vocab_size=129280,
                       num_experts=256, router_topk=8, moe_ffn_hidden_size=2048,
                       shared_expert_ffn_hidden_size=2048, first_dense_layers=3,
                       router_score_function="sigmoid", router_load_balancing="seq_aux_loss",
                       features=["expert-bias", "group-limited-routing"], **MLA),
    "kimi_k2": dict(hf="moonshotai/Kimi-K2-Base", num_layers=61, hidden_size=7168,
                    num_attention_heads=64, ffn_hidden_size=18432, vocab_size=163840,
                    num_experts=384, router_topk=8, moe_ffn_hidden_size=2048,
                    shared_expert_ffn_hidden_size=2048, first_dense_layers=1, mtp_num_layers=0,
                    router_score_function="sigmoid", router_load_balancing="seq_aux_loss",
                    features=["expert-bias", "muon"], **dict(MLA, num_query_groups=64)),
    "qwen3_30b_a3b": dict(hf="Qwen/Qwen3-30B-A3B", num_layers=48, hidden_size=2048,
                          num_attention_heads=32, num_query_groups=4, kv_channels=128,
                          ffn_hidden_size=6144, vocab_size=151936, num_experts=128, router_topk=8,
                          moe_ffn_hidden_size=768, mtp_num_layers=0, features=["qk-layernorm"]),
    "qwen3_235b_a22b": dict(hf="Qwen/Qwen3-235B-A22B", num_layers=94, hidden_size=4096,
                            num_attention_heads=64, num_query_groups=4, kv_channels=128,
                            ffn_hidden_size=12288, vocab_size=151936, num_experts=128,
                            router_topk=8, moe_ffn_hidden_size=1536, mtp_num_layers=0,
                            features=["qk-layernorm"]),
    "gpt_oss_120b": dict(hf="openai/gpt-oss-120b", num_layers=36, hidden_size=2880,
                         num_attention_heads=64, num_query_groups=8, kv_channels=64,
                         ffn_hidden_size=2880, vocab_size=201088, num_experts=128, router_topk=4,
                         moe_ffn_hidden_size=2880, mtp_num_layers=0,
                         features=["sliding-window", "attention-sinks"]),
}
# table label -> (architecture, MTP layers or None when the label leaves it open, variant)
MODELS = {
    "DeepSeekV3": ("deepseekv3", None, "dropless"),
    "DeepSeekV3 (dropless)": ("deepseekv3", None, "dropless"),
    "DeepSeekV3 (tokendrop)": ("deepseekv3", None, "tokendrop"),
    "DeepSeekV3 (w/o MTP)": ("deepseekv3", 0, "dropless"),
    "DeepSeekV3 (w/ MTP)": ("deepseekv3", 1, "dropless"),
    "Kimi_K2": ("kimi_k2", 0, "dropless"),
    "Qwen3_30B_a3B": ("qwen3_30b_a3b", 0, "dropless"),
    "Qwen3_30B_a3B (tokendrop)": ("qwen3_30b_a3b", 0, "tokendrop"),
    "Qwen3_235B_a22B": ("qwen3_235b_a22b", 0, "dropless"),
    "Qwen3_235B_a22B (tokendrop)": ("qwen3_235b_a22b", 0, "tokendrop"),
    "GPT OSS 120B": ("gpt_oss_120b", 0, "dropless"),
}
# labels seen in the tables and left out, with the reason (moe/README.md)
SKIP_MODELS = {
    "Nemotron": "Mamba-hybrid (Nemotron-H) layers, not a GPT-MoE",
    "DeepSeekV4": "DeepSeek-V4 attention and routing: no public config read here",
    "LLAMA": "dense (in megatron_bridge_perf.csv)",
}
SYSTEMS = {"DGX-H100": "dgx-h100", "DGX-B200": "dgx-b200", "DGX-GB200": "gb200-nvl72"}
# published precision -> (precision, --fp8-recipe, feature)
PREC = {"BF16": ("bf16", "", None), "FP8-CS": ("fp8", "tensorwise", None),
        "FP8": ("fp8", "", None), "FP8-MX": ("fp8", "mxfp8", "mxfp8"),
        "MXFP8": ("fp8", "mxfp8", "mxfp8"), "NVFP4": ("fp4", "", "nvfp4")}
ASSUMED = ["etp", "token_dispatcher", "recompute_granularity", "pipeline_layout",
           "first_stage_layers", "last_stage_layers", "grouped_gemm", "distributed_optimizer",
           "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
           "overlap_moe_expert_parallel_comm", "attention"]


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def value_and_alt(cell):
    """'338 (330)[^note]' -> (338.0, 330.0); the bracketed figure is the alternative FP8 scaling."""
    cell = re.sub(r"\[\^[^\]]*\]", "", cell).strip()
    if cell == "n/a":
        return None, None
    m = re.fullmatch(r"([\d.]+)\s*(?:\(([\d.]+)\))?", cell)
    return (float(m.group(1)), float(m.group(2)) if m.group(2) else None) if m else (None, None)


def table_rows(text):
    """(release, system, model, cells dict) for every pre-training table row of one page."""
    release = system = model = kind = header = None
    for line in text.splitlines():
        m = re.match(r"^## (.+?) NeMo Container", line)
        if m:
            release, kind = m.group(1), None
            continue
        m = re.match(r"^### (.+)", line)
        if m:
            kind, system, model = m.group(1).strip(), None, None
            continue
        m = re.match(r"^#### (System|Model): (.+)", line)
        if m:
            system, model = (m.group(2).strip(), None) if m.group(1) == "System" else (None, m.group(2).strip())
            continue
        if not line.startswith("|"):
            header = None if not line.strip() else header
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("System", "Model"):
            header = cells
            continue
        if set(cells[0]) <= set("-: ") or header is None or kind != "Pre-Training Performance":
            continue
        r = dict(zip(header, cells))
        yield release, r.get("System", system), r.get("Model", model), r


def main(repo, out):
    commits = git(repo, "log", "--format=%H", HEAD, "--", *FILES).split()
    rows, seen, skipped = [], set(), {}
    for commit in commits:  # newest first
        for path in FILES:
            try:
                text = git(repo, "show", f"{commit}:{path}")
            except subprocess.CalledProcessError:
                continue
            for release, sysname, label, r in table_rows(text):
                key = (release, sysname, label, r.get("Precision", ""), r["#-GPUs"], r["GBS"],
                       r["MBS"], r["TP"], r["PP"], r.get("CP", "1"), r["VP"], r.get("EP", "n/a"))
                if key in seen:
                    continue
                seen.add(key)
                skip = next((why for k, why in SKIP_MODELS.items() if label.startswith(k)), None)
                if skip is None and label not in MODELS:
                    skip = "not a MoE model known here"
                if skip is None and sysname not in SYSTEMS:
                    skip = f"{sysname}: no cluster preset"
                if skip is None and r.get("FSDP", "0") not in ("0", "n/a"):
                    skip = "Megatron-FSDP (no column)"
                if skip:
                    skipped.setdefault(skip, set()).add((release, sysname, label))
                    continue
                rows += convert(release, sysname, label, r, commit, path, skipped)
    rows.sort(key=lambda x: x["id"])
    schema_moe.write(out, rows)
    return skipped


def convert(release, sysname, label, r, commit, path, skipped):
    arch_name, mtp, variant = MODELS[label]
    arch = dict(ARCH[arch_name])
    hf, features = arch.pop("hf"), list(arch.pop("features", []))
    arch.setdefault("num_query_groups", arch["num_attention_heads"])
    assumed = list(ASSUMED)
    if mtp is None:
        mtp = 1  # DeepSeek-V3's own config (num_nextn_predict_layers 1), the Bridge recipe's default
        assumed.append("mtp_num_layers")
    arch["mtp_num_layers"] = mtp
    if "Precision" in r:
        prec_label = r["Precision"]
    else:
        prec_label = "FP8"  # the 25.09 tables state no precision; its notes speak of FP8 scalings
        assumed.append("precision")
    prec, recipe, pfeature = PREC[prec_label]
    if variant == "tokendrop":
        moe = dict(capacity_factor="1.0", pad_to_capacity=1, token_dispatcher="alltoall")
        assumed.remove("token_dispatcher")
    else:
        moe = dict(capacity_factor="", pad_to_capacity=0, token_dispatcher="")
        features.append("force-balanced-routing")
    if variant == "tokendrop":
        features.append("token-drop")
    out = []
    for alt in (False, True):
        # a bracketed figure (25.09) is a second run: its own throughput and, where a layout
        # cell has one too, its own layout
        if value_and_alt(r["Tokens / sec / GPU"])[1] is None and alt:
            continue
        c = {k: (value_and_alt(v)[1] if alt and value_and_alt(v)[1] is not None else value_and_alt(v)[0])
             if k not in ("Precision",) else v for k, v in r.items() if k not in ("Model", "System")}
        t, tfl = c["Tokens / sec / GPU"], c["Model TFLOP / sec / GPU"]
        gpus, gbs, mbs = int(c["#-GPUs"]), int(c["GBS"]), int(c["MBS"])
        seq, tp, pp = int(c["Sequence Length"]), int(c["TP"]), int(c["PP"])
        cp = int(c.get("CP") or 1)
        vp = int(c["VP"] or 1)
        ep = int(c.get("EP") or 1)
        dp = gpus // (tp * cp * pp)
        ga = c.get("GA")
        ga_note = "" if ga is None else f"; GA {ga:g}" + ("" if int(ga) * mbs * dp == gbs else " (!= GBS/(MBS*DP))")
        row_recipe, row_features = recipe, list(features)
        if pfeature:
            row_features.append(pfeature)
        if alt:
            # 25.09 note: the bracketed figure is DeepSeek-V3's own granularity on H100 (128x128
            # weights, 1x128 activations: Megatron's blockwise recipe); 32x32 on B200/GB200 is no
            # Megatron recipe name, so those figures are left out.
            if sysname != "DGX-H100":
                skipped.setdefault("bracketed 32x32-scaling figure on Blackwell (no recipe name)",
                                   set()).add((release, sysname, label))
                continue
            row_recipe = "blockwise"
            row_features.append("fp8-blockwise")
        T = gbs * seq / (t * gpus)
        mid = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
        rid = (f"mbridge-moe-{release}-{mid}-{sysname.lower()}-{gpus}g-{prec_label.lower()}"
               f"-gbs{gbs}-mbs{mbs}-tp{tp}pp{pp}cp{cp}vp{vp}ep{ep}" + ("-blockwise" if alt else ""))
        out.append(dict(
            id=rid, source="megatron-bridge-perf-moe", model=arch_name, **arch,
            swiglu=1, normalization="rmsnorm", seq_length=seq, cluster=SYSTEMS[sysname], gpus=gpus,
            framework="nemo", attention="flash", precision=prec, tp=tp, cp=cp, cp_comm_type="p2p",
            pp=pp, dp=dp, virtual_stages=vp, pipeline_layout="", first_stage_layers="",
            last_stage_layers="", sequence_parallel=int(tp > 1), recompute_granularity="none",
            recompute_method="", recompute_num_layers="", micro_batch=mbs, global_batch=gbs,
            distributed_optimizer=1, overlap_grad_reduce="", overlap_param_gather="",
            tp_comm_overlap="", iteration_time_s=f"{T:.4f}", peak_memory_gib="",
            moe_layer_freq="1" if not arch.get("first_dense_layers") else
            f"([0]*{arch['first_dense_layers']}+[1]*{arch['num_layers'] - arch['first_dense_layers']})",
            ep=ep, etp=1, grouped_gemm=1, fp8_recipe=row_recipe, **moe,
            features=";".join(row_features), assumed=";".join(assumed),
            note=(f"{path} at {commit[:9]}, {release} container, {sysname}, '{label}', "
                  f"precision {prec_label}{' (bracketed figure)' if alt else ''}: {t:g} tokens/s/GPU, "
                  f"{tfl:g} model TFLOP/s/GPU -> GBS*seq/(tok*GPUs){ga_note}; "
                  f"architecture: HF {hf} config.json")))
    return out


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo"
    here = os.path.dirname(os.path.abspath(__file__))
    sk = main(repo, os.path.join(here, "..", "moe", "megatron_bridge_perf_moe.csv"))
    for why, what in sorted(sk.items()):
        print(f"skipped ({why}): {len(what)} tables/rows, e.g. {sorted(what)[0]}")
