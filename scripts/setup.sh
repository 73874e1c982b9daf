#!/usr/bin/env bash
# Installs what gymscope's build and tests need, and nothing already there (idempotent; a no-op
# run takes about a second). Usage: scripts/setup.sh [--browser]
#   --browser   also Chromium + ChromeDriver for the browser tests
#
# The wasm toolchain takes the ordinary route where it can: a Rust toolchain that has the
# wasm32-unknown-unknown std (rustup target add wasm32-unknown-unknown) and plain `trunk`.
# Where that std is missing and cannot be fetched (offline Debian 12 machines), it uses Debian's
# rustc-web + rust-web-src and builds std for wasm32 (see scripts/trunk.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
want_browser=false
[[ "${1:-}" == --browser ]] && want_browser=true

TRUNK_VERSION=0.21.14      # 0.22 needs rustc >= 1.96.1
BINARYEN_VERSION=132       # Debian's binaryen 108 breaks the app at run time
export PATH="$HOME/.cargo/bin:$PWD/tools/npm/node_modules/.bin:$PATH"

log() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [[ $(id -u) == 0 ]]; then "$@"; else sudo "$@"; fi; }

apt_updated=false
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || { log "please install: ${missing[*]}"; return 1; }
  log "apt-get install ${missing[*]}"
  $apt_updated || { as_root apt-get update -qq; apt_updated=true; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

has_wasm_std() {
  local libdir
  libdir=$(rustc --print target-libdir --target wasm32-unknown-unknown 2>/dev/null) || return 1
  compgen -G "$libdir/libstd-*.rlib" >/dev/null
}

debian_web_available() {
  command -v apt-get >/dev/null || return 1
  # On a fresh machine the package lists are empty until the first update.
  if ! apt-cache show rustc-web >/dev/null 2>&1 && ! $apt_updated; then
    as_root apt-get update -qq && apt_updated=true
  fi
  apt-cache show rustc-web >/dev/null 2>&1
}

# 1. A Rust std for wasm32.
if has_wasm_std; then
  :
elif dpkg -s rustc-web cargo-web rust-web-src >/dev/null 2>&1 || debian_web_available; then
  # rust-web-clippy: scripts/check.sh lints the wasm32 build with Debian's toolchain too.
  apt_install rustc-web cargo-web rust-web-src rust-web-clippy
  # rustc-web links wasm with /usr/bin/rust-lld, a link to a versioned lld (lld-22 here) that it
  # does not depend on: install the one the link names.
  lld=$(readlink /usr/bin/rust-lld || true)
  [[ -n "$lld" && ! -e /usr/bin/$lld ]] && apt_install "$lld"
elif command -v rustup >/dev/null; then
  # Bounded: without network this would otherwise wait forever.
  timeout 600 rustup target add wasm32-unknown-unknown
fi

# 2. Trunk and a wasm-bindgen CLI of exactly the version in Cargo.lock. Built for a quick install,
# not for speed (they only drive the build): trunk's own release profile is fat LTO with one
# codegen unit, one long single-threaded link; without it, and without trunk's update check
# (a crates.io client), both share one build folder for the dependencies they have in common.
quick_install() {
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo install --quiet --target-dir "${GYMSCOPE_TOOLS_TARGET:-$HOME/.cache/gymscope-tools}" "$@"
}
if ! { command -v trunk >/dev/null && trunk --version | grep -q " $TRUNK_VERSION\$"; }; then
  log "cargo install trunk@$TRUNK_VERSION (several minutes on 2 cores, once)"
  quick_install --locked --no-default-features --features rustls "trunk@$TRUNK_VERSION"
fi
WBG=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/[^0-9.]/,""); print; exit}' Cargo.lock)
if ! { command -v wasm-bindgen >/dev/null && wasm-bindgen --version | grep -q " $WBG\$"; }; then
  log "cargo install wasm-bindgen-cli@$WBG (a few minutes, once)"
  quick_install "wasm-bindgen-cli@$WBG"   # not --locked: its lockfile pins a yanked crate
fi

# 3. wasm-opt from npm's binaryen (a JS build, runs on the machine's Node.js).
if ! [[ -x tools/npm/node_modules/.bin/wasm-opt ]]; then
  command -v npm >/dev/null || apt_install nodejs npm
  log "npm install binaryen@$BINARYEN_VERSION"
  mkdir -p tools/npm
  npm install --prefix tools/npm --no-audit --no-fund --silent "binaryen@$BINARYEN_VERSION" >/dev/null
fi

# 4. The Python wheel's build and check (scripts/wheel.sh) make virtual environments.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3 python3-venv
fi

# 5. Browser tests: Chromium and its driver.
if $want_browser; then
  command -v chromium >/dev/null && command -v chromedriver >/dev/null || apt_install chromium chromium-driver
fi
log "ready"
