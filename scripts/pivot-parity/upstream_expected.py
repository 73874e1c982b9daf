#!/usr/bin/env python3
"""Record what the real upstream pivot validator says about every case (the parity oracle).

For each <id>.jsonl in tests/fixtures/pivot/{cases,quirks,upstream} this runs

    python3 $PIVOT_VALIDATOR --path <id>.jsonl <args from <id>.args>

with the case's folder as the working directory (so check E reads `<id>.jsonl contains no JSONL
rows`) and LC_ALL=C.UTF-8, and writes <id>.expected.json:

    {"exit": int, "stdout": str, "stderr_first_line": str, "line": int | null, "check": str | null}

`line` is N from `validation failed: line N: ...`; `check` is the spec table 2.4 id that the message
belongs to (J, R1, R2, F1, F2, A1-A4, P1-P6, X1-X6, T1, E), null on exit 0, "USAGE" for argparse
errors (exit 2) and "TRACEBACK" for an uncaught Python exception. A missing .args file means no
extra arguments (the upstream/ copies have none).

Afterwards it compares the result with the intent recorded by gen_cases.py (index.json) and prints
the differences plus the check coverage; it exits 1 if a main-set case differs from its intent or a
check id is never produced.

    PIVOT_VALIDATOR=/path/to/validate_pivot_dataset.py python3 scripts/pivot-parity/upstream_expected.py
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ALL_CHECKS = ["J", "R1", "R2", "F1", "F2", "A1", "A2", "A3", "A4", "P1", "P2", "P3", "P4", "P5", "P6",
              "X1", "X2", "X3", "X4", "X5", "X6", "T1", "E"]

# Message bodies after "validation failed: line N: " (spec table 2.4), anchored at both ends.
LINE_PATTERNS: List[Tuple[str, str]] = [
    ("J", r"invalid JSON: .*"),
    ("R1", r"row must be an object"),
    ("R2", r"missing required key '(responses_create_params|expected_action|agent_ref)'"),
    ("F1", r"missing required field .*"),
    ("F2", r"none of required alternative fields are present: .*"),
    ("A1", r"agent_ref must be an object"),
    ("A2", r"agent_ref\.type must be responses_api_agents"),
    ("A3", r"agent_ref\.name must be a non-empty string"),
    ("A4", r"agent_ref\.name .* does not match expected .*"),
    ("P1", r"responses_create_params must be an object"),
    ("P2", r"responses_create_params\.metadata must be omitted or non-null"),
    ("P3", r"responses_create_params\.tool_choice should be 'auto', found .*"),
    ("P4", r"responses_create_params\.input must be a non-empty list"),
    ("P5", r"responses_create_params\.tools must be a list"),
    ("P6", r"responses_create_params\.parallel_tool_calls must be a boolean"),
    ("X1", r"expected_action must be an object"),
    ("X2", r"message expected_action\.content must be a string"),
    ("X3", r"unsupported expected_action type .*"),
    ("X4", r"function_call is missing a non-empty name"),
    ("X5", r"function_call\.arguments must be a JSON string"),
    ("X6", r"function_call\.arguments is not valid JSON: .*"),
    ("G1", r"Gym model validation failed: .*"),
    ("T1", r"expected_action uses tools absent from responses_create_params\.tools: \[.*\]"),
]
PREFIX = "validation failed: "


def classify(code: int, stderr: str) -> Tuple[Optional[str], Optional[int]]:
    first = stderr.split("\n", 1)[0]
    if code == 0:
        return None, None
    if code == 2:
        return "USAGE", None
    if first.startswith("Traceback (most recent call last):"):
        return "TRACEBACK", None
    if not first.startswith(PREFIX):
        return "UNKNOWN", None
    body = first[len(PREFIX):]
    m = re.fullmatch(r"line (\d+): (.*)", body, flags=re.S)
    if m:
        for check, pat in LINE_PATTERNS:
            if re.fullmatch(pat, m.group(2), flags=re.S):
                return check, int(m.group(1))
        return "UNKNOWN", int(m.group(1))
    if body.endswith(" contains no JSONL rows"):
        return "E", None
    if body.startswith("failed to import Gym validators from "):
        return "G0", None
    return "UNKNOWN", None


def read_args(path: Path) -> List[str]:
    if not path.exists():
        return []
    text = path.read_bytes().decode("utf-8")
    assert text == "" or text.endswith("\n"), f"{path}: every argument line must end with \\n"
    return text.split("\n")[:-1]


def run_case(validator: Path, python: str, case: Path) -> Dict[str, Any]:
    args = read_args(case.with_suffix(".args"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and not k.startswith("LC_")}
    env.update(LC_ALL="C.UTF-8", PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    proc = subprocess.run([python, str(validator), "--path", case.name, *args], cwd=case.parent, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    # Python may write a lone surrogate U+DC80-U+DCFF as a raw byte (surrogateescape): keep it visible.
    stdout = proc.stdout.decode("utf-8", errors="backslashreplace")
    stderr = proc.stderr.decode("utf-8", errors="backslashreplace")
    check, line = classify(proc.returncode, stderr)
    return {
        "exit": proc.returncode,
        "stdout": stdout,
        "stderr_first_line": stderr.split("\n", 1)[0],
        "line": line,
        "check": check,
    }


def main() -> int:
    root = Path(__file__).resolve().parents[2] / "tests/fixtures/pivot"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=root, help="fixtures root (default tests/fixtures/pivot)")
    ap.add_argument("--python", default="python3", help="interpreter for the validator (default python3)")
    ap.add_argument("ids", nargs="*", help="only these case ids")
    ns = ap.parse_args()
    validator = os.environ.get("PIVOT_VALIDATOR")
    if not validator or not Path(validator).is_file():
        print("set PIVOT_VALIDATOR to upstream's validate_pivot_dataset.py", file=sys.stderr)
        return 2
    validator_path = Path(validator).resolve()

    index = {c["id"]: c for c in json.loads((ns.root / "index.json").read_text(encoding="utf-8"))["cases"]}
    results: Dict[str, Tuple[str, Dict[str, Any]]] = {}
    for sub in ("cases", "quirks", "upstream"):
        for case in sorted((ns.root / sub).glob("*.jsonl")):
            cid = case.stem
            if ns.ids and cid not in ns.ids:
                continue
            res = run_case(validator_path, ns.python, case)
            out = case.with_name(cid + ".expected.json")
            out.write_text(json.dumps(res, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
            results[cid] = (sub, res)

    version = subprocess.run([ns.python, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{len(results)} cases run with {version}")
    failures = 0
    for cid, (sub, res) in results.items():
        intent = index.get(cid)
        if res["check"] == "UNKNOWN":
            print(f"  UNCLASSIFIED {sub}/{cid}: {res['stderr_first_line']}")
            failures += 1
        if intent is None:
            if sub != "upstream":
                print(f"  {sub}/{cid}: not in index.json (stale file?)")
            continue
        got = (res["check"], res["line"])
        want = (intent["intended_check"], intent["intended_line"])
        if got != want:
            print(f"  DIFFERS {sub}/{cid}: intended {want}, upstream {got}: "
                  f"{res['stderr_first_line'] or res['stdout'].splitlines()[:1]}")
            failures += sub == "cases"

    coverage: Dict[str, List[str]] = {}
    for cid, (sub, res) in results.items():
        if sub == "cases":
            coverage.setdefault(res["check"] or "ok", []).append(cid)
    print("main-set coverage (check: count):")
    print("  " + ", ".join(f"{k}: {len(coverage.get(k, []))}" for k in ["ok"] + ALL_CHECKS))
    r2 = {m.group(1) for sub, res in results.values() if sub == "cases" and res["check"] == "R2"
          for m in [re.search(r"'(\w+)'$", res["stderr_first_line"])] if m}
    print(f"  R2 keys: {sorted(r2)}")
    if not ns.ids:
        missing = [k for k in ALL_CHECKS if k not in coverage]
        if missing or len(r2) != 3:
            print(f"  MISSING checks: {missing} / R2 keys {sorted(r2)}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
