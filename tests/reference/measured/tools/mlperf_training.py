"""MLPerf Training results, GPU submissions on A100/H100/H200 -> mlperf_training.csv

Part 1, GPT-3 175B (benchmark `gpt3`, rounds v3.0-v4.1); part 2 (function llama8b), Llama 3.1 8B
(benchmark `llama31_8b`, round v5.1, commit in ROUNDS8B), CP = 1 configurations only.

Reads the mlcommons/training_results_v3.0, v3.1, v4.0 and v4.1 repositories at the commits in
ROUNDS.  For every <submitter>/results/<system>/gpt3/result_*.txt log:
  * nodes from the `submission_platform` value ("<N>x..."), global batch and
    gradient_accumulation_steps from their MLLOG keys;
  * per-step time from the `tracked_stats` -> `train_step_timing` values (seconds); the first
    SKIP logged steps of each run are dropped; a configuration's iteration time is the median over
    its runs of each run's median;
  * layout from the submitter's launch config named
    config_<SYS>_<nodes>x8x<MINIBS>x<TP>x<PP>_mbs<MBS>[...].sh, chosen so that
    MINIBS/MBS == gradient_accumulation_steps and nodes*8/(TP*PP)*MINIBS == global batch,
    plus the `export` lines of the files it sources and the defaults in run_and_time.sh
    (': "${VAR:=default}"') and conf/custom.yaml ('${oc.env:VAR,default}').
Byte-identical logs re-published in a later round are counted once.
Usage: python3 mlperf_training.py [mirror-root]   (mirror-root holds mlcommons+training_results_vX/repo)
"""
import hashlib, json, os, re, statistics, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

ROUNDS = {
    "v3.0": "63e326c400f5d8bb8c6070a9ab08332d4931152e",
    "v3.1": "d06288b2bd675a9d88e0e6181f5bb5626b71ec19",
    "v4.0": "6fe954378efe4a1a1bd665550b18ff8f26018def",
    "v4.1": "b87b9e396f771345d4ef122ba33456304f15228d",
}
SKIP = 5
SKIP_SUBMITTERS = ("Google", "Intel-HabanaLabs")  # TPUs / Gaudi: no preset, not Megatron
# MLPerf GPT-3 175B reference model (fixed by the benchmark rules)
L, H, A, S = 96, 12288, 96, 2048


