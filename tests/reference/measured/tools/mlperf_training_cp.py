"""MLPerf Training, context-parallel GPU submissions on H100/H200 -> excluded/mlperf_training_cp.csv

Held out (not fitted): every row runs context parallelism (CP 2).

Part 1, Llama 3.1 405B (benchmark `llama31_405b`, seq 8192), rounds v5.0 and v5.1 at the commits in
ROUNDS. For every <submitter>/results/<system>/llama31_405b/result_*.txt whose
<submitter>/systems/<system>.json names an H100 or H200 accelerator (the clusters with a preset):
  * nodes, global batch from their MLLOG keys (`submission_platform` "<N>x...", `global_batch_size`);
  * per-step time from the `tracked_stats` -> `train_step_time` values (seconds, one per step,
    logged by the implementation's custom_callbacks.py); the first SKIP steps of each run are
    dropped; a configuration's time is the median over its runs of each run's median;
  * layout from the one launch config
    <submitter>/benchmarks/llama31_405b/implementations/*/config_<SYS>_<nodes>x<gpn>x<MINIBS>xtp<TP>pp<PP>cp<CP>*.sh
    with global batch = MINIBS * GPUs / (TP*PP*CP) equal to the log's, plus the files it sources,
    run_and_time.sh defaults and conf/custom.yaml env defaults (mlperf_training.config_env).
A log byte-identical to one of an earlier round (Nebius re-published its v5.0 H200 runs in v5.1)
is counted once. Blackwell systems (GB200, GB300, B200) have no cluster preset and are listed, not converted.

Part 2, Llama 3.1 8B CP > 1 rows (mlperf_training.llama8b with context_parallel=True, round v5.1).

Usage: python3 mlperf_training_cp.py [mirror-root]  (mirror-root holds mlcommons+training_results_vX/repo)
"""
import os, re, statistics, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema
from mlperf_training import SKIP, config_env, grouped_runs, llama8b, truth

ROUNDS = {
    "v5.0": "0fdc28f013256aea84fa36fdaf1e0fa46094b18c",
    "v5.1": "441d65f4445cd59687466533fd9f55399136e7a4",
}
# Llama 3.1 405B, the public architecture the benchmark trains (conf/custom.yaml: num_layers 126,
# encoder_seq_length 8192; the rest from the NeMo 405B base config it names, MODEL_SIZE=405b).
L405 = dict(num_layers=126, hidden_size=16384, num_attention_heads=128, num_query_groups=8,
            ffn_hidden_size=53248, swiglu=1, normalization="rmsnorm", vocab_size=128256)
S = 8192
CLUSTER = {"H100": "dgx-h100", "H200": "h200"}


def pipeline_layout(layers, pp, vp, embedding, loss):
    """Megatron-Core's split under --account-for-embedding/loss-in-pipeline-split, written as its
    --pipeline-model-parallel-layout string: the embedding and the loss each count as one layer and
    every one of the pp*vp virtual stages takes the same number of slots."""
    slots = layers + embedding + loss
    chunks = pp * vp
    assert slots % chunks == 0, (layers, pp, vp)
    per = slots // chunks
    stages = [["t"] * per for _ in range(chunks)]
    if embedding:
        stages[0][0] = "E"
    if loss:
        stages[-1][-1] = "L"
    first, middle, last = "".join(stages[0]), "t" * per, "".join(stages[-1])
    assert all("".join(s) == middle for s in stages[1:-1])
    return f"{first}|({middle}|)*{chunks - 2}{last}"


