#!/usr/bin/env bash
# Opens the real clustercast-gui window under Xvfb on the README's paper layout (GPT-3 175B,
# 1,024 A100s of dgx-a100-80gb, TP 8 x PP 16, sequence parallel, selective recompute, micro
# batch 1, global batch 1536, 300B tokens, the unfused attention that run had) and saves a PNG
# of each tab (Search: after a full search; Compare: the NeMo example, full recomputation vs
# SP + selective; the Cluster map once more at TP 16 x PP 8, whose TP groups span two nodes).
# Usage: gui-screenshots.sh [CLUSTERCAST_GUI_BINARY] [OUT_DIR]   (defaults: build/, docs/screenshots)
# CI runs it as the GuiScreenshots ctest test, writing into the build tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gui="${1:-$root/build/cli/clustercast-gui}"
out="${2:-$root/docs/screenshots}"
command -v xvfb-run >/dev/null || { echo "gui-screenshots: xvfb-run not found (bash scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$out"
# A private settings folder: no saved window state from a developer's session leaks in.
export XDG_CONFIG_HOME="$(mktemp -d)"
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
timeout 240 xvfb-run -a -s "-screen 0 1920x1200x24" env QT_QPA_PLATFORM=xcb "$gui" \
  --model gpt3-175b --cluster dgx-a100-80gb --gpus 1024 --tp 8 --pp 16 --sequence-parallel \
  --recompute-granularity selective --micro-batch-size 1 --global-batch-size 1536 --train-tokens-b 300 \
  --attention-backend unfused --window-size 1280x800 --screenshots "$out"
for tab in summary timeline memory search compare cluster-map cluster-map-cross-node-tp; do
  f="$out/$tab.png"
  [ -s "$f" ] || { echo "gui-screenshots: $f was not written" >&2; exit 1; }
  # A real screenshot of a 1280x800 window is tens of kB; a blank one compresses to ~2 kB.
  [ "$(stat -c %s "$f")" -gt 20000 ] || { echo "gui-screenshots: $f looks blank" >&2; exit 1; }
done
echo "gui-screenshots: wrote $out/{summary,timeline,memory,search,compare,cluster-map,cluster-map-cross-node-tp}.png"
