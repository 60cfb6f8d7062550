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
What it does not state is read from the recipe the row ran with, at the commit that first
published it, when exactly one recipe of that model, system and precision has the published
layout (workload presets until June 2026, perf-recipe functions after): ETP, the dispatcher and
its flex backend, dispatch/combine overlap, recompute modules, CUDA graphs, the layout string.
Otherwise, and always for the pipeline split, the overlap flags of DP and TP, and grouped GEMM
(1: the Bridge MoE providers set it), the column is in `assumed` (ETP 1: every recipe of every
release that sets --expert-tensor-parallel-size sets 1).
The architectures are the models' public HuggingFace config.json files (repository named in
ARCH), which the Bridge's own model bridges convert.
Usage: python3 megatron_bridge_moe.py [/path/to/Megatron-Bridge.git]
"""
import ast, os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema_moe
from megatron_bridge import pretraining_rows

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


# Workload presets of the perf scripts (scripts/performance/configs/<family>/*workload_base_configs.py,
# until they moved into src/megatron/bridge/perf_recipes in July 2026): the overrides each
# published row ran with, read at the commit that first published the row.
RECIPE_MODEL = {"deepseekv3": "DEEPSEEK_V3", "qwen3_30b_a3b": "QWEN3_30B_A3B",
                "qwen3_235b_a22b": "QWEN3_235B_A22B", "gpt_oss_120b": "GPT_OSS_120B"}
RECIPE_GPU = {"DGX-H100": "H100", "DGX-B200": "B200", "DGX-GB200": "GB200"}
RECIPE_PREC = {"BF16": ["BF16"], "FP8-CS": ["FP8_CS"], "FP8-MX": ["FP8_MX"], "MXFP8": ["FP8_MX"],
               "NVFP4": ["NVFP4"], "FP8": ["FP8_CS", "FP8_SC", "FP8_MX"]}
RECIPE_FP8 = {"FP8_CS": "tensorwise", "FP8_SC": "blockwise", "FP8_MX": "mxfp8"}


def workload_configs(repo, commit):
    """Preset name -> its keyword values, following replace(PARENT, ...) chains and aliases."""
    files = [f for f in git(repo, "ls-tree", "-r", "--name-only", commit, "scripts/performance/configs").split()
             if f.endswith("workload_base_configs.py")]
    out = {}
    for f in files:
        for node in ast.parse(git(repo, "show", f"{commit}:{f}")).body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                continue
            name, v = node.targets[0].id, node.value
            if isinstance(v, ast.Name) and v.id in out:
                out[name] = out[v.id]
            elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("replace", "WorkloadBaseConfig"):
                base = dict(out.get(v.args[0].id, {})) if v.func.id == "replace" and v.args and isinstance(v.args[0], ast.Name) else {}
                for k in v.keywords:
                    try:
                        base[k.arg] = ast.literal_eval(k.value)
                    except ValueError:
                        pass
                out[name] = base
    return out


RECIPE_FUNC_PREC = {"bf16": "BF16", "fp8cs": "FP8_CS", "fp8sc": "FP8_SC", "fp8mx": "FP8_MX", "nvfp4": "NVFP4"}
# attribute written in a perf-recipe function -> the preset key of the older workload presets
RECIPE_ATTR = {"overlap_moe_expert_parallel_comm": "moe_a2a_overlap"}


def perf_recipe_functions(repo, commit):
    """The same presets from src/megatron/bridge/perf_recipes/ (July 2026 on): each
    <model>_pretrain_<N>gpu_<gpu>_<precision>[_variant]_config function's literal assignments
    to cfg.<section>.<name>, and those of the helpers it calls (defined in the same package),
    named as the older presets name them."""
    files = [f for f in git(repo, "ls-tree", "-r", "--name-only", commit, "src/megatron/bridge/perf_recipes").split()
             if f.endswith(".py")]
    funcs = {}
    for f in files:
        for node in ast.parse(git(repo, "show", f"{commit}:{f}")).body:
            if isinstance(node, ast.FunctionDef):
                funcs.setdefault(node.name, node)

    def collect(fn, out, depth=0):
        # the function's own statements in order (a later one wins); conditional blocks skipped
        for st in fn.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Attribute):
                try:
                    out[RECIPE_ATTR.get(st.targets[0].attr, st.targets[0].attr)] = ast.literal_eval(st.value)
                except ValueError:
                    pass
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name):
                call, name = st.value, st.value.func.id
                if name == "set_deepseek_v3_pipeline_model_parallel_layout" and len(call.args) > 1:
                    out["pp_layout"] = ast.literal_eval(call.args[1])
                elif name in funcs and depth < 2 and not name.endswith("pretrain_config"):
                    collect(funcs[name], out, depth + 1)

    presets = {}
    for name, fn in funcs.items():
        m = re.fullmatch(r"(\w+?)_pretrain_(\d+)gpu_([a-z0-9]+)_(bf16|fp8cs|fp8sc|fp8mx|nvfp4)(_\w+)?_config", name)
        if not m:
            continue
        out = {"num_gpus": int(m.group(2))}
        collect(fn, out)
        presets[f"{m.group(1).upper()}_PRETRAIN_CONFIG_{m.group(3).upper()}_"
                f"{RECIPE_FUNC_PREC[m.group(4)]}{(m.group(5) or '').upper()} ({name})"] = out
    return presets


def matching_recipes(recipes, arch_name, sysname, prec_label, layout):
    """The presets of this model, system and precision whose layout is the published one."""
    found = []
    for name, c in recipes.items():
        for p in RECIPE_PREC[prec_label]:
            if not re.fullmatch(rf"{RECIPE_MODEL[arch_name]}_PRETRAIN_CONFIG_{RECIPE_GPU[sysname]}_{p}(_\w+)?( \(\w+\))?", name):
                continue
            got = (c.get("num_gpus"), c.get("tensor_model_parallel_size", 1),
                   c.get("pipeline_model_parallel_size", 1), c.get("context_parallel_size", 1),
                   c.get("virtual_pipeline_model_parallel_size") or 1,
                   c.get("expert_model_parallel_size", 1), c.get("global_batch_size"),
                   c.get("micro_batch_size", 1))
            if got == layout:
                found.append((name, p, c))
    return found


RECIPE_KEYS = ("expert_tensor_parallel_size", "recompute_granularity", "moe_flex_dispatcher_backend", "moe_a2a_overlap",
               "recompute_modules", "recompute_num_layers", "cuda_graph_impl", "cuda_graph_scope",
               "pp_layout", "fine_grained_activation_offloading", "offload_modules",
               "cpu_offloading_num_layers", "use_megatron_fsdp", "moe_token_dispatcher_type")


def apply_recipe(row, match, at):
    """Fill what the one matching preset states; the rest stays in `assumed`."""
    name, p, c = match
    assumed = row["assumed"].split(";")
    features = [f for f in row["features"].split(";") if f]
    if c.get("use_megatron_fsdp"):
        return False
    if c.get("expert_tensor_parallel_size") is not None:
        row["etp"] = c["expert_tensor_parallel_size"]
        assumed.remove("etp")
    if c.get("moe_token_dispatcher_type") and not c.get("moe_flex_dispatcher_backend"):
        row["token_dispatcher"] = c["moe_token_dispatcher_type"]
        assumed.remove("token_dispatcher")
    if c.get("moe_flex_dispatcher_backend"):
        row["token_dispatcher"] = "flex"
        features.append({"deepep": "deepep", "hybridep": "hybridep"}[c["moe_flex_dispatcher_backend"]])
        assumed.remove("token_dispatcher")
    # an older preset's moe_a2a_overlap (default False) is applied to every run of the perf
    # scripts; a perf-recipe function states it only where it sets it
    if "moe_a2a_overlap" in c or not name.endswith(")"):
        row["overlap_moe_expert_parallel_comm"] = int(bool(c.get("moe_a2a_overlap", False)))
        assumed.remove("overlap_moe_expert_parallel_comm")
    if c.get("moe_a2a_overlap"):
        features.append("moe-a2a-overlap")
    if "recompute_granularity" in c and c["recompute_granularity"] is None and not c.get("recompute_modules"):
        assumed.remove("recompute_granularity")  # stated off; the row's value is already none
    elif c.get("recompute_modules"):
        row["recompute_granularity"] = "selective"
        features.append("selective-recompute-modules")
        assumed.remove("recompute_granularity")
    if c.get("cuda_graph_impl") not in (None, "none"):
        features.append("cuda-graphs")
    if c.get("fine_grained_activation_offloading"):
        features.append("fine-grained-offloading")
    if c.get("pp_layout"):
        row["pipeline_layout"] = c["pp_layout"]
        for k in ("pipeline_layout", "first_stage_layers", "last_stage_layers"):
            assumed.remove(k)
    if row["precision"] == "fp8" and not row["fp8_recipe"] and p in RECIPE_FP8:
        row["fp8_recipe"] = RECIPE_FP8[p]
        if RECIPE_FP8[p] == "mxfp8":
            features.append("mxfp8")
    stated = {k: c[k] for k in RECIPE_KEYS if c.get(k) not in (None, False)}
    row["features"] = ";".join(features)
    row["assumed"] = ";".join(assumed)
    row["note"] += f"; preset {name} at {at[:9]}: {stated}"
    return True


def pages(repo, commits):
    for commit in commits:
        for path in FILES:
            try:
                yield commit, path, git(repo, "show", f"{commit}:{path}")
            except subprocess.CalledProcessError:
                continue


def row_key(release, sysname, label, r):
    return (release, sysname, label, r.get("Precision", ""), r["#-GPUs"], r["GBS"], r["MBS"],
            r["TP"], r["PP"], r.get("CP", "1"), r["VP"], r.get("EP", "n/a"))


def main(repo, out):
    commits = git(repo, "log", "--format=%H", HEAD, "--", *FILES).split()  # newest first
    first_published = {}
    for commit, path, text in pages(repo, reversed(commits)):
        for release, sysname, label, r, _ in pretraining_rows(text):
            first_published.setdefault(row_key(release, sysname, label, r), commit)
    rows, seen, skipped, recipes = [], set(), {}, {}
    for commit, path, text in pages(repo, commits):
            for release, sysname, label, r, _ in pretraining_rows(text):
                key = row_key(release, sysname, label, r)
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
                at = first_published[key]
                if at not in recipes:
                    recipes[at] = {**workload_configs(repo, at), **perf_recipe_functions(repo, at)}
                rows += convert(release, sysname, label, r, commit, path, skipped,
                                (at, recipes[at]))
    rows.sort(key=lambda x: x["id"])
    schema_moe.write(out, rows)
    return skipped


def convert(release, sysname, label, r, commit, path, skipped, recipes):
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
        row = dict(
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
                  f"architecture: HF {hf} config.json"))
        at, presets = recipes
        found = matching_recipes(presets, arch_name, sysname, prec_label,
                                 (gpus, tp, pp, cp, vp, ep, gbs, mbs))
        distinct = {repr(sorted((k, c.get(k)) for k in RECIPE_KEYS)) + p for _, p, c in found}
        if len(distinct) == 1:
            apply_recipe(row, found[0], at)
        else:
            row["note"] += (f"; {len(found)} presets at {at[:9]} match the published layout"
                            + (" and differ" if found else ""))
        out.append(row)
    return out


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo"
    here = os.path.dirname(os.path.abspath(__file__))
    sk = main(repo, os.path.join(here, "..", "moe", "megatron_bridge_perf_moe.csv"))
    for why, what in sorted(sk.items()):
        print(f"skipped ({why}): {len(what)} tables/rows, e.g. {sorted(what)[0]}")
