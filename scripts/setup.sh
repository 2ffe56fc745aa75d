#!/usr/bin/env bash
# Create .venv (if missing) and install rewardhub with every extra and the test tools; as root with apt-get,
# also the Debian toolchains the sandbox builds and runs Java, Go, Rust and JavaScript with.
#
# torch is pinned (an unpinned torch would pull whatever is newest). `pip install torch==2.13.0`
# takes a CPU build only where one lies on disk (a local wheel or find-links, as on the project's
# machines); from the public index alone it resolves to the CUDA build, with ~15 nvidia-* wheels and
# triton (gigabytes, though it runs on CPU). TORCH_INDEX picks where torch comes from:
#   TORCH_INDEX=cpu bash scripts/setup.sh      # PyTorch's CPU wheel index (download.pytorch.org/whl/cpu)
#   TORCH_INDEX=cu126 bash scripts/setup.sh    # another PyTorch wheel index by its name
#   TORCH_INDEX=https://... bash scripts/setup.sh   # any index URL
# (unset or empty: pip's own configuration decides, as before).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
TORCH_INDEX="${TORCH_INDEX:-}"
case "$TORCH_INDEX" in
    "") torch_from=() ;;
    http://*|https://*|file://*) torch_from=(--index-url "$TORCH_INDEX") ;;
    cpu|cu[0-9]*|rocm[0-9]*) torch_from=(--index-url "https://download.pytorch.org/whl/$TORCH_INDEX") ;;
    *) echo "setup.sh: TORCH_INDEX=$TORCH_INDEX is neither cpu, a PyTorch index name (cu126, rocm6.3...) nor a URL" >&2
       exit 2 ;;
esac
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip setuptools wheel
.venv/bin/python -m pip install -q "torch==2.13.0" ${torch_from[@]+"${torch_from[@]}"}
.venv/bin/python -m pip install -q -e ".[dev]"
if ! (PATH=/usr/local/bin:/usr/bin:/bin; command -v javac && command -v go && command -v rustc && command -v node) >/dev/null 2>&1 \
        && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless golang-go rustc \
        nodejs >/dev/null) || echo "warning: could not install the java/go/rust/node toolchains; their tests will be skipped" >&2
fi
