"""vTrain single-node ground truth -> tests/reference/measured/vtrain_single.csv

Reads VIA-Research/vTrain at commit f8dda8473a48b373b1d25f51f52d685bff5150c5:
  data/ground_truth_single.csv           (measured iteration time, ms)
  config/validation/single/config_val_single_NNNN.json  (row NNNN's vTrain config; used only
                                          to confirm the layout and read use_checkpoint)
Usage: python3 vtrain.py /path/to/vTrain.git   (a bare mirror or a checkout)
"""
import csv, json, os, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

COMMIT = "f8dda8473a48b373b1d25f51f52d685bff5150c5"


def show(repo, path):
    return subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def main(repo, out):
    text = show(repo, "data/ground_truth_single.csv").lstrip("\ufeff")
    rows = list(csv.reader(text.splitlines()))[1:]
    out_rows = []
    for i, r in enumerate(rows):
        g, gb, mb, h, a, l, s, tp, dp, pp, ms = r
        cfg = json.loads(show(repo, f"config/validation/single/config_val_single_{i:04d}.json"))
        assert [cfg["num_gpus"], cfg["global_batch_size"], cfg["micro_batch_size"],
                cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_layers"],
                cfg["max_length"], cfg["tensor_parallel_size"], cfg["data_parallel_size"],
                cfg["pipeline_parallel_size"]] == [int(x) for x in r[:10]], i
        assert cfg["use_checkpoint"] is True and cfg["gpu_name"] == "A100"
        h = int(h)
        out_rows.append(dict(
            id=f"vtrain-{i:04d}", source="vtrain-single", model=f"gpt-l{l}-h{h}",
            num_layers=l, hidden_size=h, num_attention_heads=a, num_query_groups=a,
            ffn_hidden_size=4 * h, swiglu=0, normalization="layernorm", seq_length=s,
            vocab_size=50257, cluster="dgx-a100-80gb", gpus=g, framework="megatron-deepspeed",
            attention="unfused", precision="fp16", tp=tp, pp=pp, dp=dp, virtual_stages=1,
            first_stage_layers="", last_stage_layers="", sequence_parallel=0,
            recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1,
            micro_batch=mb, global_batch=gb, distributed_optimizer=0,
            iteration_time_s=f"{float(ms) / 1000:.6f}", peak_memory_gib="",
            assumed="vocab_size;cluster;attention;precision;sequence_parallel;"
                    "recompute_method;recompute_num_layers;distributed_optimizer",
            note=f"config_val_single_{i:04d}.json; use_checkpoint=true; 1f1b; "
                 "no DDP gradient bucketing"))
    schema.write(out, out_rows)


if __name__ == "__main__":
    repo = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/VIA-Research+vTrain/repo"
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vtrain_single.csv")
    main(repo, out)
