#!/usr/bin/env python3
"""Deterministic generator of pivot-dataset validator cases (gymscope parity tests).

For every case it writes, into tests/fixtures/pivot/<set>/ (set = `cases` or `quirks`):

  <id>.jsonl   the dataset (exact bytes: line endings, blank lines, final newline are part of the case)
  <id>.args    extra CLI arguments for the validator, one argument per line, every line ends with
               "\\n"; an empty file means no extra arguments. (`--agent-ref=` is how an empty value
               is passed, so no line is ever empty.)

and tests/fixtures/pivot/index.json: every case with its set, a one-line description and the check
id (spec table 2.4) and line number we *intend* it to trigger. upstream_expected.py records what
upstream actually does and compares it with this intent.

`cases/` holds only strict JSON (RFC 8259, valid UTF-8, no BOM, no lone CR, no duplicate keys, no
NaN/Infinity, nesting < 128) and plain Python reprs, so gymscope should match upstream on it.
`quirks/` holds the deliberate differences (spec 2.7): Python's JSON dialect, code-point offsets,
exotic reprs, CLI parser details, tracebacks.

Only the standard library is used and there is no randomness: reruns are byte-identical.

    python3 scripts/pivot-parity/gen_cases.py [--out tests/fixtures/pivot] [case-id ...]
"""
from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

AGENT = "pivot_agent"
AGENT_TYPE = "responses_api_agents"
TOOLS = ("lookup_order", "send_email")


class Raw:
    """A line written verbatim (str is UTF-8 encoded, bytes as is)."""

    def __init__(self, text: Any):
        self.data = text.encode("utf-8") if isinstance(text, str) else bytes(text)


BLANK = Raw("")


class Lit:
    """A `tools` entry written as is (row() turns plain strings into tool objects)."""

    def __init__(self, value: Any):
        self.value = value


def dumps(obj: Any) -> str:
    # Spaced like upstream's data files, key order as built, non-ASCII written raw.
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


# ---------------------------------------------------------------- row builders


def tool(name: Any, style: str = "responses") -> Dict[str, Any]:
    if style == "chat":  # chat-completions shape: name only under "function"
        return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    if style == "slim":  # just enough for the validator, keeps the big summary cases small
        return {"type": "function", "name": name}
    return {"type": "function", "name": name, "strict": True, "parameters": {"type": "object"}}


def fc(name: Any, args: Any = None) -> Dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": json.dumps({"id": 1} if args is None else args)}


def msg(text: Any = "Done, anything else?") -> Dict[str, Any]:
    return {"type": "message", "content": text}


def inputs(n: int) -> List[Dict[str, Any]]:
    items: List[Dict[str, Any]] = []
    for i in range(n):
        if i == 0:
            items.append({"type": "message", "role": "system", "content": "You are a helpful support agent."})
        elif i % 3 == 1:
            items.append({"type": "message", "role": "user", "content": f"Question {i}?"})
        elif i % 3 == 2:
            items.append(
                {
                    "type": "function_call",
                    "name": "lookup_order",
                    "arguments": json.dumps({"id": i}),
                    "call_id": f"call_{i}",
                    "id": f"fc_{i}",
                    "status": "completed",
                }
            )
        else:
            items.append({"type": "function_call_output", "call_id": f"call_{i - 1}", "output": f"order {i} shipped"})
    return items


def row(
    agent: Any = AGENT,
    action: Optional[Dict[str, Any]] = None,
    tools: Sequence[Any] = TOOLS,
    n_input: int = 2,
    **top: Any,
) -> Dict[str, Any]:
    r: Dict[str, Any] = {
        "responses_create_params": {
            "input": inputs(n_input),
            "tools": [t.value if isinstance(t, Lit) else tool(t) if isinstance(t, str) else t for t in tools],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
        },
        "expected_action": fc("lookup_order") if action is None else action,
        "agent_ref": {"type": AGENT_TYPE, "name": agent},
    }
    r.update(top)
    return r


def good(i: int, **kw: Any) -> Dict[str, Any]:
    """The i-th valid filler row (alternates function_call / message)."""
    action = fc(TOOLS[i % 2], {"id": i}) if i % 3 != 2 else msg(f"Answer {i}.")
    return row(action=action, n_input=1 + i % 4, trajectory_id=f"traj_{i}", meta_info={"turn": i, "step": 0}, **kw)


def rcp(r: Dict[str, Any]) -> Dict[str, Any]:
    return r["responses_create_params"]


def edit(r: Dict[str, Any], fn: Callable[[Dict[str, Any]], Any]) -> Dict[str, Any]:
    r = copy.deepcopy(r)
    fn(r)
    return r


def drop(d: Dict[str, Any], *keys: str) -> None:
    for k in keys:
        d.pop(k, None)


# ---------------------------------------------------------------- case registry


class Case:
    def __init__(self, cid: str, desc: str, lines: List[Any], *, args: Sequence[str] = (), check: Optional[str],
                 line: Optional[int], eol: str = "\n", final_newline: bool = True, quirk: bool = False,
                 raw: Optional[bytes] = None):
        self.id, self.desc, self.lines, self.args = cid, desc, lines, list(args)
        self.check, self.line, self.eol, self.final_newline = check, line, eol, final_newline
        self.set = "quirks" if quirk else "cases"
        self.raw = raw

    def content(self) -> bytes:
        if self.raw is not None:
            return self.raw
        parts = [x.data if isinstance(x, Raw) else dumps(x).encode("utf-8") for x in self.lines]
        body = self.eol.encode().join(parts)
        if parts and self.final_newline:
            body += self.eol.encode()
        return body


CASES: List[Case] = []


def add(cid: str, desc: str, lines: List[Any], *, check: Optional[str] = None, line: Optional[int] = None,
        **kw: Any) -> None:
    assert all(c.id != cid for c in CASES), cid
    CASES.append(Case(cid, desc, lines, check=check, line=line, **kw))


def bad(cid: str, desc: str, bad_row: Any, check: str, *, before: int = 2, after: int = 1,
        args: Sequence[str] = (), quirk: bool = False, filler: Optional[Callable[[int], Any]] = None) -> None:
    """`before` valid rows, then the failing row, then `after` valid rows."""
    mk = filler or good
    lines = [mk(i) for i in range(before)] + [bad_row] + [mk(before + 1 + i) for i in range(after)]
    add(cid, desc, lines, check=check, line=before + 1, args=args, quirk=quirk)


G = good(10)  # the base of most failing rows: a valid function_call row


# ---------------------------------------------------------------- valid files (exit 0)


