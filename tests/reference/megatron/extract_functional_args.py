"""Megatron-LM's GPT functional tests and example launch scripts as argument files (clustercast test tooling).

Writes, from a Megatron-LM checkout or bare mirror at the pinned commit:
  functional/<test case>.args  one per tests/functional_tests/test_cases/gpt/<test case>/model_config.yaml:
                               its MODEL_ARGS mapping, one "--flag value" per line, in the file's order
  examples/<script>.args       the words each examples/ launch script passes to pretrain_gpt.py
Usage (from this folder):
    python3 extract_functional_args.py /path/to/Megatron-LM.git
The mapping is turned into words as Megatron-LM's own harness does
(tests/functional_tests/shell_test_utils/_run_training.sh): true is the bare flag, a list is its items,
anything else is the value as written; placeholders such as ${DATA_PATH} stay literal words. A value
holding spaces is split into words for a flag that takes a list (arguments_flags.tsv says `list`), as
the harness splits "[2 2]"; for any other flag it is one quoted word in the harness, which an argument
file (`$(cat FILE)` splits at whitespace) cannot hold: it is written with '_' for its spaces and a
trailing comment saying so.
The gpt3_7b_* test cases are reserved and skipped by their path before anything is read.
"""
import os
import subprocess
import sys
import tempfile

import yaml

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
CASES = "tests/functional_tests/test_cases/gpt"
# examples/ launch scripts of GPT-family training runs (pretrain_gpt.py), read as their defaults run them.
# Each with the positional arguments it is given: placeholder words where the script has no default.
EXAMPLES = {"examples/gpt3/train_gpt3_175b_distributed.sh": ["CHECKPOINT_PATH", "TENSORBOARD_LOGS_PATH",
                                                            "VOCAB_FILE", "MERGE_FILE", "DATA_PATH"],
            "examples/llama/train_llama3_8b_h100_fp8.sh": [],
            "examples/mixtral/train_mixtral_8x7b_distributed.sh": ["CHECKPOINT_PATH", "TOKENIZER_MODEL", "DATA_PATH"],
            "examples/megatron_fsdp/train_llama3_8b_fsdp_h100_fp8.sh": []}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def word(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def line_of(flag, values, list_flags):
    """One flag and its values as one line of an argument file."""
    if flag in list_flags:
        values = [w for v in values for w in v.strip("[]").split()]
    spaced = any(c.isspace() for v in values for c in v)
    line = " ".join([flag] + ["_".join(v.split()) for v in values])
    return line + ("  # the value holds spaces in Megatron-LM's file, written here as _" if spaced else "")


def case_lines(config, list_flags):
    lines = []
    for flag, value in (config.get("MODEL_ARGS") or {}).items():
        if value is True:
            lines.append(flag)
            continue
        lines.append(line_of(flag, [word(v) for v in value] if isinstance(value, list) else [word(value)], list_flags))
    return lines


def example_words(repo, path, positional):
    """The words the script passes to pretrain_gpt.py: the script run by bash with torchrun a stand-in
    that prints its arguments (uv run and python -m torch.distributed.run lead to it), in an empty folder
    holding only an empty pretrain_gpt.py."""
    script = git(repo, "show", f"{COMMIT}:{path}")
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "pretrain_gpt.py"), "w").close()
        stub = ("torchrun() { printf '%s\\n' \"$@\"; }; python() { torchrun \"$@\"; }; uv() { shift; \"$@\"; }; "
                "export -f torchrun python uv; ")
        out = subprocess.run(["bash", "-c", stub + 'exec bash -s "$@"', "bash", *positional], input=script, cwd=tmp,
                             capture_output=True, text=True, env={"PATH": os.environ["PATH"], "HOME": tmp})
    words = out.stdout.replace(tmp, "$PWD").split("\n")  # ${PWD} as written, not this run's folder
    start = next(i for i, w in enumerate(words) if w.endswith("pretrain_gpt.py")) + 1
    return [w for w in words[start:] if w]


def grouped(words, list_flags):
    groups = []
    for w in words:
        if w.startswith("--") or not groups:
            groups.append([w])
        else:
            groups[-1].append(w)
    return [line_of(g[0], g[1:], list_flags) for g in groups]


def main():
    repo = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = git(repo, "ls-tree", "-r", "--name-only", COMMIT, CASES).splitlines()
    paths = [p for p in paths if "gpt3_7b" not in p and p.endswith("/model_config.yaml")]  # reserved: by name only
    with open(os.path.join(here, "arguments_flags.tsv")) as f:
        list_flags = {cols[0] for cols in (line.split("\t") for line in f if not line.startswith("#"))
                      if cols[1] == "list"}
    os.makedirs(os.path.join(here, "functional"), exist_ok=True)
    for p in paths:
        name = p.split("/")[-2]
        config = yaml.safe_load(git(repo, "show", f"{COMMIT}:{p}"))
        with open(os.path.join(here, "functional", name + ".args"), "w") as f:
            f.write("\n".join(case_lines(config, list_flags)) + "\n")
    os.makedirs(os.path.join(here, "examples"), exist_ok=True)
    for p, positional in EXAMPLES.items():
        name = os.path.basename(p).removesuffix(".sh")
        with open(os.path.join(here, "examples", name + ".args"), "w") as f:
            f.write("\n".join(grouped(example_words(repo, p, positional), list_flags)) + "\n")
    print(f"{len(paths)} test cases, {len(EXAMPLES)} examples", file=sys.stderr)


if __name__ == "__main__":
    main()
