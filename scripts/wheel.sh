#!/usr/bin/env bash
# Builds the Python wheel (pyproject.toml): the `gymscope` CLI binary in its scripts and the PyO3
# extension `gymscope._native` with the package crates/gymscope-py/python, into target/wheels/.
# Then installs it in a fresh virtual environment and checks both faces: `gymscope --version`
# and `gymscope profile` on the command line, and the pytest suite tests/python/ (the API
# against the CLI's own outputs). Prints the build time.
# Usage: scripts/wheel.sh [--no-check]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
tools=target/wheel-tools
if ! [[ -x $tools/bin/maturin ]]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet "maturin>=1.9,<2"
fi
start=$(date +%s)
rm -f target/wheels/gymscope-*.whl
# The CLI first, in the wheel's profile (the extension's build reuses its compiled core).
cargo build --locked --quiet --profile wheel --bin gymscope
data=target/pywheel/gymscope.data/scripts
rm -rf target/pywheel && mkdir -p "$data"
install -m 755 target/wheel/gymscope "$data/gymscope"
# The notebook widget's app: the browser app's own build (dist/, scripts/trunk.sh), copied under
# fixed names into the wheel's purelib data, installed as the package's `gymscope/static/`.
[[ -f dist/index.html ]] || scripts/trunk.sh build --release
static=target/pywheel/gymscope.data/purelib/gymscope/static
rm -rf "$static" && mkdir -p "$static"
one() { local f=("$@"); [[ ${#f[@]} == 1 && -f ${f[0]} ]] || { echo "dist/: expected one of $*" >&2; exit 1; }; echo "${f[0]}"; }
cp "$(one dist/gymscope-[0-9a-f]*[0-9a-f].js)" "$static/app.js"
cp "$(one dist/gymscope-[0-9a-f]*_bg.wasm)" "$static/app_bg.wasm"
cp dist/gymscope-worker.js "$static/worker.js"
cp dist/gymscope-worker_bg.wasm "$static/worker_bg.wasm"
cp "$(one dist/main-*.css)" "$static/app.css"
"$tools/bin/maturin" build --locked --quiet --out target/wheels
wheel=$(ls target/wheels/gymscope-*.whl)
echo "wheel: built in $(( $(date +%s) - start )) s: $wheel" >&2
[[ "${1:-}" == --no-check ]] && exit 0

# The wheel as a user gets it: a new venv, pip install, the binary on the venv's PATH.
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
python3 -m venv "$check/venv"
"$check/venv/bin/pip" install --quiet --no-index "$wheel"
"$check/venv/bin/gymscope" --version
ex=tests/fixtures/gym-examples/ether0
cp "$ex/example_rollouts.jsonl" "$ex/example_rollouts_materialized_inputs.jsonl" "$check/"
"$check/venv/bin/gymscope" profile --inputs "$check/example_rollouts_materialized_inputs.jsonl" \
  --rollouts "$check/example_rollouts.jsonl"
test -s "$check/example_rollouts_reward_profiling.jsonl"
# `import gymscope` with no dependency at all, before the suite's are installed.
"$check/venv/bin/python" -c 'import gymscope; print("import gymscope", gymscope.__version__, len(gymscope.rollouts("'"$check"'/example_rollouts.jsonl")), "rows")'
echo "wheel: installed in a new venv, gymscope --version and profile ran, import gymscope" >&2

# The API's suite, with what its tables are read by (pyarrow, pandas, polars), from PyPI.
"$check/venv/bin/pip" install --quiet -r tests/python/requirements.txt
PATH="$check/venv/bin:$PATH" "$check/venv/bin/python" -m pytest -q -p no:cacheprovider tests/python
