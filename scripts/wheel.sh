#!/usr/bin/env bash
# Builds the Python wheel (pyproject.toml) on a fresh machine: installs what the build needs
# (scripts/setup.sh), builds the browser app the notebook widget ships (dist/), then the PyO3
# extension `gymscope._native` with the package crates/gymscope-py/python into target/wheels/.
# The extension also serves the `gymscope` command (a console script): one copy of the core.
# It is linked by zig (PyPI's `ziglang`) against glibc 2.17's symbols: a manylinux2014 wheel,
# checked with `auditwheel show`. Then installs it in a fresh virtual environment and checks both
# faces: `gymscope --version` and `gymscope profile` on the command line, and the pytest suite
# tests/python/ (the API against the CLI's own outputs). Prints the times.
# Usage: scripts/wheel.sh [--no-check]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
start=$(date +%s)
die() { echo "wheel: $*" >&2; exit 1; }

# What the app's build needs (trunk, wasm-bindgen, a wasm32 std, wasm-opt), the venvs, and the
# notebook test's Chromium (a second run is a no-op of about a second: scripts/test.sh's).
scripts/setup.sh --browser

# The notebook widget's app: the browser app's own build (dist/, scripts/trunk.sh), copied under
# fixed names into the wheel's purelib data, installed as the package's `gymscope/static/`.
# A wheel without it would fail only at run time (`gymscope.Inspector`): no wheel then.
[[ -f dist/index.html ]] || scripts/trunk.sh build --release
[[ -f dist/index.html ]] || die "no dist/index.html after scripts/trunk.sh build --release: the app did not build"
static=target/pywheel/gymscope.data/purelib/gymscope/static
rm -rf target/pywheel && mkdir -p "$static"
one() {
  local f=("$@")
  [[ ${#f[@]} == 1 && -f ${f[0]} ]] || die "dist/ lacks the app's build: expected one of $* (run scripts/trunk.sh build --release)"
  echo "${f[0]}"
}
cp "$(one dist/gymscope-[0-9a-f]*[0-9a-f].js)" "$static/app.js"
cp "$(one dist/gymscope-[0-9a-f]*_bg.wasm)" "$static/app_bg.wasm"
cp "$(one dist/gymscope-worker.js)" "$static/worker.js"
cp "$(one dist/gymscope-worker_bg.wasm)" "$static/worker_bg.wasm"
cp "$(one dist/main-*.css)" "$static/app.css"

# maturin, zig (the linker that targets an old glibc) and auditwheel, from PyPI.
tools=target/wheel-tools
if ! [[ -x $tools/bin/maturin && -x $tools/bin/auditwheel ]] || ! "$tools/bin/python" -m ziglang version >/dev/null 2>&1; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet "maturin>=1.9,<2" "ziglang>=0.13,<0.18" "auditwheel>=6"
fi
built=$(date +%s)
rm -f target/wheels/gymscope-*.whl
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/maturin" build --locked --quiet --out target/wheels \
  --zig --compatibility manylinux2014
wheel=$(ls target/wheels/gymscope-*.whl)
echo "wheel: built in $(( $(date +%s) - built )) s ($(( $(date +%s) - start )) s with the app and tools): $wheel" >&2
# The tag and the symbols: nothing newer than glibc 2.17 (manylinux2014).
shown=$("$tools/bin/auditwheel" show "$wheel")
echo "$shown" >&2
grep -q 'manylinux_2_17_x86_64' <<<"$shown" || die "auditwheel: the wheel is not manylinux2014 (manylinux_2_17)"
[[ "${1:-}" == --no-check ]] && exit 0

# The wheel as a user gets it: a new venv, pip install, the command on the venv's PATH.
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
echo "wheel: done in $(( $(date +%s) - start )) s" >&2
