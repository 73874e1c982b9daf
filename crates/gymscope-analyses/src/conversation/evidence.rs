//! A row's `ng_trajectory` (NeMo Gym's evidence: `TrajectoryRecord`, upstream
//! `nemo_gym/rollout_observability.py` @07d6b0d; validated by [`crate::gym::trajectory`]) as the
//! conversation view prefers it: turn by turn, each with the model calls it made (their tokens and
//! durations) and its tool calls with their status and timing, the tool outputs under their calls.
//! Read leniently: the writer's schema is strict, but later versions add fields and a reader must
//! take unknown keys; anything of another shape is left out, never an error.

use super::{compact, item, text_of, Item};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token counts of one model call (`token_stats`); `None` is unknown, never 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenStats {
    pub prompt: Option<u64>,
    pub completion: Option<u64>,
    pub reasoning: Option<u64>,
    pub cached: Option<u64>,
    pub total: Option<u64>,
}

impl TokenStats {
    fn of(v: &Value) -> TokenStats {
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        TokenStats {
            prompt: n("prompt_tokens"),
            completion: n("completion_tokens"),
            reasoning: n("reasoning_tokens"),
            cached: n("cached_tokens"),
            total: n("total_tokens"),
        }
    }

    /// "40 prompt + 12 completion tokens (4 reasoning, 0 cached)"; `None` when nothing is known.
    pub fn text(&self) -> Option<String> {
        let main = match (self.prompt, self.completion) {
            (Some(p), Some(c)) => format!("{p} prompt + {c} completion tokens"),
            (Some(p), None) => format!("{p} prompt tokens"),
            (None, Some(c)) => format!("{c} completion tokens"),
            (None, None) => format!("{} tokens", self.total?),
        };
        let details: Vec<String> = [("reasoning", self.reasoning), ("cached", self.cached)]
            .into_iter()
            .filter_map(|(k, v)| Some(format!("{} {k}", v?)))
            .collect();
        Some(if details.is_empty() {
            main
        } else {
            format!("{main} ({})", details.join(", "))
        })
    }
}

/// One model call of the trajectory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    pub model: Option<String>,
    pub duration_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    /// `finish_reason`, else a response status other than `completed`, else the error category.
    pub ended: Option<String>,
    pub tokens: TokenStats,
}

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} s", v / 1000.0)
    } else {
        format!("{v:.0} ms")
    }
}

impl ModelCall {
    fn of(v: &Value) -> ModelCall {
        let meta = &v["response_metadata"];
        let s = |x: &Value| x.as_str().map(str::to_string);
        let status = s(&meta["response_status"]).filter(|st| st != "completed");
        ModelCall {
            model: s(&meta["model"]),
            duration_ms: v["duration_ms"].as_f64(),
            ttft_ms: meta["latency_ttft_ms"].as_f64(),
            ended: s(&meta["finish_reason"])
                .or(status)
                .or_else(|| s(&meta["error_category"])),
            tokens: TokenStats::of(&v["token_stats"]),
        }
    }

    /// "gpt-x · 40 prompt + 12 completion tokens (4 reasoning) · 800 ms (first token 120 ms)".
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.model.clone());
        parts.push(
            self.tokens
                .text()
                .unwrap_or_else(|| "tokens unknown".to_string()),
        );
        if let Some(d) = self.duration_ms {
            parts.push(match self.ttft_ms {
                Some(t) => format!("{} (first token {})", ms(d), ms(t)),
                None => ms(d),
            });
        }
        parts.extend(self.ended.as_ref().map(|e| format!("ended: {e}")));
        parts.join(" · ")
    }
}

/// A tool call's record: how it ended and how long it took.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolTiming {
    pub status: Option<String>,
    pub error_type: Option<String>,
    pub duration_ms: Option<f64>,
}

impl ToolTiming {
    /// "tool failed (http_422) · 95 ms".
    pub fn text(&self) -> String {
        let mut s = format!("tool {}", self.status.as_deref().unwrap_or("unknown"));
        if let Some(e) = &self.error_type {
            s.push_str(&format!(" ({e})"));
        }
        if let Some(d) = self.duration_ms {
            s.push_str(&format!(" · {}", ms(d)));
        }
        s
    }
}

