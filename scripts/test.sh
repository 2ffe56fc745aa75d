#!/usr/bin/env bash
# Set up, install the system packages some tests drive (headless Chromium; Docker's engine and
# debootstrap, from which the docker tests start their own dockerd and build their image; redis-server,
# which the shared judge budget tests start on a free port), run the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "warning: could not install chromium; the report screenshot test will be skipped" >&2
fi
if ! { command -v dockerd && command -v debootstrap; } >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
        && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null) \
        || echo "warning: could not install docker.io/debootstrap; the docker engine tests will be skipped" >&2
fi
if ! command -v redis-server >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) \
        || echo "warning: could not install redis-server; the Redis budget tests will be skipped" >&2
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
exec .venv/bin/python -m pytest -q -p no:cacheprovider --timeout=900 "$@"
