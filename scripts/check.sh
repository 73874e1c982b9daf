#!/usr/bin/env bash
# Static checks, run first by scripts/test.sh: formatting, and clippy with warnings as errors for
# both faces (native CLI + core, and the wasm32 app + worker).
# Usage: scripts/check.sh [native|wasm]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
what="${1:-all}"

if [[ $what == all || $what == native ]]; then
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
  wasm=(--locked --target wasm32-unknown-unknown --target-dir target-wasm --workspace --exclude gymscope-testkit --lib --bins --features gymscope/web-worker)
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