def llama405b(root, skipped):
    rows = []
    groups, others = grouped_runs(root, ROUNDS, "llama31_405b", tuple(CLUSTER))
    for rnd, sub, system, acc in others:
        skipped.add(f"{rnd} {sub}/{system}: {acc or 'no systems json'}, no cluster preset")
    for (rnd, sub, system, acc), g in sorted(groups.items()):
        gpu = next(name for name in CLUSTER if name in acc)
        repo, commit, files = g["repo"], g["commit"], g["files"]
        (gbs,), (nodes,) = g["gbs"], g["nodes"]
        cands = []
        for c in files:
            cm = re.match(rf"^{re.escape(sub)}/benchmarks/llama31_405b/implementations/[^/]+/"
                          rf"config_\w+?_(\d+)x(\d+)x(\d+)xtp(\d+)pp(\d+)cp(\d+)[^/]*\.sh$", c)
            if not cm:
                continue
            n, gpn, mini, tp, pp, cp = (int(x) for x in cm.groups())
            if n == nodes and mini * (n * gpn // (tp * pp * cp)) == gbs:
                cands.append((c, n, gpn, mini, tp, pp, cp))
        # one config copied into several implementation folders: the one named after the system
        named = [c for c in cands if f"/implementations/{system}/" in c[0]]
        cands = named or cands
        assert len(cands) == 1, (rnd, sub, system, [c[0] for c in cands])
        cfg, n, gpn, mini, tp, pp, cp = cands[0]
        env = config_env(repo, commit, cfg, files)
        assert int(env["TENSOR_MODEL_PARALLEL"]) == tp and int(env["PIPELINE_MODEL_PARALLEL"]) == pp
        assert int(env["CONTEXT_PARALLEL"]) == cp
        gpus = n * gpn
        dp = gpus // (tp * pp * cp)
        mbs = int(env["MICRO_BATCH_SIZE"])
        vp_raw = env.get("INTERLEAVED_PIPELINE", "null")
        vp = 1 if vp_raw in ("null", "0", "", "None") else int(vp_raw)
        emb, loss = truth(env.get("ASYM_PP_EMBED", "False")), truth(env.get("ASYM_PP_LOSS", "False"))
        layout = pipeline_layout(L405["num_layers"], pp, vp, emb, loss) if (emb or loss) else ""
        gran = env.get("ACT_CKPT_GRANULARITY", "null")
        gran = "none" if gran in ("null", "None", "") else gran
        assert gran == "none", (cfg, gran)
        sp = int(truth(env.get("SEQ_PARALLEL", "True")) and tp > 1)
        prec = "fp8" if truth(env.get("FP8", "False")) else "bf16"
        it = statistics.median(g["runs"])
        assumed = ["attention"]
        if sub != "NVIDIA":
            assumed.append("cluster")  # not a DGX: the preset of the same GPU and fabric
        rows.append(dict(
            id=f"mlperf-{rnd}-{sub.lower()}-{system.lower()}-llama31-405b",
            source="mlperf-training", model="llama3.1-405b", **L405, seq_length=S,
            cluster=CLUSTER[gpu], gpus=gpus, framework="nemo", attention="flash", precision=prec,
            tp=tp, cp=cp, cp_comm_type="p2p", pp=pp, dp=dp,
            virtual_stages=vp, pipeline_layout=layout, first_stage_layers="", last_stage_layers="",
            sequence_parallel=sp, recompute_granularity=gran, recompute_method="",
            recompute_num_layers="", micro_batch=mbs, global_batch=gbs,
            distributed_optimizer=int(truth(env.get("USE_DIST_OPTIMIZER", "True"))),
            overlap_grad_reduce=int(truth(env.get("OVERLAP_GRAD_REDUCE", "False"))),
            overlap_param_gather=int(truth(env.get("OVERLAP_PARAM_GATHER", "False"))),
            tp_comm_overlap=int(truth(env.get("TP_COMM_OVERLAP", "False")) and sp == 1),
            iteration_time_s=f"{it:.4f}", peak_memory_gib="", assumed=";".join(assumed),
            note=(f"training_results_{rnd} {sub}/results/{system} ({acc}); {os.path.basename(cfg)}; "
                  f"{len(g['runs'])} runs / {g['n']} steps (first {SKIP} per run dropped); run medians "
                  f"{min(g['runs']):.3f}-{max(g['runs']):.3f} s; FP8 params {env.get('FP8_PARAMS')}; "
                  f"ASYM_PP_EMBED/LOSS {emb}/{loss}; cp_comm_type not set (Megatron-Core's p2p)")))
    return rows


def main(root, out):
    skipped = set()
    rows = llama405b(root, skipped) + llama8b(root, context_parallel=True)
    for s in sorted(skipped):
        print("skipped:", s)
    schema.write(out, rows)


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"
    main(root, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "excluded", "mlperf_training_cp.csv"))
