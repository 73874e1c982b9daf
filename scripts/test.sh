#!/usr/bin/env bash
# Sets up whatever is missing, builds the web app, and runs every test: core unit tests, the
# CLI against upstream's fixtures and oracle cases, and the app in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh --browser
echo "== static checks (fmt, clippy native and wasm32)" >&2
scripts/check.sh
echo "== building the web app (dist/)" >&2
scripts/trunk.sh build --release
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
echo "== cargo test" >&2
# The browser tests start Chromium; a hung browser must not hang the run.
timeout 1800 cargo test --locked --workspace
echo "== the Python wheel: built, installed in a new venv, run (scripts/wheel.sh)" >&2
scripts/wheel.sh
echo "== benchmarks compile" >&2
cargo bench --locked --workspace --no-run 2>/dev/null
