#!/usr/bin/env bash
# Sets up whatever is missing and serves the web app on http://127.0.0.1:8080/ (rebuilds on save).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec scripts/trunk.sh serve --release "$@"
