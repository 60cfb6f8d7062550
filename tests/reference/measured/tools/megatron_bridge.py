"""Megatron-Bridge performance summary -> megatron_bridge_perf.csv

Reads NVIDIA-NeMo/Megatron-Bridge at commit 067f987df03b8355b03192d88d70f1709fedf51a:
  docs/performance-summary.md and docs/performance-summary-archive.md
Keeps pre-training rows on DGX-H100 (and DGX-A100 if any) of dense models with CP = 1 and no
FSDP; converts Tokens/sec/GPU to seconds per iteration: T = GBS * seq / (tokens_s_gpu * GPUs).
Skips MoE models, SFT/LoRA tables, Blackwell systems (no preset), CP > 1 and FSDP > 0 rows.
The CP > 1 rows (same selection otherwise) go, held out, to excluded/megatron_bridge_perf_cp.csv.
Usage: python3 megatron_bridge.py [/path/to/Megatron-Bridge.git]
"""
import os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
FILES = ["docs/performance-summary.md", "docs/performance-summary-archive.md"]
# public architectures (Meta Llama 3 model cards / HF config.json)
DENSE = {
    "LLAMA3_8B": dict(num_layers=32, hidden_size=4096, num_attention_heads=32, num_query_groups=8,
                      ffn_hidden_size=14336, vocab_size=128256),
    "LLAMA3_70B": dict(num_layers=80, hidden_size=8192, num_attention_heads=64, num_query_groups=8,
                       ffn_hidden_size=28672, vocab_size=128256),
    "LLAMA3.1_405B": dict(num_layers=126, hidden_size=16384, num_attention_heads=128,
                          num_query_groups=8, ffn_hidden_size=53248, vocab_size=128256),
}
# Llama 3.1 405B's 126 layers do not split evenly over the published PP x VP: its recipe counts the
# embedding and the loss as layers (llama31_405b_pretrain_config, recipes/llama/h100/llama3.py at
# COMMIT: account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split True; the
# H100 performance recipes start from it and keep them). As a Megatron-Core layout string, for
# the PP x VP a row states: the first stage holds the embedding and one layer fewer, the last the
# loss and one layer fewer.
COUNTED_EMBEDDING_AND_LOSS = {"LLAMA3.1_405B"}


def counted_layout(num_layers, stages):
    """The layout string of --account-for-embedding/loss-in-pipeline-split over `stages`."""
    per = (num_layers + 2) // stages
    assert per * stages == num_layers + 2 and per >= 2, (num_layers, stages)
    return "E" + "t" * (per - 1) + "|" + f"({'t' * per}|)*{stages - 2}" + "t" * (per - 1) + "L"


SYSTEMS = {"DGX-H100": "dgx-h100", "DGX-A100": "dgx-a100-80gb"}
PREC = {"FP8": "fp8", "FP8-CS": "fp8", "BF16": "bf16"}


def pretraining_rows(text):
    """(release, system, model, cells by column, cells) of every pre-training table row of a
    performance-summary page; tables come per system (a Model column) or per model (a System one)."""
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
        yield release, r.get("System", system), r.get("Model", model), r, cells


def main(repo, out, context_parallel=False):
    """The CP 1 rows, or with context_parallel the CP > 1 ones."""
    rows, seen = [], set()
    for path in FILES:
        text = subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                              capture_output=True, text=True).stdout
        for release, sysname, mname, r, cells in pretraining_rows(text):
            if sysname not in SYSTEMS or mname not in DENSE:
                continue
            cp = 1 if r.get("CP", "1") in ("1", "n/a") else int(r["CP"])
            if (cp > 1) != context_parallel:
                continue
            if r.get("FSDP", "0") != "0" or r.get("EP", "n/a") not in ("n/a", "1"):
                continue
            gpus, gbs, mbs = int(r["#-GPUs"]), int(r["GBS"]), int(r["MBS"])
            seq = int(r["Sequence Length"])
            tp, pp = int(r["TP"]), int(r["PP"])
            vp = 1 if r["VP"] in ("n/a", "1") else int(r["VP"])
            tok = float(re.sub(r"\s*\(.*\)", "", r["Tokens / sec / GPU"]))
            tflops = re.sub(r"\s*\(.*\)", "", r["Model TFLOP / sec / GPU"])
            assumed = ["attention", "recompute_granularity", "distributed_optimizer",
                       "sequence_parallel", "first_stage_layers", "last_stage_layers",
                       "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap"]
            if "Precision" in r:
                prec = PREC[r["Precision"]]
                pnote = r["Precision"]
            else:
                prec, pnote = "fp8", "not stated in the 25.09 table"
                assumed.append("precision")
            key = (release, sysname, mname, tuple(cells))
            if key in seen:
                continue
            seen.add(key)
            T = gbs * seq / (tok * gpus)
            layout = ""
            if mname in COUNTED_EMBEDDING_AND_LOSS:
                layout = counted_layout(DENSE[mname]["num_layers"], pp * vp)
                assumed.append("pipeline_layout")  # the recipe's, not the published row's
            rows.append(dict(
                id=f"mbridge-{release}-{mname.lower()}-{sysname.lower()}-{gpus}g-gbs{gbs}" + (f"-cp{cp}" if cp > 1 else ""),
                source="megatron-bridge-perf", model=mname.lower(), **DENSE[mname],
                swiglu=1, normalization="rmsnorm", seq_length=seq, cluster=SYSTEMS[sysname],
                gpus=gpus, framework="nemo", attention="flash", precision=prec, tp=tp, cp=cp, pp=pp,
                dp=gpus // (tp * cp * pp), virtual_stages=vp, pipeline_layout=layout, first_stage_layers="",
                last_stage_layers="", sequence_parallel=1 if tp > 1 else 0,
                recompute_granularity="none", recompute_method="", recompute_num_layers="",
                micro_batch=mbs, global_batch=gbs, distributed_optimizer=1,
                overlap_grad_reduce=1, overlap_param_gather=1, tp_comm_overlap=int(tp > 1),
                iteration_time_s=f"{T:.4f}", peak_memory_gib="", assumed=";".join(assumed),
                note=(f"{path} {release} container; {tok:g} tokens/s/GPU ({tflops} model "
                      f"TFLOP/s/GPU; precision {pnote}) -> GBS*seq/(tok*GPUs)")))
    schema.write(out, rows)


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo"
    here = os.path.dirname(os.path.abspath(__file__))
    main(repo, os.path.join(here, "..", "megatron_bridge_perf.csv"))
    main(repo, os.path.join(here, "..", "excluded", "megatron_bridge_perf_cp.csv"), context_parallel=True)
