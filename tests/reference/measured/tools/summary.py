"""Print the totals table of the corpus (rows per source, GPU generations, GPU range, DP>1), then
the same table for the held-out rows in excluded/."""
import csv, glob, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = {"dgx-a100-40gb": "A100", "dgx-a100-80gb": "A100", "azure-nd-a100-v4": "A100",
       "dgx-h100": "H100", "h200": "H200"}


def main(folder):
    allrows = []
    print("| file | source | rows | GPUs | GPU range | frameworks | DP>1 | fully stated |")
    print("|---|---|---|---|---|---|---|---|")
    for f in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        with open(f) as fh:
            header = fh.readline().strip().split(",")
        assert header == schema.COLUMNS, f"{f}: header differs from the schema"
        rows = list(csv.DictReader(open(f)))
        for r in rows:
            schema.check(r)
        assert len({r["source"] for r in rows}) == 1, f"{f}: more than one source key"
        allrows += rows
        g = [int(r["gpus"]) for r in rows]
        gens = sorted({GEN[r["cluster"]] for r in rows})
        fw = sorted({r["framework"] for r in rows})
        dp = sum(int(r["dp"]) > 1 for r in rows)
        full = sum(r["assumed"] == "" for r in rows)
        print(f"| {os.path.basename(f)} | {rows[0]['source']} | {len(rows)} | {'/'.join(gens)} | "
              f"{min(g)}-{max(g)} | {', '.join(fw)} | {dp} ({100*dp/len(rows):.0f}%) | {full} |")
    g = [int(r["gpus"]) for r in allrows]
    dp = sum(int(r["dp"]) > 1 for r in allrows)
    ids = [r["id"] for r in allrows]
    assert len(ids) == len(set(ids)), "duplicate ids across files"
    print(f"| **total** | {len({r['source'] for r in allrows})} sources | {len(allrows)} | "
          f"{'/'.join(sorted({GEN[r['cluster']] for r in allrows}))} | {min(g)}-{max(g)} | "
          f"{', '.join(sorted({r['framework'] for r in allrows}))} | {dp} ({100*dp/len(allrows):.0f}%) | "
          f"{sum(r['assumed'] == '' for r in allrows)} |")


if __name__ == "__main__":
    main(os.path.join(HERE, ".."))
    print()
    main(os.path.join(HERE, "..", "excluded"))
