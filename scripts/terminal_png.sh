#!/usr/bin/env bash
# Renders a terminal's text (a `gymscope watch` snapshot, say) as an 80-column terminal window
# in a PNG with headless Chromium: docs/screenshots/watch-terminal.png is made this way.
#   scripts/terminal_png.sh SNAPSHOT.txt OUT.png [TITLE]
set -euo pipefail
text=$1 out=$2 title=${3:-gymscope watch}
page=$(mktemp --suffix=.html)
trap 'rm -f "$page"' EXIT
python3 - "$text" "$page" "$title" <<'PY'
import html, sys
text = open(sys.argv[1], encoding="utf-8").read().rstrip("\n")
rows = text.count("\n") + 1
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write(f"""<!doctype html><meta charset=utf-8><style>
body{{margin:0;background:#1e1e1e}}
.bar{{background:#333;color:#ccc;font:13px sans-serif;padding:6px 10px}}
pre{{margin:0;padding:10px 12px;color:#e6e6e6;font:14px/1.35 'DejaVu Sans Mono',monospace;width:80ch}}
</style><div class=bar>{html.escape(sys.argv[3])}</div><pre>{html.escape(text)}</pre>""")
print(rows)
PY
rows=$(( $(wc -l < "$text") + 1 ))
height=$(( rows * 19 + 60 ))
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=720,$height --screenshot="$out" "file://$page" >/dev/null 2>&1
echo "$out"