def valid_cases() -> None:
    # v01: agents and tools with count ties, code-point order, unicode.
    agents = (
        ["beta"] * 2 + ["Alpha"] * 2 + ["alpha"] * 2 + ["Ünïcode_agent"] * 2 + ["日本語エージェント"] * 2
        + ["agent_z", " beta", "😀_agent", "～agent", "Z_agent", "éclair", "e\u0301clair"]
    )
    fc_tools = ["search", "Search", "search", "Search", "lookup", "lookup", "工具", "ünïcode_tool", "𝔘_astral",
                "～tilde", "Z", "a"]
    all_tools = sorted(set(fc_tools)) + ["unused_tool"]
    lines = []
    t = 0
    for i, a in enumerate(agents):
        if i % 5 == 4 or t >= len(fc_tools):
            action = msg(f"Message {i} ✓")
        else:
            action = fc(fc_tools[t], {"q": f"item {i}", "n": i})
            t += 1
        tools: List[Any] = list(all_tools)
        if i % 4 == 1:  # chat-completions shaped tools: name under "function"
            tools = [tool(n, "chat") for n in all_tools]
        if i % 6 == 3:  # junk entries count in avg_tools but name nothing
            tools = tools + [None, 7, Lit("lookup"), {"type": "web_search"}]
        lines.append(row(agent=a, action=action, tools=tools, n_input=1 + (i * 7) % 5, uuid=f"u{i}"))
    add("v01_mixed_summary", "valid: agents/tools with count ties, (-count, name) order by code point "
        "(Alpha < Z < alpha < beta, U+FF5E < U+1D518 unlike UTF-16), unicode, combining chars, junk tools", lines)

    add("v02_message_only", "valid: only message rows (incl. empty content): expected_tool section omitted",
        [row(action=msg("")), row(action=msg("Bye.")), row(action=msg("   "), agent="other_agent")])

    add("v03_function_call_only", "valid: only function_call rows: message 0 (0.00%)",
        [row(action=fc("lookup_order", {"id": i})) for i in range(4)])

    # v04: 23/160 -> 14.37% (f64 count/total*100, not count*100/total = 14.375 -> 14.38)
    lines = []
    agent_plan = ["a_agent"] * 60 + ["b_agent"] * 60 + ["e_agent"] * 21 + ["d_agent"] * 10 + ["c_agent"] * 9
    tool_plan = ["tool_10"] * 9 + ["tool_9"] * 9 + ["tool_2"] * 5
    for i, a in enumerate(agent_plan):
        action = fc(tool_plan[i // 7], {"i": i}) if i % 7 == 0 and i // 7 < len(tool_plan) else msg(f"m{i}")
        names = ("tool_2", "tool_9", "tool_10")[: 1 + i % 3] + ("tool_9", "tool_10")
        lines.append(row(agent=a, action=action, tools=[tool(n, "slim") for n in names], n_input=1 + i % 3))
    assert sum(1 for l in lines if l["expected_action"]["type"] == "function_call") == 23
    add("v04_pct_23_of_160", "valid: 160 rows, 23 function_call -> 14.37% / 85.62%; counts 60/60/21/10/9 "
        "(numeric sort), tool_10 < tool_9 on ties", lines)

    add("v05_pct_1_of_32", "valid: 1/32 -> 3.125 -> 3.12% (half-even on exact binary), 31/32 -> 96.88%",
        [row(action=fc("lookup_order") if i == 0 else msg()) for i in range(32)])
    add("v06_pct_3_of_32", "valid: 3/32 -> 9.375 -> 9.38%, 29/32 -> 90.625 -> 90.62%",
        [row(action=fc("send_email") if i < 3 else msg()) for i in range(32)])

    # v07: 8 rows, 19 input items (2.375 -> 2.38), 21 tools (2.625 -> 2.62)
    n_inputs = [1, 2, 3, 4, 1, 2, 3, 3]
    n_tools = [1, 2, 3, 4, 5, 2, 2, 2]
    assert sum(n_inputs) == 19 and sum(n_tools) == 21
    names = ["t1", "t2", "t3", "t4", "t5"]
    add("v07_avg_19_8", "valid: avg_input_items 19/8 = 2.38, avg_tools 21/8 = 2.62, split 1/8 = 12.50%",
        [row(action=fc("t1") if i == 0 else msg(), tools=names[: n_tools[i]], n_input=n_inputs[i]) for i in range(8)])

    add("v08_pct_thirds", "valid: 1/3 = 33.33%, 2/3 = 66.67%, avg 4/3 = 1.33, 5/3 = 1.67",
        [row(action=fc("a_tool"), tools=["a_tool"], n_input=1), row(action=msg(), tools=["x", "y"], n_input=1),
         row(action=msg(), tools=["x", "y"], n_input=2)])

    add("v09_crlf", "valid: CRLF line endings", [good(i) for i in range(4)], eol="\r\n")
    add("v10_no_trailing_newline", "valid: last line has no newline", [good(i) for i in range(3)], final_newline=False)
    add("v11_blank_and_whitespace_lines", "valid: empty lines and whitespace-only lines (space, tab, VT, FF, "
        "NBSP, U+3000, U+2028, U+0085) are skipped, at start, middle and end",
        [BLANK, Raw("   "), good(0), Raw("\t \t"), BLANK, good(1), Raw("\x0b\x0c"), Raw("\u00a0"),
         Raw("\u3000 \u2028"), Raw("\u0085"), good(2), BLANK, Raw("  ")])
    add("v12_crlf_blank_lines_no_final_newline", "valid: CRLF with blank/whitespace lines, no final newline",
        [BLANK, good(0), Raw("  "), BLANK, good(1), good(2)], eol="\r\n", final_newline=False)
    add("v13_mixed_lf_crlf", "valid: LF and CRLF mixed in one file",
        [], raw=(dumps(good(0)) + "\r\n" + dumps(good(1)) + "\n\r\n" + dumps(good(2)) + "\r\n").encode())

    present = dict(meta={"zero": 0, "false": False, "empty": "", "list": [], "obj": {}, "deep": {"x": {"y": 0}}},
                   **{"": "empty-key", "x.y": 1})
    add("v14_require_present_values", "valid: --require-field values 0/false/\"\"/[]/{} count as present, "
        "deep dotted path, key \"\" via empty path; --require-any-field with first member missing, spaces and "
        "empty items; an all-empty group (' , ,') is dropped",
        [row(**present), row(action=msg(), **present)],
        args=["--require-field", "meta.zero", "--require-field", "meta.false", "--require-field", "meta.empty",
              "--require-field", "meta.list", "--require-field=meta.obj", "--require-field", "meta.deep.x.y",
              "--require-field=", "--require-field", "responses_create_params.tools",
              "--require-any-field", "meta.missing, meta.zero", "--require-any-field= , meta.nope ,, meta.false ,",
              "--require-any-field= , ,", "--require-any-field=,"])

    add("v15_agent_ref_match", "valid: --agent-ref equal to every row's name",
        [good(i) for i in range(3)], args=["--agent-ref", AGENT])
    add("v16_agent_ref_unicode_match", "valid: --agent-ref with a non-ASCII name",
        [row(agent="агент_日本"), row(agent="агент_日本", action=msg())], args=["--agent-ref=агент_日本"])
    add("v17_no_check_tool_names", "valid: --no-check-tool-names lets an absent tool pass; it is still counted",
        [good(0), row(action=fc("not_in_tools")), row(action=fc("not_in_tools"), tools=[])],
        args=["--no-check-tool-names"])

    lines = [
        row(action=fc("flat"), tools=[{"name": "flat"}]),
        row(action=fc("nested"), tools=[{"type": "function", "function": {"name": "nested"}}]),
        row(action=fc("top_wins"), tools=[{"name": "top_wins", "function": {"name": "other"}}]),
        row(action=fc("fallback"), tools=[{"name": 5, "function": {"name": "fallback"}}]),
        row(action=fc("fallback2"), tools=[{"name": None, "function": {"name": "fallback2"}}]),
        row(action=fc("mixed"), tools=[None, [], Lit("mixed"), {"function": "mixed"}, {"function": {"name": 1}},
                                       {"name": "mixed"}, 3.5, True]),
    ]
    add("v18_tool_name_variants", "valid: tool names from `name` or `function.name`; non-str `name` falls "
        "back to `function.name`; junk entries ignored but counted in avg_tools", lines)

    def lenient(r: Dict[str, Any]) -> None:
        p = rcp(r)
        drop(p, "tool_choice", "parallel_tool_calls")
        p.update(temperature=None, model=None, instructions=None, metadata={}, top_p=None)
        r.update(scenario=None, uuid=None)
    lines = [
        edit(G, lenient),
        edit(G, lambda r: rcp(r).update(parallel_tool_calls=True, metadata={"k": "v"})),
        row(action=msg(""), tools=[]),
        edit(G, lambda r: rcp(r).update(input=[None, 3, "x", {"junk": True}])),
        row(action={"type": "function_call", "name": "lookup_order", "arguments": "{}", "call_id": "c1",
                    "id": "fc_1", "status": "completed"}),
        row(action={"type": "function_call", "name": "lookup_order", "arguments": "{\"id\": 2}",
                    "calls": [{"type": "function_call", "name": "undefined_tool", "arguments": "not json"}]}),
        row(action={"type": "function_call", "name": "lookup_order", "arguments": "42"}),
        row(action={"type": "function_call", "name": "lookup_order", "arguments": "null"}),
        row(action={"type": "function_call", "name": "send_email", "arguments": "[1, 2]"}),
        row(action={"type": "function_call", "name": "send_email", "arguments": "\"just a string\""}),
        row(action={"type": "function_call", "name": "send_email", "arguments": " \n\t{\"a\": [true, null]}\r\n "}),
        row(action={"type": "message", "content": "hi", "name": 5, "arguments": {}}),
        edit(G, lambda r: r.update(agent_ref={"type": AGENT_TYPE, "name": AGENT, "extra": [1]})),
        edit(G, lambda r: r.update(**{"": None, "trajectory_id": None})),
    ]
    add("v19_lenient_values", "valid: what upstream does NOT reject: top-level/rcp nulls other than metadata, "
        "absent tool_choice/parallel_tool_calls, tools [] for messages, junk input items, extra keys, a "
        "`calls` list beside a function_call, non-object JSON arguments, whitespace around arguments", lines)

    # v20: upstream example normalised the way the skill asks (drop null rcp fields, add agent_ref).
    up = Path(__file__).resolve().parents[2] / "tests/fixtures/pivot/upstream/example.jsonl"
    lines = []
    for text in up.read_text(encoding="utf-8").splitlines():
        r = json.loads(text)
        r["responses_create_params"] = {k: v for k, v in r["responses_create_params"].items() if v is not None}
        r["agent_ref"] = {"type": AGENT_TYPE, "name": "single_step_tool_use_with_argument_comparison_agent"}
        lines.append(r)
    add("v20_upstream_example_normalized", "valid: upstream RS/data/example.jsonl with null rcp fields dropped "
        "and agent_ref added (the spec's summary example)", lines,
        args=["--agent-ref", "single_step_tool_use_with_argument_comparison_agent"])

    add("v21_many_rows_numeric_sort", "valid: counts 10 vs 9 vs 2 sort numerically, not as strings",
        [row(agent=a, action=fc(t)) for a, t in
         [("many", "lookup_order")] * 10 + [("nine", "send_email")] * 9 + [("two", "lookup_order")] * 2])


# ---------------------------------------------------------------- J: invalid JSON


def json_cases() -> None:
    g = dumps(G)
    cut = '{"responses_create_params": {"input": ['
    assert g.startswith(cut)
    bad("j01_truncated_object", "J: row cut after '[' (error after the trailing newline: line 2 column 1)",
        Raw(cut), "J")
    bad("j01b_truncated_inside_string", "J: row cut inside a string: the line's own newline is an "
        "'Invalid control character' (compare j15 without newline: 'Unterminated string')", Raw(g[:60]), "J")
    bad("j02_extra_data", "J: garbage after a complete object", Raw(g + " x"), "J")
    bad("j03_single_quotes", "J: Python-style single quotes", Raw("{'responses_create_params': {}}"), "J")
    bad("j04_missing_colon", "J: Expecting ':' delimiter", Raw('{"responses_create_params" {}}'), "J")
    bad("j05_missing_comma", "J: Expecting ',' delimiter", Raw('{"a": 1 "b": 2}'), "J")
    bad("j06_unterminated_string", "J: unterminated string; with the line's newline Python reports "
        "'Invalid control character'", Raw('{"a": "abc'), "J")
    bad("j07_invalid_escape", "J: invalid \\escape", Raw('{"a": "x\\qy"}'), "J")
    bad("j08_invalid_u_escape", "J: invalid \\uXXXX escape", Raw('{"a": "\\u12G4"}'), "J")
    bad("j09_control_char_in_string", "J: raw tab inside a string", Raw('{"a": "x\ty"}'), "J")
    bad("j10_python_literal", "J: `True` is not JSON", Raw("True"), "J")
    bad("j11_leading_nbsp", "J: leading NBSP is not JSON whitespace (the line is not blank either)",
        Raw("\u00a0" + g), "J")
    bad("j12_nul_line", "J: a NUL-only line is not blank", Raw("\x00"), "J")
    bad("j13_trailing_formfeed", "J: trailing FF is not JSON whitespace -> Extra data", Raw(g + "\x0c"), "J")
    bad("j14_lone_close_brace", "J: lone }", Raw("}"), "J")
    add("j15_truncated_last_line_no_newline", "J: truncated last line without final newline "
        "(line 1 column len+1, not line 2 column 1)", [good(0), good(1), Raw(g[:60])], check="J", line=3,
        final_newline=False)
    bad("j16_two_objects", "J: two rows on one line", Raw(g + g), "J")
    bad("j17_comment", "J: // comment line", Raw("// comment"), "J")
    add("j18_truncated_object_no_newline", "J: cut after '[' on the last line without newline "
        "(line 1 column len+1)", [good(0), Raw(cut)], check="J", line=2, final_newline=False)


# ---------------------------------------------------------------- R1 / R2


def row_shape_cases() -> None:
    bad("r1a_array_row", "R1: a JSON array wrapping a valid row", [G], "R1")
    bad("r1b_null_row", "R1: null", None, "R1")
    bad("r1c_string_row", "R1: a string", "row", "R1")
    bad("r1d_number_row", "R1: a number", 42, "R1")
    bad("r1e_bool_row", "R1: true", True, "R1")
    bad("r2a_missing_responses_create_params", "R2: no responses_create_params",
        edit(G, lambda r: drop(r, "responses_create_params")), "R2")
    bad("r2b_missing_expected_action", "R2: no expected_action", edit(G, lambda r: drop(r, "expected_action")), "R2")
    bad("r2c_missing_agent_ref", "R2: no agent_ref", edit(G, lambda r: drop(r, "agent_ref")), "R2")
    bad("r2d_empty_object", "R2: {} reports responses_create_params first", {}, "R2")
    bad("r2e_missing_ea_and_agent_ref", "R2: fixed key order, expected_action before agent_ref",
        edit(G, lambda r: drop(r, "agent_ref", "expected_action")), "R2")
    bad("r2f_key_case", "R2: keys are case-sensitive (Agent_ref)",
        edit(G, lambda r: r.update(Agent_ref=r.pop("agent_ref"))), "R2")


# ---------------------------------------------------------------- F1 / F2


def field_cases() -> None:
    m = lambda **kw: (lambda i: good(i, meta=kw))  # noqa: E731
    bad("f1a_missing_field", "F1: --require-field meta_info.turn missing on line 3",
        edit(G, lambda r: drop(r, "meta_info")), "F1", args=["--require-field", "meta_info.turn"])
    bad("f1b_null_field", "F1: present but null counts as missing",
        edit(G, lambda r: r["meta_info"].update(turn=None)), "F1", args=["--require-field", "meta_info.turn"])
    bad("f1c_list_not_indexed", "F1: lists are not indexed: items.0.id is missing when items is a list",
        edit(G, lambda r: r.update(meta={"items": [{"id": 1}]})), "F1",
        args=["--require-field", "meta.items.0.id"], filler=m(items={"0": {"id": 7}}))
    bad("f1d_path_through_string", "F1: walking into a string yields missing",
        edit(G, lambda r: r.update(meta={"x": "a string"})), "F1",
        args=["--require-field", "meta.x.y"], filler=m(x={"y": 1}))
    bad("f1e_empty_path", "F1: --require-field= looks up key \"\" (message shows '')",
        G, "F1", args=["--require-field="], filler=lambda i: good(i, **{"": i}))
    bad("f1f_double_dot", "F1: a..b walks a -> \"\" -> b",
        edit(G, lambda r: r.update(a={"b": 1})), "F1",
        args=["--require-field", "a..b"], filler=lambda i: good(i, a={"": {"b": i}}))
    bad("f1g_dotted_key_not_literal", "F1: key \"x.y\" does not satisfy path x.y",
        edit(G, lambda r: r.update(**{"x.y": 1})), "F1",
        args=["--require-field", "x.y"], filler=lambda i: good(i, x={"y": i}))
    bad("f1h_argv_order", "F1: several --require-field: the first in argv order is reported",
        edit(G, lambda r: drop(r, "meta")), "F1",
        args=["--require-field", "meta.b", "--require-field", "meta.a"], filler=m(a=1, b=2))
    bad("f1i_unicode_path", "F1: non-ASCII path in the message",
        G, "F1", args=["--require-field=méta.ключ"], filler=lambda i: good(i, **{"méta": {"ключ": i}}))
    bad("f1j_top_level_key_null", "F1: top-level provenance null",
        edit(G, lambda r: r.update(uuid=None)), "F1",
        args=["--require-field", "uuid"], filler=lambda i: good(i, uuid=f"u{i}"))
    bad("f2a_none_present", "F2: no member of the group present",
        edit(G, lambda r: drop(r, "meta")), "F2",
        args=["--require-any-field", "meta.uuid,meta.trajectory_id"], filler=m(uuid="u"))
    bad("f2b_spaces_and_empty_items", "F2: items stripped, empty items dropped, joined with ', '",
        edit(G, lambda r: drop(r, "meta")), "F2",
        args=["--require-any-field= meta.a , ,meta.b,"], filler=m(b=1))
    bad("f2c_members_null", "F2: members present but null",
        edit(G, lambda r: r.update(meta={"a": None, "b": None})), "F2",
        args=["--require-any-field", "meta.a,meta.b"], filler=m(a=1, b=None))
    bad("f2d_group_argv_order", "F2: the first failing group in argv order is reported",
        edit(G, lambda r: drop(r, "meta")), "F2",
        args=["--require-any-field", "meta.c,meta.d", "--require-any-field", "meta.a,meta.b"], filler=m(a=1, c=1))
    bad("f2e_single_item_group", "F2: a one-item group",
        edit(G, lambda r: drop(r, "meta")), "F2", args=["--require-any-field", "meta.only"], filler=m(only=0))
    bad("f2f_group_with_dropped_empty_group", "F2: an all-empty group is dropped; the next group still checked",
        edit(G, lambda r: drop(r, "meta")), "F2",
        args=["--require-any-field= , ", "--require-any-field", "meta.a , meta.b"], filler=m(a=[]))


# ---------------------------------------------------------------- A


def agent_cases() -> None:
    ar = lambda v: edit(G, lambda r: r.update(agent_ref=v))  # noqa: E731
    bad("a1a_agent_ref_list", "A1: agent_ref is a list", ar([AGENT_TYPE, AGENT]), "A1")
    bad("a1b_agent_ref_null", "A1: agent_ref null (passes R2, fails A1)", ar(None), "A1")
    bad("a1c_agent_ref_string", "A1: agent_ref is the bare name", ar(AGENT), "A1")
    bad("a2a_type_missing", "A2: no type", ar({"name": AGENT}), "A2")
    bad("a2b_type_wrong", "A2: responses_api_agent (singular)", ar({"type": "responses_api_agent", "name": AGENT}), "A2")
    bad("a2c_type_case", "A2: type is case-sensitive", ar({"type": "Responses_API_Agents", "name": AGENT}), "A2")
    bad("a2d_type_null", "A2: type null", ar({"type": None, "name": AGENT}), "A2")
    bad("a3a_name_missing", "A3: no name", ar({"type": AGENT_TYPE}), "A3")
    bad("a3b_name_empty", "A3: empty name", ar({"type": AGENT_TYPE, "name": ""}), "A3")
    bad("a3c_name_int", "A3: name is a number", ar({"type": AGENT_TYPE, "name": 7}), "A3")
    bad("a3d_name_null", "A3: name null", ar({"type": AGENT_TYPE, "name": None}), "A3")
    bad("a4a_mismatch", "A4: --agent-ref differs on line 3", ar({"type": AGENT_TYPE, "name": "other_agent"}), "A4",
        args=["--agent-ref", AGENT])
    bad("a4b_case_mismatch", "A4: comparison is exact (case)", ar({"type": AGENT_TYPE, "name": "Pivot_Agent"}), "A4",
        args=["--agent-ref", AGENT])
    bad("a4c_whitespace_mismatch", "A4: comparison is exact (leading space)",
        ar({"type": AGENT_TYPE, "name": " " + AGENT}), "A4", args=["--agent-ref", AGENT])
    bad("a4d_unicode_mismatch", "A4: printable non-ASCII names in the repr",
        ar({"type": AGENT_TYPE, "name": "агент"}), "A4", args=["--agent-ref=агент_日本"],
        filler=lambda i: row(agent="агент_日本", action=fc("send_email", {"id": i})))
    add("a4e_empty_expected", "A4: --agent-ref= (empty) is still compared; every row fails, first row at line 3 "
        "after two blank lines", [BLANK, Raw("  "), good(0), good(1)], check="A4", line=3, args=["--agent-ref="])
    add("a4f_name_empty_with_empty_expected", "A3 before A4: name \"\" with --agent-ref= reports A3 (line 2, "
        "after a blank line: no row can pass --agent-ref=)", [BLANK, ar({"type": AGENT_TYPE, "name": ""})],
        check="A3", line=2, args=["--agent-ref="])


# ---------------------------------------------------------------- P


def params_cases() -> None:
    setp = lambda **kw: edit(G, lambda r: rcp(r).update(**kw))  # noqa: E731
    delp = lambda *ks: edit(G, lambda r: drop(rcp(r), *ks))  # noqa: E731
    rc = lambda v: edit(G, lambda r: r.update(responses_create_params=v))  # noqa: E731
    bad("p1a_rcp_list", "P1: responses_create_params is a list", rc([rcp(G)]), "P1")
    bad("p1b_rcp_null", "P1: responses_create_params null (passes R2)", rc(None), "P1")
    bad("p1c_rcp_string", "P1: responses_create_params is a string", rc("hello"), "P1")
    bad("p2_metadata_null", "P2: metadata null", setp(metadata=None), "P2")
    bad("p3a_tool_choice_required", "P3: 'required'", setp(tool_choice="required"), "P3")
    bad("p3b_tool_choice_null", "P3: present null -> None", setp(tool_choice=None), "P3")
    bad("p3c_tool_choice_object", "P3: object -> dict repr", setp(tool_choice={"type": "function", "name": "lookup_order"}),
        "P3")
    bad("p3d_tool_choice_none", "P3: 'none'", setp(tool_choice="none"), "P3")
    bad("p3e_tool_choice_upper", "P3: 'AUTO' (case-sensitive)", setp(tool_choice="AUTO"), "P3")
    bad("p3f_tool_choice_false", "P3: false -> False", setp(tool_choice=False), "P3")
    bad("p3g_tool_choice_list", "P3: ['auto', 1, None, True]", setp(tool_choice=["auto", 1, None, True]), "P3")
    bad("p3h_tool_choice_int", "P3: 0", setp(tool_choice=0), "P3")
    bad("p3i_tool_choice_float", "P3: 1.5", setp(tool_choice=1.5), "P3")
    bad("p3j_tool_choice_nested", "P3: nested dict/list repr",
        setp(tool_choice={"a": {"b": [1, "x"]}, "c": None, "d": False}), "P3")
    bad("p4a_input_missing", "P4: no input", delp("input"), "P4")
    bad("p4b_input_empty", "P4: []", setp(input=[]), "P4")
    bad("p4c_input_string", "P4: string input (legal in the Responses API) is rejected", setp(input="hello"), "P4")
    bad("p4d_input_null", "P4: null", setp(input=None), "P4")
    bad("p4e_input_object", "P4: object", setp(input={"0": "x"}), "P4")
    bad("p5a_tools_missing", "P5: no tools (swe_pivot style)", delp("tools"), "P5")
    bad("p5b_tools_null", "P5: null", setp(tools=None), "P5")
    bad("p5c_tools_object", "P5: object", setp(tools={"lookup_order": {}}), "P5")
    bad("p5d_tools_message_row", "P5: tools required even for message rows",
        edit(row(action=msg()), lambda r: drop(rcp(r), "tools")), "P5")
    bad("p6a_ptc_null", "P6: parallel_tool_calls null", setp(parallel_tool_calls=None), "P6")
    bad("p6b_ptc_zero", "P6: 0", setp(parallel_tool_calls=0), "P6")
    bad("p6c_ptc_string", "P6: \"false\"", setp(parallel_tool_calls="false"), "P6")
    bad("p6d_ptc_one", "P6: 1", setp(parallel_tool_calls=1), "P6")


# ---------------------------------------------------------------- X


def action_cases() -> None:
    ea = lambda v: edit(G, lambda r: r.update(expected_action=v))  # noqa: E731
    c = fc("lookup_order")
    bad("x1a_list_of_two_calls", "X1: a list of two calls", ea([c, fc("send_email")]), "X1")
    bad("x1b_null", "X1: null (passes R2)", ea(None), "X1")
    bad("x1c_string", "X1: string", ea("lookup_order"), "X1")
    bad("x2a_content_missing", "X2: message without content", ea({"type": "message"}), "X2")
    bad("x2b_content_null", "X2: content null", ea({"type": "message", "content": None}), "X2")
    bad("x2c_content_parts", "X2: content as Responses output parts",
        ea({"type": "message", "content": [{"type": "output_text", "text": "hi"}]}), "X2")
    bad("x2d_content_number", "X2: content number", ea({"type": "message", "content": 3}), "X2")
    bad("x3a_function_call_batch", "X3: function_call_batch (accepted by the server, not the validator)",
        ea({"type": "function_call_batch", "calls": [c, fc("send_email")]}), "X3")
    bad("x3b_type_case", "X3: 'Message'", ea({"type": "Message", "content": "x"}), "X3")
    bad("x3c_type_missing", "X3: no type -> None", ea({"name": "lookup_order", "arguments": "{}"}), "X3")
    bad("x3d_type_null", "X3: type null -> None", ea({"type": None, "content": "x"}), "X3")
    bad("x3e_type_int", "X3: type 1", ea({"type": 1}), "X3")
    bad("x3f_type_tool_call", "X3: 'tool_call'", ea({"type": "tool_call", "name": "lookup_order", "arguments": "{}"}), "X3")
    bad("x3g_type_list", "X3: type ['message']", ea({"type": ["message"], "content": "x"}), "X3")
    bad("x4a_name_missing", "X4: no name", ea({"type": "function_call", "arguments": "{}"}), "X4")
    bad("x4b_name_empty", "X4: empty name", ea({"type": "function_call", "name": "", "arguments": "{}"}), "X4")
    bad("x4c_name_int", "X4: name 5", ea({"type": "function_call", "name": 5, "arguments": "{}"}), "X4")
    bad("x5a_arguments_object", "X5: arguments as an object", ea({"type": "function_call", "name": "lookup_order",
                                                                 "arguments": {"id": 1}}), "X5")
    bad("x5b_arguments_missing", "X5: no arguments", ea({"type": "function_call", "name": "lookup_order"}), "X5")
    bad("x5c_arguments_null", "X5: arguments null", ea({"type": "function_call", "name": "lookup_order",
                                                        "arguments": None}), "X5")
    bad("x5d_arguments_list", "X5: arguments list", ea({"type": "function_call", "name": "lookup_order",
                                                        "arguments": ["{}"]}), "X5")
    fa = lambda s: ea({"type": "function_call", "name": "lookup_order", "arguments": s})  # noqa: E731
    bad("x6a_arguments_truncated", "X6: truncated JSON object", fa('{"id": '), "X6")
    bad("x6b_arguments_empty", "X6: empty string", fa(""), "X6")
    bad("x6c_arguments_single_quotes", "X6: Python dict repr", fa("{'id': 1}"), "X6")
    bad("x6d_arguments_python_literal", "X6: True", fa("True"), "X6")
    bad("x6e_arguments_extra_data", "X6: two objects", fa("{} {}"), "X6")
    bad("x6f_arguments_multiline", "X6: error on the 2nd line of the arguments string", fa('{\n  "id": 1,\n  oops\n}'),
        "X6")


# ---------------------------------------------------------------- T


def tool_cases() -> None:
    bad("t1a_tool_absent", "T1: expected tool not in tools", row(action=fc("cancel_order")), "T1")
    bad("t1b_case_sensitive", "T1: names compare exactly", row(action=fc("Lookup_Order")), "T1")
    bad("t1c_empty_tools", "T1: tools []", row(action=fc("lookup_order"), tools=[]), "T1")
    bad("t1d_empty_name_shadows_function_name", "T1: name \"\" wins over function.name and is then discarded",
        row(action=fc("lookup_order"), tools=[{"type": "function", "name": "", "function": {"name": "lookup_order"}}]),
        "T1")
    bad("t1e_junk_tools", "T1: only junk entries name the tool",
        row(action=fc("lookup_order"), tools=[None, Lit("lookup_order"), {"function": "lookup_order"}, ["lookup_order"],
                                              {"function": {"name": 3}}, {"tool": {"name": "lookup_order"}}]), "T1")
    bad("t1f_unicode_name", "T1: printable non-ASCII name in the list repr",
        row(action=fc("café"), tools=["cafe", "café_au_lait"]), "T1")
    bad("t1h_top_name_shadows_function_name", "T1: a str `name` wins, so `function.name` is not a tool name",
        row(action=fc("inner"), tools=[{"name": "outer", "function": {"name": "inner"}}]), "T1")
    bad("t1i_chat_shape_other_name", "T1: chat-completions shaped tools name other tools",
        row(action=fc("lookup_order"), tools=[tool("send_email", "chat")]), "T1")
    bad("t1g_whitespace_name", "T1: trailing space matters", row(action=fc("lookup_order "), tools=["lookup_order"]),
        "T1")


# ---------------------------------------------------------------- E


def empty_cases() -> None:
    add("e01_empty_file", "E: zero bytes", [], raw=b"", check="E")
    add("e02_only_blank_lines", "E: only newlines", [BLANK] * 4, check="E")
    add("e03_only_whitespace_lines", "E: only whitespace lines (space, tab, NBSP, U+3000), no final newline",
        [Raw("  "), Raw("\t"), Raw("\u00a0"), Raw("\u3000")], check="E", final_newline=False)
    add("e04_only_crlf_blank_lines", "E: CRLF blank lines", [BLANK, Raw(" "), BLANK], eol="\r\n", check="E")


# ---------------------------------------------------------------- ordering: which check wins


def order_cases() -> None:
    def both(*fns: Callable[[Dict[str, Any]], Any]) -> Dict[str, Any]:
        r = copy.deepcopy(G)
        for f in fns:
            f(r)
        return r
    md_null = lambda r: rcp(r).update(metadata=None)  # noqa: E731
    bad("o01_r2_before_p", "R2 before P: no expected_action and metadata null", both(
        lambda r: drop(r, "expected_action"), md_null), "R2")
    bad("o02_f1_before_a1", "F1 before A: missing field and agent_ref not an object", both(
        lambda r: drop(r, "meta_info"), lambda r: r.update(agent_ref="x")), "F1",
        args=["--require-field", "meta_info.turn"])
    bad("o03_f2_before_a", "F2 before A", both(lambda r: drop(r, "meta_info"), lambda r: r.update(agent_ref=None)),
        "F2", args=["--require-any-field", "meta_info.nope,meta_info.turn"])
    bad("o04_f1_before_f2_any_argv_order", "all F1 before any F2 even when --require-any-field comes first",
        both(lambda r: drop(r, "meta_info")), "F1",
        args=["--require-any-field", "meta_info.a,meta_info.step", "--require-field", "meta_info.turn"])
    bad("o05_a2_before_p2", "A before P: agent_ref.type wrong and metadata null", both(
        lambda r: r["agent_ref"].update(type="x"), md_null), "A2")
    bad("o06_a1_before_p1", "A before P: agent_ref null and rcp null", both(
        lambda r: r.update(agent_ref=None, responses_create_params=None)), "A1")
    bad("o07_a4_before_p", "A4 before P: --agent-ref mismatch and tool_choice bad", both(
        lambda r: r["agent_ref"].update(name="other"), lambda r: rcp(r).update(tool_choice="none")), "A4",
        args=["--agent-ref", AGENT])
    bad("o08_a3_before_x", "A before X: name empty and expected_action null", both(
        lambda r: r["agent_ref"].update(name=""), lambda r: r.update(expected_action=None)), "A3")
    bad("o09_p2_before_p3", "P: metadata before tool_choice", both(md_null, lambda r: rcp(r).update(
        tool_choice="required")), "P2")
    bad("o10_p3_before_p4", "P: tool_choice before input", both(lambda r: rcp(r).update(
        tool_choice="none", input=[])), "P3")
    bad("o11_p4_before_p5", "P: input before tools", both(lambda r: drop(rcp(r), "input", "tools")), "P4")
    bad("o12_p5_before_p6", "P: tools before parallel_tool_calls", both(lambda r: rcp(r).update(
        tools=None, parallel_tool_calls=None)), "P5")
    bad("o13_all_p_fail", "P: every P check fails -> P2", both(lambda r: rcp(r).update(
        metadata=None, tool_choice=None, input="x", tools="y", parallel_tool_calls="z")), "P2")
    bad("o14_p_before_x", "P before X: tools missing and expected_action null", both(
        lambda r: drop(rcp(r), "tools"), lambda r: r.update(expected_action=None)), "P5")
    bad("o15_p6_before_x3", "P before X: parallel_tool_calls 0 and function_call_batch", both(
        lambda r: rcp(r).update(parallel_tool_calls=0),
        lambda r: r.update(expected_action={"type": "function_call_batch", "calls": []})), "P6")
    bad("o16_x3_before_x2", "X: type dispatch first (bad type, no content)", both(
        lambda r: r.update(expected_action={"type": "msg"})), "X3")
    bad("o17_x4_before_x5", "X: name before arguments", both(
        lambda r: r.update(expected_action={"type": "function_call", "name": "", "arguments": {}})), "X4")
    bad("o18_x5_before_t1", "X before T: arguments object and tool absent", both(
        lambda r: r.update(expected_action={"type": "function_call", "name": "nope", "arguments": {}})), "X5")
    bad("o19_x6_before_t1", "X before T: arguments invalid and tool absent", both(
        lambda r: r.update(expected_action={"type": "function_call", "name": "nope", "arguments": "{"})), "X6")
    bad("o20_x_with_no_check_tool_names", "--no-check-tool-names does not disable X", both(
        lambda r: r.update(expected_action={"type": "function_call", "name": "nope", "arguments": "{"})), "X6",
        args=["--no-check-tool-names"])
    bad("o21_r1_before_f", "R1 before F1", [1, 2], "R1", args=["--require-field", "meta_info.turn"])
    bad("o22_r2_before_f1", "R2 before F1", both(lambda r: drop(r, "agent_ref", "meta_info")), "R2",
        args=["--require-field", "meta_info.turn"])
    bad("o23_message_type_skips_t", "message rows never reach T (no tools named)", both(
        lambda r: r.update(expected_action={"type": "message", "content": None, "name": "nope"})), "X2")
    add("o24_first_error_wins", "first failing line wins: P3 on line 3, invalid JSON on line 4, R1 on line 5",
        [good(0), good(1), edit(G, lambda r: rcp(r).update(tool_choice="required")), Raw("{oops"), [1]],
        check="P3", line=3)
    add("o25_json_error_before_later_rows", "J on line 2 stops before a row-shape error on line 3",
        [good(0), Raw("{"), None], check="J", line=2)


# ---------------------------------------------------------------- line numbering


def line_cases() -> None:
    p3 = edit(G, lambda r: rcp(r).update(tool_choice="required"))
    add("l01_blank_lines_shift_numbers", "blank and whitespace-only lines count: error on physical line 7",
        [BLANK, good(0), Raw("   "), BLANK, good(1), Raw("\t"), p3, good(2)], check="P3", line=7)
    add("l02_crlf_error_line", "CRLF file, error on line 4", [good(0), good(1), BLANK, p3, good(2)],
        eol="\r\n", check="P3", line=4)
    add("l03_crlf_json_error", "CRLF file, row cut after '[': char offset counts the translated \\n (one "
        "char), not \\r\\n", [good(0), good(1), Raw('{"responses_create_params": {"input": ['), good(2)],
        eol="\r\n", check="J", line=3)
    add("l04_no_final_newline_error_last_line", "error on the last line, which has no newline",
        [good(0), good(1), row(action=fc("cancel_order"))], final_newline=False, check="T1", line=3)
    add("l05_unicode_whitespace_lines", "whitespace-only lines with NBSP, U+3000, U+2028, U+0085, VT, FF count",
        [good(0), Raw("\u00a0"), Raw("\u3000"), Raw("\u2028"), Raw("\u0085"), Raw("\x0b"), Raw("\x0c"), p3],
        check="P3", line=8)
    add("l06_error_after_many_rows", "50 valid rows, error on line 51",
        [good(i) for i in range(50)] + [edit(G, lambda r: r.update(expected_action=None))], check="X1", line=51)
    add("l07_crlf_no_final_newline_error", "CRLF without final newline, error on the last line",
        [good(0), BLANK, edit(G, lambda r: rcp(r).update(metadata=None))], eol="\r\n", final_newline=False,
        check="P2", line=3)
    add("l08_crlf_json_error_last_line_no_newline", "CRLF, truncated last row without newline",
        [good(0), Raw(dumps(G)[:60])], eol="\r\n", final_newline=False, check="J", line=2)


# ---------------------------------------------------------------- quirks (deliberate differences)


def quirk_cases() -> None:
    g = dumps(G)
    q = dict(quirk=True)

    def sub(old: str, new: str, base: str = g) -> Raw:
        assert old in base, old
        return Raw(base.replace(old, new, 1))

    bad("q01_nan_in_provenance", "Python accepts NaN (strict JSON: J)",
        Raw(g[:-1] + ', "score": NaN}'), "valid", **q)
    bad("q02_infinity_in_rcp", "Python accepts -Infinity (strict JSON: J)",
        Raw(g.replace('"tool_choice": "auto"', '"tool_choice": "auto", "temperature": -Infinity')), "valid", **q)
    bad("q03_nan_arguments", "arguments \"NaN\" passes X6 in Python",
        row(action={"type": "function_call", "name": "lookup_order", "arguments": "NaN"}), "valid", **q)
    bad("q04_infinity_tool_choice", "tool_choice Infinity -> P3 with repr inf",
        sub('"tool_choice": "auto"', '"tool_choice": Infinity'), "P3", **q)
    bad("q05_dup_key_last_wins_valid", "duplicate agent_ref: invalid first, valid last -> valid in Python",
        sub('"agent_ref": {', '"agent_ref": null, "agent_ref": {'), "valid", **q)
    bad("q06_dup_key_last_wins_invalid", "duplicate tool_choice: auto first, required last -> P3",
        sub('"tool_choice": "auto"', '"tool_choice": "auto", "tool_choice": "required"'), "P3", **q)
    bad("q07_lone_surrogate_provenance", "lone surrogate escape accepted by Python",
        Raw(g[:-1] + ', "note": "\\ud800"}'), "valid", **q)
    bad("q08_lone_surrogate_agent_name", "lone surrogate \\ud800 in agent name: validates, then print() raises "
        "UnicodeEncodeError; 'rows: 4\\nagent_ref:\\n  pivot_agent: 3\\n' already reached stdout",
        sub('"name": "pivot_agent"', '"name": "bad\\ud800"'), "TRACEBACK", **q)
    bad("q08b_surrogateescape_agent_name", "lone surrogate \\udc80 in agent name: Python 3.11 under C.UTF-8 "
        "writes stdout with errors=surrogateescape, so the raw byte 0x80 is printed and the exit is 0 "
        "(stdout recorded with backslashreplace: '\\x80')",
        sub('"name": "pivot_agent"', '"name": "bad\\udc80"'), "valid", **q)
    deep = lambda n: "[" * n + "]" * n  # noqa: E731
    bad("q09_nesting_300", "300-deep array in provenance: Python accepts (serde_json default limit 128)",
        Raw(g[:-1] + ', "deep": ' + deep(300) + "}"), "valid", **q)
    bad("q10_nesting_5000", "5000-deep array: RecursionError on Python 3.11 (accepted on 3.13)",
        Raw(g[:-1] + ', "deep": ' + deep(5000) + "}"), "TRACEBACK", **q)
    add("q11_bom", "UTF-8 BOM at file start -> J 'Unexpected UTF-8 BOM' on line 1", [], check="J", line=1,
        raw=b"\xef\xbb\xbf" + (dumps(good(0)) + "\n").encode(), **q)
    add("q12_invalid_utf8", "invalid UTF-8 on line 3 -> UnicodeDecodeError traceback", [], check="TRACEBACK",
        raw=(dumps(good(0)) + "\n" + dumps(good(1)) + "\n").encode() + b'{"x": "\xff"}\n', **q)
    add("q13_invalid_utf8_preempts_earlier_error", "line 2 is invalid JSON but invalid UTF-8 on line 4 (same "
        "8 KiB chunk) raises first", [], check="TRACEBACK",
        raw=(dumps(good(0)) + "\n{oops\n" + dumps(good(1)) + "\n").encode() + b'"\xc3\x28"\n', **q)
    add("q14_lone_cr_splits_row", "a bare CR inside a row ends the line (universal newlines) -> J",
        [], check="J", line=2, raw=(dumps(good(0)) + "\n" + g[:50] + "\r" + g[50:] + "\n").encode(), **q)
    add("q15_cr_only_file", "CR-only line endings: valid in Python", [], check="valid",
        raw="\r".join(dumps(good(i)) for i in range(3)).encode() + b"\r", **q)
    add("q16_cr_only_error_line", "CR-only line endings, error on line 3", [], check="P2", line=3,
        raw="\r".join([dumps(good(0)), "", dumps(edit(G, lambda r: rcp(r).update(metadata=None)))]).encode() + b"\r",
        **q)
    bad("q17_bigint_4301_digits", "int literal > 4300 digits -> ValueError traceback",
        Raw(g[:-1] + ', "big": ' + "9" * 4301 + "}"), "TRACEBACK", **q)
    bad("q18_bigint_4300_digits", "int literal of exactly 4300 digits: accepted",
        Raw(g[:-1] + ', "big": ' + "9" * 4300 + "}"), "valid", **q)
    bad("q19_float_overflow", "1e400 parses as inf in Python (serde_json: out of range)",
        Raw(g[:-1] + ', "huge": 1e400}'), "valid", **q)
    bad("q20_trailing_comma_object", "trailing comma in object: 3.11 'Expecting property name…', 3.13 'Illegal "
        "trailing comma…'", Raw(g[:-1] + ",}"), "J", **q)
    bad("q21_trailing_comma_array", "trailing comma in array: 3.11 'Expecting value', 3.13 'Illegal trailing comma'",
        Raw('{"a": [1, 2, ]}'), "J", **q)
    bad("q22_non_ascii_before_json_error", "error offset counts code points, not bytes",
        Raw('{"note": "日本語 ✓ 😀", "a": }'), "J", **q)
    bad("q23_x6_non_ascii_offset", "X6 message offset in code points",
        row(action={"type": "function_call", "name": "lookup_order", "arguments": '{"q": "日本語", }'}), "X6", **q)
    bad("q24_x1c_only_line_is_blank", "a line of \\x1c-\\x1f is blank for str.strip (not for Rust trim) -> "
        "skipped, the file is valid", Raw("\x1c\x1d\x1e\x1f"), "valid", **q)
    bad("q25_repr_quote", "repr switches to double quotes: \"it's\"",
        edit(G, lambda r: r["agent_ref"].update(name="it's")), "A4", args=["--agent-ref", AGENT], **q)
    bad("q26_repr_both_quotes", "repr with both quotes: 'it\\'s \"x\"'",
        edit(G, lambda r: r["agent_ref"].update(name="it's \"x\"")), "A4", args=["--agent-ref", AGENT], **q)
    bad("q27_repr_escapes", "repr escapes backslash, tab, newline, zero-width space, DEL, U+E000, U+10FFFF",
        edit(G, lambda r: rcp(r).update(tool_choice="a\\b\tc\nd\u200be\x7ff\ue000g\U0010ffff")), "P3", **q)
    bad("q28_repr_floats", "float reprs: 1e+16, 1e-07, -0.0, 1.0, 0.1",
        edit(G, lambda r: rcp(r).update(tool_choice=[1e16, 1e-7, -0.0, 1.0, 0.1, 123456789012345678])), "P3", **q)
    bad("q29_repr_tool_name_quote", "T1 list repr of a name containing a quote",
        row(action=fc("it's")), "T1", **q)
    bad("q30_repr_float_exponent_literal", "1E2 / 1.0e0 literals become floats 100.0 / 1.0",
        sub('"tool_choice": "auto"', '"tool_choice": [1E2, 1.0e0, -0]'), "P3", **q)
    add("q31_control_char_names_verbatim", "names with a tab and an escaped newline print verbatim in the summary",
        [row(agent="tab\tagent"), row(agent="new\nline", action=fc("send_email"))], check="valid", **q)
    bad("q32_cli_agent_prefix", "argparse prefix: --agent means --agent-ref", edit(
        G, lambda r: r["agent_ref"].update(name="x")), "A4", args=["--agent", AGENT], **q)
    add("q33_cli_repeated_agent_ref", "repeated --agent-ref: last wins", [good(0), good(1)], check="valid",
        args=["--agent-ref", "first", "--agent-ref", AGENT], **q)
    add("q34_cli_unknown_flag", "unknown flag -> usage error, exit 2", [good(0)], check="USAGE",
        args=["--max-errors", "5"], **q)
    add("q35_cli_ambiguous_prefix", "--require is ambiguous -> exit 2", [good(0)], check="USAGE",
        args=["--require", "x"], **q)
    add("q36_cli_no_check_prefix", "argparse prefix: --no-check means --no-check-tool-names",
        [good(0), row(action=fc("absent"))], check="valid", args=["--no-check"], **q)
    bad("q37_lone_surrogate_arguments", "arguments string holding a lone surrogate escape is valid JSON to Python",
        row(action={"type": "function_call", "name": "lookup_order", "arguments": '{"a": "\\udfff"}'}), "valid", **q)
    bad("q38_nan_in_arguments_object", "arguments '{\"x\": NaN}' passes X6 in Python",
        row(action={"type": "function_call", "name": "lookup_order", "arguments": '{"x": NaN}'}), "valid", **q)
    bad("q39_json_error_after_astral", "error after astral chars: 1 code point each (2 UTF-16 units, 4 bytes)",
        Raw('{"e": "😀😀😀" "x"}'), "J", **q)
    bad("q40_p3_repr_unicode_nonprintable", "P3 repr of U+00AD (soft hyphen, not printable) -> '\\xad'",
        edit(G, lambda r: rcp(r).update(tool_choice="soft\u00adhyphen")), "P3", **q)


def fix_quirk_intents() -> None:
    # Cases whose intended outcome is "exit 0" carry check None (and no line).
    for c in CASES:
        if c.check == "valid":
            c.check, c.line = None, None
        elif c.check in ("TRACEBACK", "USAGE"):
            c.line = None


def _strict_loads(text: str) -> Any:
    """json.loads that also rejects what strict JSON parsers (serde_json) reject and Python accepts."""
    def pairs(kv: List[Any]) -> Dict[str, Any]:
        keys = [k for k, _ in kv]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(kv)

    def const(name: str) -> Any:
        raise ValueError(f"non-standard constant {name}")

    def walk(v: Any, depth: int) -> None:
        if depth > 100:
            raise ValueError("nesting too deep")
        if isinstance(v, str):
            if any(0xD800 <= ord(ch) <= 0xDFFF for ch in v):
                raise ValueError("lone surrogate")
        elif isinstance(v, float) and v in (float("inf"), float("-inf")):
            raise ValueError("float overflow")
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2 ** 64:
            raise ValueError("integer beyond 64 bits")
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k, depth + 1)
                walk(x, depth + 1)
        elif isinstance(v, list):
            for x in v:
                walk(x, depth + 1)

    value = json.loads(text, object_pairs_hook=pairs, parse_constant=const)
    walk(value, 0)
    return value


def audit_main_set(cases: List[Case]) -> None:
    """The main set must not depend on Python's JSON dialect (see the module docstring)."""
    for c in cases:
        if c.set != "cases":
            continue
        data = c.content()
        text = data.decode("utf-8")  # strict: valid UTF-8
        assert not text.startswith("\ufeff"), c.id
        assert "\r" not in text.replace("\r\n", ""), f"{c.id}: lone CR"
        for line in text.replace("\r\n", "\n").split("\n"):
            # blank for Python's str.strip() <=> blank for Rust's str::trim() (differ on \x1c-\x1f)
            assert not any(ch in line for ch in "\x1c\x1d\x1e\x1f"), c.id
            if not line.strip():
                continue
            if re.search(r"[\[{]{100}", line) or re.search(r"\d{300}", line):
                raise AssertionError(f"{c.id}: deep nesting or huge number literal")
            try:
                json.loads(line)
            except json.JSONDecodeError:
                continue  # invalid in both dialects (J cases)
            try:
                row_value = _strict_loads(line)
            except ValueError as exc:
                raise AssertionError(f"{c.id}: line accepted only by Python's JSON dialect: {exc}") from exc
            ea = row_value.get("expected_action") if isinstance(row_value, dict) else None
            args = ea.get("arguments") if isinstance(ea, dict) else None
            if isinstance(args, str):
                try:
                    json.loads(args)
                except (json.JSONDecodeError, ValueError):
                    continue
                try:
                    _strict_loads(args)
                except ValueError as exc:
                    raise AssertionError(f"{c.id}: arguments accepted only by Python's JSON dialect: {exc}") from exc


def build() -> List[Case]:
    if not CASES:
        valid_cases()
        json_cases()
        row_shape_cases()
        field_cases()
        agent_cases()
        params_cases()
        action_cases()
        tool_cases()
        empty_cases()
        order_cases()
        line_cases()
        quirk_cases()
        fix_quirk_intents()
        audit_main_set(CASES)
    return CASES


def main() -> int:
    default_out = Path(__file__).resolve().parents[2] / "tests/fixtures/pivot"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("ids", nargs="*", help="only these case ids")
    ns = ap.parse_args()
    cases = build()
    known = {c.id for c in cases}
    unknown = [i for i in ns.ids if i not in known]
    if unknown:
        print(f"unknown case ids: {', '.join(unknown)}", file=sys.stderr)
        return 2
    for c in cases:
        if ns.ids and c.id not in ns.ids:
            continue
        d = ns.out / c.set
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{c.id}.jsonl").write_bytes(c.content())
        (d / f"{c.id}.args").write_bytes("".join(a + "\n" for a in c.args).encode("utf-8"))
    index = {
        "generator": "scripts/pivot-parity/gen_cases.py",
        "cases": [
            {"id": c.id, "set": c.set, "desc": c.desc, "intended_check": c.check, "intended_line": c.line,
             "args": c.args}
            for c in cases
        ],
    }
    if not ns.ids:
        (ns.out / "index.json").write_text(json.dumps(index, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    n_main = sum(c.set == "cases" for c in cases)
    print(f"wrote {n_main} cases and {len(cases) - n_main} quirks under {ns.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
