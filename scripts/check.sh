#!/usr/bin/env bash
# Static checks, run first by scripts/test.sh: formatting, and clippy with warnings as errors for
# both faces (native CLI + core, and the wasm32 app + worker).
# Usage: scripts/check.sh [native|wasm]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
what="${1:-all}"

# The layout ARCHITECTURE.md promises: a small src/, files small enough to read at once, and a
# core that cannot reach the network, the terminal or the DOM.
layout() {
  echo "== layout (src/ entries, file sizes, the core's dependencies)" >&2
  local bad=0 n
  n=$(find src -mindepth 1 -maxdepth 1 | wc -l)
  if ((n > 12)); then echo "src/ has $n entries (at most 12)" >&2; bad=1; fi
  # Lines before a file's first `#[cfg(test)]` (its test module apart); files of tests skipped.
  while read -r limit file; do
    n=$(awk '/^#\[cfg\(test\)\]/{exit} {n++} END{print n+0}' "$file")
    if ((n > limit)); then echo "$file: $n lines (at most $limit, tests apart)" >&2; bad=1; fi
  done < <(find src crates -name '*.rs' ! -name 'tests.rs' ! -name '*_tests.rs' ! -path '*/tests/*' |
    sort | awk '{print ($0 ~ /^src\/web\// ? 250 : 800), $0}')
  # Nothing a tool left behind: no tracked path that .gitignore names, no Hydra outputs/ or logs at
  # the root (upstream's `gym` runs only in temporary folders: scripts/parity-v07/).
  local ignored
  ignored=$(git ls-files -ci --exclude-standard 2>/dev/null || true)
  if [[ -n $ignored ]]; then echo "tracked but ignored by .gitignore: $(head -3 <<<"$ignored")" >&2; bad=1; fi
  if [[ -e outputs ]] || compgen -G '*.log' >/dev/null; then
    echo "outputs/ or *.log at the root (run upstream's gym in a temporary folder)" >&2; bad=1
  fi
  local banned
  banned=$(cargo tree --locked -p gymscope-core -e normal --target all --prefix none 2>/dev/null |
    awk '{print $1}' | grep -xE 'tokio|hyper|hyper-util|web-sys|js-sys|wasm-bindgen|leptos|clap|indicatif' | sort -u || true)
  if [[ -n $banned ]]; then echo "the core (gymscope-core and the crates below it) depends on: $banned (a face's crates)" >&2; bad=1; fi
  return $bad
}

if [[ $what == all || $what == native ]]; then
  layout
  echo "== cargo fmt --check" >&2
  cargo fmt --all -- --check
  echo "== clippy (native)" >&2
  cargo clippy --locked --workspace --all-targets -- -D warnings
fi

if [[ $what == all || $what == wasm ]]; then
  echo "== clippy (wasm32: app and worker)" >&2
  has_wasm_std() {
    local libdir
    libdir=$(rustc --print target-libdir --target wasm32-unknown-unknown 2>/dev/null) || return 1
    compgen -G "$libdir/libstd-*.rlib" >/dev/null
  }
  wasm=(--locked --target wasm32-unknown-unknown --target-dir target-wasm --workspace --exclude gymscope-testkit --exclude gymscope-py --lib --bins --features gymscope/web-worker)
  if [[ "${WEB_ROUTE:-auto}" != debian ]] && has_wasm_std; then
    cargo clippy "${wasm[@]}" -- -D warnings
  else
    # Debian route (see scripts/trunk.sh): Debian's rustc-web with std built for wasm32, and its
    # clippy (package rust-web-clippy, installed by scripts/setup.sh).
    rustup toolchain list | grep -q '^debian-web' || rustup toolchain link debian-web /usr
    RUSTUP_TOOLCHAIN=debian-web RUSTC_BOOTSTRAP=1 \
      cargo clippy -Zbuild-std=std,panic_abort "${wasm[@]}" -- -D warnings
  fi
fi