def git(repo, commit, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def parse_exports(text, env):
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        m = re.match(r'^export\s+(\w+)=(.*)$', line)
        if not m:
            continue
        var, val = m.group(1), m.group(2).strip().strip('"')
        d = re.match(r'^\$\{\w+:[-=]([^}]*)\}$', val)
        if d:
            val = d.group(1)
        env[var] = val


def config_env(repo, commit, cfg_path, files):
    """Evaluate the export lines of cfg_path and the files it sources (same dir)."""
    env = {}
    d = os.path.dirname(cfg_path)

    def run(path):
        text = git(repo, commit, "show", f"{commit}:{path}")
        for line in text.splitlines():
            s = re.match(r'^\s*source\s+\$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(\S+)', line)
            if s:
                p = f"{d}/{s.group(1)}"
                if p in files:
                    run(p)
                continue
            parse_exports(line, env)
    run(cfg_path)
    defaults = {}
    rat = f"{d}/run_and_time.sh"
    if rat in files:
        for m in re.finditer(r':\s*"\$\{(\w+):=([^}]*)\}"', git(repo, commit, "show", f"{commit}:{rat}")):
            defaults.setdefault(m.group(1), m.group(2).strip('"'))
    cy = f"{d}/conf/custom.yaml"
    if cy in files:
        for m in re.finditer(r'oc\.env:(\w+),([^}]*)\}', git(repo, commit, "show", f"{commit}:{cy}")):
            defaults.setdefault(m.group(1), m.group(2).strip().strip('"'))
    for k, v in defaults.items():
        env.setdefault(k, v)
    return env


KEYS = ("NUM_LAYERS", "HIDDEN_SIZE", "INTERLEAVED_PIPELINE", "ACT_CKPT_GRANULARITY",
        "ACT_CKPT_METHOD", "ACT_CKPT_NUM_LAYERS", "FP8", "FP8_HYBRID", "SEQ_PARALLEL",
        "USE_DIST_OPTIMIZER", "TP_COMM_OVERLAP", "MICRO_BATCH_SIZE")


def layout(repo, commit, cfg, files):
    env = config_env(repo, commit, cfg, files)
    assert int(env.get("NUM_LAYERS", L)) == L and int(env.get("HIDDEN_SIZE", H)) == H, cfg
    return {k: env.get(k) for k in KEYS}


def log_stats(text):
    gbs = ga = nodes = None
    times = []
    for line in text.splitlines():
        i = line.find(":::MLLOG")
        if i < 0:
            continue
        line = line[i:]
        if '"tracked_stats"' not in line and '"global_batch_size"' not in line and \
           '"gradient_accumulation_steps"' not in line and '"submission_platform"' not in line:
            continue
        rec = json.loads(line[len(":::MLLOG"):])
        k, v = rec["key"], rec["value"]
        if k == "global_batch_size":
            gbs = int(v)
        elif k == "gradient_accumulation_steps":
            ga = int(float(v))
        elif k == "submission_platform":
            nodes = int(str(v).split("x")[0])
        elif k == "tracked_stats" and isinstance(v, dict):
            for tk in ("train_step_timing", "train_step_timing in s", "train_step_time"):
                if tk in v:
                    times.append(float(v[tk]))
    return nodes, gbs, ga, times


def truth(v):
    return str(v).strip().lower() in ("true", "1")


def main(root, out):
    configs, seen = {}, set()
    for rnd, commit in ROUNDS.items():
        repo = f"{root}/mlcommons+training_results_{rnd}/repo"
        files = set(git(repo, commit, "ls-tree", "-r", "--name-only", commit).splitlines())
        for f in sorted(files):
            m = re.match(r"^([^/]+)/results/([^/]+)/gpt3/result_\d+\.txt$", f)
            if not m or m.group(1).startswith(SKIP_SUBMITTERS):
                continue
            sub, system = m.group(1), m.group(2)
            if "b200" in system.lower():
                continue  # Blackwell: no preset
            text = git(repo, commit, "show", f"{commit}:{f}")
            h = hashlib.sha256(text.encode()).hexdigest()
            if h in seen:
                continue
            seen.add(h)
            nodes, gbs, ga, times = log_stats(text)
            times = times[SKIP:]
            if not times:
                print("no step times:", rnd, f)
                continue
            cands = []
            for c in files:
                cm = re.match(rf"^{re.escape(sub)}/benchmarks/gpt3/.*/config_(\w+?)_(\d+)x8x(\d+)x(\d+)x(\d+)_mbs(\d+)[^/]*\.sh$", c)
                if not cm:
                    continue
                n, mini, tp, pp, mbs = (int(x) for x in cm.groups()[1:])
                if n == nodes and mini // mbs == ga and nodes * 8 // (tp * pp) * mini == gbs:
                    cands.append((c, cm.group(1), tp, pp, mbs, mini))
            if len(cands) > 1:
                # identical copies of one config in several implementation folders (Oracle):
                # accept only if every copy yields the same layout
                lay = {json.dumps(layout(repo, commit, c[0], files), sort_keys=True) for c in cands}
                if len(lay) == 1:
                    cands = sorted(cands, key=lambda c: (os.path.basename(os.path.dirname(c[0])) not in c[0].split("/")[-1], c[0]))[:1]
            if len(cands) != 1:
                print("config not unique or missing:", rnd, f, nodes, gbs, ga, [c[0] for c in cands])
                continue
            key = (rnd, sub, system)
            configs.setdefault(key, {"cfg": cands[0], "runs": [], "files": []})
            configs[key]["runs"].append(statistics.median(times))
            configs[key]["files"].append((f, len(times)))
    rows = []
    for (rnd, sub, system), c in sorted(configs.items()):
        cfg, sysname, tp, pp, mbs, mini = c["cfg"]
        repo = f"{root}/mlcommons+training_results_{rnd}/repo"
        env = layout(repo, ROUNDS[rnd], cfg,
                     set(git(repo, ROUNDS[rnd], "ls-tree", "-r", "--name-only", ROUNDS[rnd]).splitlines()))
        gpus = int(re.search(r"_(\d+)x8x", os.path.basename(cfg)).group(1)) * 8
        dp = gpus // (tp * pp)
        gbs = dp * mini
        assumed = ["vocab_size", "attention"]
        # a value the submission's files do not set (Oracle ships no conf/custom.yaml): take the
        # default of NVIDIA's NeMo GPT-3 config of the same round and mark the column assumed
        for k, col, dflt in (("ACT_CKPT_GRANULARITY", "recompute_granularity", "null"),
                             ("SEQ_PARALLEL", "sequence_parallel", "True"),
                             ("INTERLEAVED_PIPELINE", "virtual_stages", "12")):
            if env.get(k) is None:
                env[k] = dflt
                assumed.append(col)
        vp_raw = env.get("INTERLEAVED_PIPELINE", "null")
        vp = 1 if vp_raw in ("null", "0", "", "None") else int(vp_raw)
        gran = env.get("ACT_CKPT_GRANULARITY", "null")
        gran = "none" if gran in ("null", "None", "") else gran
        meth = env.get("ACT_CKPT_METHOD", "") if gran == "full" else ""
        nrl = env.get("ACT_CKPT_NUM_LAYERS", "") if gran == "full" else ""
        prec = "fp8" if truth(env.get("FP8", "False")) else "bf16"
        sp = int(truth(env.get("SEQ_PARALLEL", "True")))
        dopt = int(truth(env.get("USE_DIST_OPTIMIZER", "True")))
        tpo = env.get("TP_COMM_OVERLAP", "?")
        cg = "_cg" in cfg
        it = statistics.median(c["runs"])
        cluster = "dgx-h100"
        if sub != "NVIDIA":
            assumed.append("cluster")  # CoreWeave / Azure / Oracle H100 clusters, not DGX
        nsteps = sum(n for _, n in c["files"])
        rows.append(dict(
            id=f"mlperf-{rnd}-{sub.lower().replace('+', '-')}-{system.lower()}",
            source="mlperf-training", model="gpt3-175b", num_layers=L, hidden_size=H,
            num_attention_heads=A, num_query_groups=A, ffn_hidden_size=4 * H, swiglu=0,
            normalization="layernorm", seq_length=S, vocab_size=50257, cluster=cluster,
            gpus=gpus, framework="nemo", attention="flash", precision=prec, tp=tp, pp=pp, dp=dp,
            virtual_stages=vp, first_stage_layers="", last_stage_layers="", sequence_parallel=sp,
            recompute_granularity=gran, recompute_method=meth, recompute_num_layers=nrl,
            micro_batch=mbs, global_batch=gbs, distributed_optimizer=dopt,
            tp_comm_overlap="" if tpo == "?" else int(truth(tpo) and sp == 1),
            iteration_time_s=f"{it:.4f}", peak_memory_gib="", assumed=";".join(assumed),
            note=(f"training_results_{rnd} {sub}/results/{system}; {os.path.basename(cfg)}; "
                  f"{len(c['runs'])} runs / {nsteps} steps (first {SKIP} per run dropped); "
                  f"run medians {min(c['runs']):.3f}-{max(c['runs']):.3f} s; TP comm overlap "
                  f"{tpo}; CUDA graphs {'yes' if cg else 'no'}; layernorm1p")))
    rows += llama8b(root)
    schema.write(out, rows)


ROUNDS8B = {"v5.1": "441d65f4445cd59687466533fd9f55399136e7a4"}
# Llama 3.1 8B (public architecture; the MLPerf benchmark trains it at seq 8192)
L8 = dict(num_layers=32, hidden_size=4096, num_attention_heads=32, num_query_groups=8,
          ffn_hidden_size=14336, swiglu=1, normalization="rmsnorm", vocab_size=128256)
GPU_OK = ("H100", "H200", "A100")


def grouped_runs(root, rounds, benchmark, accelerators):
    """Every <submitter>/results/<system>/<benchmark>/result_*.txt of `rounds` whose
    <submitter>/systems/<system>.json names an accelerator containing one of `accelerators`,
    grouped by (round, submitter, system, accelerator): each run's median step time after the
    first SKIP steps, the logs' global batches and node counts, the steps read. A log
    byte-identical to one read before is counted once. Also returns the other systems, as
    (round, submitter, system, accelerator or '')."""
    seen, groups, others = set(), {}, set()
    for rnd, commit in rounds.items():
        repo = f"{root}/mlcommons+training_results_{rnd}/repo"
        files = set(git(repo, commit, "ls-tree", "-r", "--name-only", commit).splitlines())
        for f in sorted(files):
            m = re.match(rf"^([^/]+)/results/([^/]+)/{benchmark}/result_\d+\.txt$", f)
            if not m:
                continue
            sub, system = m.groups()
            sj = f"{sub}/systems/{system}.json"
            acc = json.loads(git(repo, commit, "show", f"{commit}:{sj}")).get("accelerator_model_name", "") \
                if sj in files else ""
            if not any(a in acc for a in accelerators):
                others.add((rnd, sub, system, acc))
                continue
            text = git(repo, commit, "show", f"{commit}:{f}")
            digest = hashlib.sha256(text.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            nodes, gbs, _, times = log_stats(text)
            times = times[SKIP:]
            if times:
                g = groups.setdefault((rnd, sub, system, acc), {"runs": [], "gbs": set(), "nodes": set(), "n": 0,
                                                                "repo": repo, "commit": commit, "files": files})
                g["runs"].append(statistics.median(times))
                g["gbs"].add(gbs); g["nodes"].add(nodes); g["n"] += len(times)
    return groups, others


def llama8b(root, context_parallel=False):
    """The CP 1 configurations, or with context_parallel the CP > 1 ones (held out)."""
    rows = []
    for (rnd, sub, system, acc), g in sorted(grouped_runs(root, ROUNDS8B, "llama31_8b", GPU_OK)[0].items()):
        repo, commit, files = g["repo"], g["commit"], g["files"]
        (gbs,), (nodes,) = g["gbs"], g["nodes"]
        cands = []
        for c in files:
            cm = re.match(rf"^{re.escape(sub)}/benchmarks/llama3(?:1)?_8b/.*/config_\w+?_(\d+)x(\d+)x(\d+)xtp(\d+)pp(\d+)cp(\d+)[^/]*\.sh$", c)
            if cm and int(cm.group(1)) == nodes:
                cands.append((c, *(int(x) for x in cm.groups())))
        if len(cands) != 1:
            print("llama31_8b config not unique:", sub, system, [c[0] for c in cands])
            continue
        cfg, n, gpn, mini, tp, pp, cp = cands[0]
        env = config_env(repo, commit, cfg, files)
        if (cp > 1) != context_parallel:
            continue
        gpus = n * gpn
        dp = gpus // (tp * pp * cp)
        mbs = int(env["MICRO_BATCH_SIZE"])
        assert dp * mini == gbs, (cfg, dp, mini, gbs)
        vp_raw = env.get("INTERLEAVED_PIPELINE", "1")
        vp = 1 if vp_raw in ("null", "None", "0", "") else int(vp_raw)
        it = statistics.median(g["runs"])
        rows.append(dict(
            id=f"mlperf-{rnd}-{sub.lower()}-{system.lower()}-llama31-8b",
            source="mlperf-training", model="llama3.1-8b", **L8, seq_length=8192,
            cluster="dgx-h100" if "H100" in acc else ("h200" if "H200" in acc else "dgx-a100-80gb"),
            gpus=gpus, framework="nemo", attention="flash",
            precision="fp8" if truth(env.get("FP8", "False")) else "bf16",
            tp=tp, cp=cp, pp=pp, dp=dp, virtual_stages=vp, first_stage_layers="", last_stage_layers="",
            sequence_parallel=int(tp > 1), recompute_granularity="none", recompute_method="",
            recompute_num_layers="", micro_batch=mbs, global_batch=gbs,
            distributed_optimizer=int(truth(env.get("USE_DIST_OPTIMIZER", "True"))),
            overlap_grad_reduce=1, overlap_param_gather=1,
            tp_comm_overlap=int(truth(env.get("TP_COMM_OVERLAP", "False")) and tp > 1),
            iteration_time_s=f"{it:.4f}", peak_memory_gib="",
            assumed="cluster;attention;sequence_parallel;recompute_granularity",
            note=(f"training_results_{rnd} {sub}/results/{system} ({acc}); {os.path.basename(cfg)}; "
                  f"{len(g['runs'])} runs / {g['n']} steps (first {SKIP} per run dropped); run medians "
                  f"{min(g['runs']):.3f}-{max(g['runs']):.3f} s; FP8 params; TP comm overlap "
                  f"{env.get('TP_COMM_OVERLAP')}; overlap grad-reduce/param-gather")))
    return rows


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"
    main(root, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mlperf_training.csv"))
