#!/usr/bin/env bash
# Builds the Python wheel of the `gymscope` binary (pyproject.toml, maturin's `bin` bindings) into
# target/wheels/, then installs it into a fresh virtual environment and runs it on the embedded
# example: `gymscope --version` and `gymscope profile`. Prints the build time.
# Usage: scripts/wheel.sh [--no-check]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
tools=target/wheel-tools
if ! [[ -x $tools/bin/maturin ]]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet "maturin>=1.5,<2"
fi
start=$(date +%s)
rm -f target/wheels/gymscope-*.whl
"$tools/bin/maturin" build --locked --quiet --out target/wheels
echo "wheel: built in $(( $(date +%s) - start )) s: $(ls target/wheels/gymscope-*.whl)" >&2
[[ "${1:-}" == --no-check ]] && exit 0

# The wheel as a user gets it: a new venv, pip install, the binary on the venv's PATH.
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
python3 -m venv "$check/venv"
"$check/venv/bin/pip" install --quiet --no-index target/wheels/gymscope-*.whl
"$check/venv/bin/gymscope" --version
ex=tests/fixtures/gym-examples/ether0
cp "$ex/example_rollouts.jsonl" "$ex/example_rollouts_materialized_inputs.jsonl" "$check/"
"$check/venv/bin/gymscope" profile --inputs "$check/example_rollouts_materialized_inputs.jsonl" \
  --rollouts "$check/example_rollouts.jsonl"
test -s "$check/example_rollouts_reward_profiling.jsonl"
echo "wheel: installed in a new venv, gymscope --version and profile ran" >&2
