#!/usr/bin/env bash
# Set up, then score the bundled demo completions with the bundled config and print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p demo-output
.venv/bin/rewardhub score --config examples/configs/demo.yaml examples/data/demo.jsonl \
    -o demo-output/scored.jsonl --report demo-output/report.html
echo "scored rows: demo-output/scored.jsonl   report: demo-output/report.html"