/// What the data says about one item beyond its text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ItemNote {
    /// Tokens the model generated for it (vLLM's `generation_token_ids`; an empty list is not
    /// recorded, not zero).
    pub generated_tokens: Option<u64>,
    /// A function call's tool record (from `ng_trajectory.tool_calls`, by call id).
    pub tool: Option<ToolTiming>,
}

impl ItemNote {
    /// The words shown beside the item's label; `None` with nothing to say.
    pub fn text(&self) -> Option<String> {
        let parts: Vec<String> = [
            self.generated_tokens
                .map(|n| format!("{n} tokens generated")),
            self.tool.as_ref().map(ToolTiming::text),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// The generated token count an output item carries (vLLM model servers' `generation_token_ids`).
pub fn generated_tokens(v: &Value) -> Option<u64> {
    v.get("generation_token_ids")
        .and_then(Value::as_array)
        .map(|ids| ids.len() as u64)
        .filter(|&n| n > 0)
}

/// One turn: its model calls, then what it said and did (reasoning, answer, its tool calls with
/// their outputs), each item with its note.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// "Turn 2 of 3" (with the invocation when the trajectory has several).
    pub label: String,
    /// Cumulative tool steps at the end of the turn.
    pub step_count: Option<i64>,
    pub calls: Vec<ModelCall>,
    pub items: Vec<Item>,
    pub notes: Vec<ItemNote>,
}

/// The trajectory as the conversation view shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub turns: Vec<Turn>,
    /// Every model call, in the trajectory's order (shown when there are no turns).
    pub calls: Vec<ModelCall>,
    /// Tool records by call id.
    pub tools: Vec<(String, ToolTiming)>,
    /// Gap codes (with their detail): what the evidence lacks.
    pub gaps: Vec<String>,
}

impl Trajectory {
    /// The tool record of call `call_id`.
    pub fn tool(&self, call_id: &str) -> Option<&ToolTiming> {
        self.tools
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, t)| t)
    }
}

/// Items of an `answer` / `reasoning_content` value: a list of Responses items, one item, or text.
fn items_of(v: &Value, text: impl Fn(String) -> Item) -> Vec<Item> {
    match v {
        Value::Array(a) => a.iter().map(item).collect(),
        Value::Object(_) => vec![item(v)],
        Value::String(s) => vec![text(s.clone())],
        Value::Null => Vec::new(),
        other => vec![text(compact(other))],
    }
}

/// Whether model-call reference `r` points at call `c` (by id, else by model and response id).
fn refers_to(r: &Value, c: &Value) -> bool {
    if let Some(id) = r["model_call_id"].as_str() {
        return c["model_call_id"].as_str() == Some(id);
    }
    let meta = &c["response_metadata"];
    r["response_id"].is_string()
        && r["response_id"] == meta["response_id"]
        && (r["model_ref"].is_null() || r["model_ref"] == meta["model_ref"])
}

