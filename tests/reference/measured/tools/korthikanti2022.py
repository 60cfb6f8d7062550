"""Korthikanti et al. 2022, arXiv 2205.05198, Table 3 configs + Table 5 iteration times
-> korthikanti2022_table5.csv.  Reads the project's own transcription
tests/reference/korthikanti2022.csv (same rows as ../shared/reference/korthikanti2022.csv).
"""
import csv, os, sys
sys.path.insert(0, os.path.dirname(__file__))
import schema

HERE = os.path.dirname(os.path.abspath(__file__))


def main(src, out):
    rows = []
    for r in csv.DictReader(open(src)):
        sel = r["recompute"] == "selective"
        h = int(r["hidden"])
        assumed = []
        note = r["source"]
        if r["model"] == "gpt-1t":
            assumed.append("virtual_stages")
        rows.append(dict(
            id=f"korthikanti2022-{r['model'][4:]}-{'sp-sel' if sel else 'full'}",
            source="korthikanti2022-table5", model=r["model"], num_layers=r["layers"],
            hidden_size=h, num_attention_heads=r["heads"], num_query_groups=r["heads"],
            ffn_hidden_size=4 * h, swiglu=0, normalization="layernorm",
            seq_length=r["seq_len"], vocab_size=r["vocab"], cluster="dgx-a100-80gb",
            gpus=r["gpus"], framework="megatron-2022", attention="unfused", precision="bf16",
            tp=r["tp"], pp=r["pp"], dp=r["dp"], virtual_stages=r["virtual_stages"],
            first_stage_layers="", last_stage_layers="",
            sequence_parallel=r["sequence_parallel"], recompute_granularity=r["recompute"],
            recompute_method="" if sel else "uniform", recompute_num_layers="" if sel else 1,
            micro_batch=r["micro_batch"], global_batch=r["global_batch"],
            distributed_optimizer=0, iteration_time_s=r["iteration_time_s"],
            peak_memory_gib="",
            assumed=";".join(assumed + ["precision", "distributed_optimizer"]),
            note=note))
    schema.write(out, rows)


if __name__ == "__main__":
    main(os.path.join(HERE, "..", "..", "korthikanti2022.csv"),
         os.path.join(HERE, "..", "korthikanti2022_table5.csv"))
