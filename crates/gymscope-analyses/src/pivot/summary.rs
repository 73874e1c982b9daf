//! Upstream's success summary (`rows:`, `agent_ref:`, `expected_tool:`, the action split and the
//! averages), with its ordering (count descending, then code point) and rounding.

use super::checks::RowFacts;
use crate::figures::percent_of;
use std::collections::HashMap;

#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub rows: u64,
    pub agents: HashMap<String, u64>,
    pub expected_tools: HashMap<String, u64>,
    pub function_call: u64,
    pub message: u64,
    /// Only with `--allow-batch`.
    pub function_call_batch: u64,
    pub input_items_total: u64,
    pub tools_total: u64,
}

/// Sorted by count descending, then name in code point order.
pub fn ranked(counts: &HashMap<String, u64>) -> Vec<(&str, u64)> {
    let mut rows: Vec<(&str, u64)> = counts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    rows
}

impl Summary {
    pub fn add(&mut self, facts: &RowFacts) {
        self.rows += 1;
        *self.agents.entry(facts.agent.clone()).or_default() += 1;
        match facts.action_type {
            "message" => self.message += 1,
            "function_call_batch" => self.function_call_batch += 1,
            _ => self.function_call += 1,
        }
        for tool in &facts.expected_tools {
            *self.expected_tools.entry(tool.clone()).or_default() += 1;
        }
        self.input_items_total += facts.input_items as u64;
        self.tools_total += facts.tools as u64;
    }

    /// Adds the rows read after these (another reader's, in file order).
    pub fn merge(&mut self, later: Summary) {
        self.rows += later.rows;
        for (agent, n) in later.agents {
            *self.agents.entry(agent).or_default() += n;
        }
        for (tool, n) in later.expected_tools {
            *self.expected_tools.entry(tool).or_default() += n;
        }
        self.function_call += later.function_call;
        self.message += later.message;
        self.function_call_batch += later.function_call_batch;
        self.input_items_total += later.input_items_total;
        self.tools_total += later.tools_total;
    }

    /// The lines upstream prints on success.
    pub fn text(&self) -> String {
        let mut out = format!("rows: {}\n", self.rows);
        for (title, counts) in [
            ("agent_ref", &self.agents),
            ("expected_tool", &self.expected_tools),
        ] {
            if counts.is_empty() {
                continue;
            }
            out.push_str(title);
            out.push_str(":\n");
            for (name, count) in ranked(counts) {
                out.push_str(&format!("  {name}: {count}\n"));
            }
        }
        out.push_str("expected_action_split:\n");
        out.push_str(&format!(
            "  function_call: {} ({})\n",
            self.function_call,
            percent_of(self.function_call, self.rows)
        ));
        out.push_str(&format!(
            "  message: {} ({})\n",
            self.message,
            percent_of(self.message, self.rows)
        ));
        if self.function_call_batch > 0 {
            let n = self.function_call_batch;
            out.push_str(&format!(
                "  function_call_batch: {n} ({})\n",
                percent_of(n, self.rows)
            ));
        }
        let avg = |total: u64| {
            if self.rows == 0 {
                0.0
            } else {
                total as f64 / self.rows as f64
            }
        };
        out.push_str(&format!(
            "avg_input_items: {:.2}\n",
            avg(self.input_items_total)
        ));
        out.push_str(&format!("avg_tools: {:.2}\n", avg(self.tools_total)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_is_count_then_code_point() {
        let counts: HashMap<String, u64> = [("beta", 2), ("alpha", 2), ("Alpha", 2), ("z", 5)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let names: Vec<&str> = ranked(&counts).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["z", "Alpha", "alpha", "beta"]);
    }
}