/// Reads `ng_trajectory`; `None` when the row has none (or it is not an object).
pub fn trajectory(v: Option<&Value>) -> Option<Trajectory> {
    let t = v.filter(|t| t.is_object())?;
    let list = |k: &str| t[k].as_array().map(Vec::as_slice).unwrap_or_default();
    let raw_calls = list("model_calls");
    let tools: Vec<(String, ToolTiming)> = list("tool_calls")
        .iter()
        .filter_map(|c| {
            let s = |x: &Value| x.as_str().map(str::to_string);
            Some((
                s(&c["tool_call_id"])?,
                ToolTiming {
                    status: s(&c["status"]),
                    error_type: s(&c["error_type"]),
                    duration_ms: c["duration_ms"].as_f64(),
                },
            ))
        })
        .collect();
    let tool_outputs: Vec<(&str, &Value)> = list("tool_calls")
        .iter()
        .filter_map(|c| Some((c["tool_call_id"].as_str()?, &c["output"])))
        .filter(|(_, o)| !o.is_null())
        .collect();
    let invocations: std::collections::BTreeSet<&str> = list("turns")
        .iter()
        .filter_map(|t| t["invocation_id"].as_str())
        .collect();
    let n = list("turns").len();
    let mut out = Trajectory {
        calls: raw_calls.iter().map(ModelCall::of).collect(),
        gaps: list("gaps")
            .iter()
            .filter_map(|g| {
                let code = g["code"].as_str()?;
                Some(match g["detail"].as_str() {
                    Some(d) => format!("{code} ({d})"),
                    None => code.to_string(),
                })
            })
            .collect(),
        ..Trajectory::default()
    };
    out.tools = tools;
    for (i, turn) in list("turns").iter().enumerate() {
        let mut label = format!("Turn {} of {n}", i + 1);
        if invocations.len() > 1 {
            if let Some(inv) = turn["invocation_id"].as_str() {
                label.push_str(&format!(" · {inv}"));
            }
        }
        let calls = turn["model_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| raw_calls.iter().find(|c| refers_to(r, c)))
            .map(ModelCall::of)
            .collect();
        let mut items = items_of(&turn["reasoning_content"], |text| Item::Reasoning { text });
        let answer = items_of(&turn["answer"], |text| Item::Message {
            role: "assistant".into(),
            text,
        });
        let mut notes: Vec<ItemNote> = vec![ItemNote::default(); items.len()];
        let raw_answer: Vec<&Value> = match &turn["answer"] {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        for (k, it) in answer.into_iter().enumerate() {
            let mut note = ItemNote {
                generated_tokens: raw_answer.get(k).and_then(|v| generated_tokens(v)),
                tool: None,
            };
            let output = if let Item::FunctionCall { call_id, .. } = &it {
                note.tool = out.tool(call_id).cloned();
                tool_outputs
                    .iter()
                    .find(|(id, _)| id == call_id)
                    .map(|(id, o)| Item::FunctionOutput {
                        call_id: (*id).to_string(),
                        output: text_of(Some(o)),
                    })
            } else {
                None
            };
            items.push(it);
            notes.push(note);
            if let Some(o) = output {
                items.push(o);
                notes.push(ItemNote::default());
            }
        }
        out.turns.push(Turn {
            label,
            step_count: turn["step_count"].as_i64(),
            calls,
            items,
            notes,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Upstream's example (the scenario of `responses_api_agents/simple_agent/tests/test_app.py`,
    /// projected as in `tests/unit_tests/test_rollout_collection.py` @07d6b0d): two turns of
    /// simple_agent, a tool answered with HTTP 422.
    fn example() -> Value {
        let mref = json!({"type": "responses_api_models", "name": "model"});
        let meta = |id: &str, ttft: Value| {
            json!({"response_id": id, "model_ref": mref, "model": "policy-7b",
            "dialect": "responses", "status_code": 200, "response_status": "completed", "finish_reason": null,
            "error_category": null, "latency_ttft_ms": ttft, "upstream_attempted": true})
        };
        json!({"schema_version": "1.0", "task_id": "0", "rollout_id": "4-1",
            "invocations": [{"kind": "agent_invocation", "invocation_id": "root", "status": "completed"}],
            "turns": [
                {"invocation_id": "root", "task_id": "0", "rollout_id": "4-1", "turn_no": 1, "timestamp": 1.0,
                 "question": [{"role": "user", "content": "q"}],
                 "answer": [{"type": "function_call", "name": "lookup", "call_id": "call-1", "arguments": "{\"q\":\"x\"}",
                             "generation_token_ids": [1, 2, 3]}],
                 "reasoning_content": [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "look it up"}]}],
                 "resolved": null, "step_count": 1,
                 "model_calls": [{"model_call_id": null, "model_ref": mref, "response_id": "resp-tool"}]},
                {"invocation_id": "root", "task_id": "0", "rollout_id": "4-1", "turn_no": 2, "timestamp": 2.0,
                 "question": [], "answer": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}],
                 "reasoning_content": null, "resolved": true, "step_count": 1,
                 "model_calls": [{"model_call_id": "model-call-2", "model_ref": null, "response_id": null}]}],
            "model_calls": [
                {"model_call_id": "model-call-1", "started_at": 1.0, "completed_at": 1.8, "duration_ms": 800.0,
                 "request": null, "response": null, "response_metadata": meta("resp-tool", json!(120.0)),
                 "token_stats": {"prompt_tokens": 40, "completion_tokens": 12, "reasoning_tokens": 4, "total_tokens": 52, "cached_tokens": 0}},
                {"model_call_id": "model-call-2", "started_at": 2.0, "completed_at": 3.5, "duration_ms": 1500.0,
                 "request": null, "response": null, "response_metadata": meta("resp-final", Value::Null),
                 "token_stats": {"prompt_tokens": 55, "completion_tokens": null, "reasoning_tokens": null, "total_tokens": null, "cached_tokens": null}}],
            "tool_calls": [{"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call-1", "sandbox_id": null,
                "tool_name": "lookup", "started_at": 1.8, "completed_at": 1.9, "duration_ms": 95.0, "timing_source": "executor",
                "status": "failed", "error_type": "http_422", "output": "bad input"}],
            "gaps": [{"code": "resolution_unavailable", "invocation_id": "root", "detail": null}]})
    }

    #[test]
    fn turns_carry_their_calls_tokens_tools_and_outputs() {
        let t = trajectory(Some(&example())).unwrap();
        assert_eq!(t.turns.len(), 2);
        let first = &t.turns[0];
        assert_eq!(first.label, "Turn 1 of 2");
        assert_eq!(first.step_count, Some(1));
        // Resolved by (model_ref, response_id) when the reference has no call id.
        assert_eq!(
            first.calls[0].text(),
            "policy-7b · 40 prompt + 12 completion tokens (4 reasoning, 0 cached) · 800 ms (first token 120 ms)"
        );
        assert_eq!(first.items.len(), 3, "reasoning, call, its output");
        assert_eq!(
            first.items[0],
            Item::Reasoning {
                text: "look it up".into()
            }
        );
        assert!(matches!(&first.items[1], Item::FunctionCall { name, .. } if name == "lookup"));
        assert_eq!(
            first.items[2],
            Item::FunctionOutput {
                call_id: "call-1".into(),
                output: "bad input".into()
            }
        );
        assert_eq!(
            first.notes[1].text().as_deref(),
            Some("3 tokens generated · tool failed (http_422) · 95 ms")
        );
        assert_eq!(first.notes[2].text(), None);
        // Resolved by id; unknown counts stay unknown.
        let second = &t.turns[1];
        assert_eq!(
            second.calls[0].text(),
            "policy-7b · 55 prompt tokens · 1.50 s"
        );
        assert_eq!(
            second.items,
            [Item::Message {
                role: "assistant".into(),
                text: "done".into()
            }]
        );
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.gaps, ["resolution_unavailable"]);
        assert_eq!(t.tool("call-1").unwrap().duration_ms, Some(95.0));
    }

    #[test]
    fn odd_shapes_are_left_out_not_errors() {
        assert_eq!(trajectory(None), None);
        assert_eq!(trajectory(Some(&json!("x"))), None);
        let t = trajectory(Some(&json!({"turns": "no", "model_calls": [1, {"token_stats": 5}],
            "tool_calls": [{"status": "completed"}], "gaps": [{"code": 3}, {"code": "g", "detail": "d"}]})))
        .unwrap();
        assert!(t.turns.is_empty());
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[0].text(), "tokens unknown");
        assert!(t.tools.is_empty(), "a tool record without an id");
        assert_eq!(t.gaps, ["g (d)"]);
        // An answer given as text, a turn without calls.
        let t = trajectory(Some(
            &json!({"turns": [{"answer": "plain", "reasoning_content": "why",
            "model_calls": [{"model_call_id": "gone"}]}]}),
        ))
        .unwrap();
        assert_eq!(
            t.turns[0].items,
            [
                Item::Reasoning { text: "why".into() },
                Item::Message {
                    role: "assistant".into(),
                    text: "plain".into()
                }
            ]
        );
        assert!(t.turns[0].calls.is_empty());
    }

    #[test]
    fn generated_tokens_only_when_recorded() {
        assert_eq!(
            generated_tokens(&json!({"generation_token_ids": [5, 6]})),
            Some(2)
        );
        assert_eq!(generated_tokens(&json!({"generation_token_ids": []})), None);
        assert_eq!(generated_tokens(&json!({"content": "x"})), None);
        assert_eq!(ItemNote::default().text(), None);
    }
}
