#!/usr/bin/env bash
# Runs trunk with the right toolchain: plain `trunk` when the Rust toolchain has a wasm32 std,
# otherwise Debian's rustc-web with std built for wasm32 (build-std).
# Usage: scripts/trunk.sh build [--release] | scripts/trunk.sh serve
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/tools/npm/node_modules/.bin:$HOME/.cargo/bin:$PATH"
has_wasm_std() {
  local libdir
  libdir=$(rustc --print target-libdir --target wasm32-unknown-unknown 2>/dev/null) || return 1
  compgen -G "$libdir/libstd-*.rlib" >/dev/null
}
if [[ "${WEB_ROUTE:-auto}" != debian ]] && has_wasm_std; then
  exec trunk "$@"
fi
[[ -x /usr/bin/rustc && -d /usr/lib/rustlib/src/rust/library ]] || {
  echo "no wasm32 std: run scripts/setup.sh (or 'rustup target add wasm32-unknown-unknown')" >&2
  exit 1
}
if command -v rustup >/dev/null; then
  # rustup's proxies (which trunk calls) then resolve to Debian's toolchain in /usr, while PATH
  # keeps npm's wasm-opt ahead of Debian's broken /usr/bin/wasm-opt.
  rustup toolchain list | grep -q '^debian-web' || rustup toolchain link debian-web /usr
  export RUSTUP_TOOLCHAIN=debian-web
fi
export RUSTC_BOOTSTRAP=1                       # lets Debian's stable cargo take build-std
export CARGO_UNSTABLE_BUILD_STD=std,panic_abort
exec trunk "$@"
