//! What a pivot selection kept, broken down: per depth (`meta_info.depth`), per expected tool,
//! and the distribution (deciles) of the profiled pivots' on-policy mean reward and variance, so
//! a threshold can be chosen by what it keeps.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Pivots seen and kept under one depth or tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub pivots: u64,
    pub kept: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// Keyed by depth; `None`: the row has no `meta_info.depth`.
    pub per_depth: BTreeMap<Option<u64>, Tally>,
    pub per_tool: BTreeMap<String, Tally>,
    /// 0th, 10th, …, 100th percentile (numpy's linear rule) over the profiled pivots.
    pub mean_deciles: Vec<f64>,
    pub variance_deciles: Vec<f64>,
}

/// The 11 deciles of the finite values, numpy's `percentile` default (linear between ranks);
/// empty when there are none.
pub fn deciles(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Vec::new();
    }
    v.sort_by(f64::total_cmp);
    (0..=10)
        .map(|d| {
            let at = f64::from(d) / 10.0 * (v.len() - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
        })
        .collect()
}

fn depth_name(d: &Option<u64>) -> String {
    d.map_or_else(|| "none".into(), |d| d.to_string())
}

impl Breakdown {
    pub fn add_to(&self, m: &mut Map<String, Value>) {
        let tally = |t: &Tally| json!({"pivots": t.pivots, "kept": t.kept});
        let depth: Map<String, Value> = self
            .per_depth
            .iter()
            .map(|(d, t)| (depth_name(d), tally(t)))
            .collect();
        let tool: Map<String, Value> = self
            .per_tool
            .iter()
            .map(|(k, t)| (k.clone(), tally(t)))
            .collect();
        m.insert("per_depth".into(), Value::Object(depth));
        m.insert("per_tool".into(), Value::Object(tool));
        m.insert("mean_reward_deciles".into(), json!(self.mean_deciles));
        m.insert(
            "reward_variance_deciles".into(),
            json!(self.variance_deciles),
        );
    }

    /// Lines printed under the counts table.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let list = |items: Vec<String>| items.join(", ");
        if !self.per_depth.is_empty() {
            let items = self
                .per_depth
                .iter()
                .map(|(d, t)| format!("{}: {} of {}", depth_name(d), t.kept, t.pivots))
                .collect();
            out.push_str(&format!("kept per depth: {}\n", list(items)));
        }
        if !self.per_tool.is_empty() {
            let items = self
                .per_tool
                .iter()
                .map(|(k, t)| format!("{k}: {} of {}", t.kept, t.pivots))
                .collect();
            out.push_str(&format!("kept per expected tool: {}\n", list(items)));
        }
        let row = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.3}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !self.mean_deciles.is_empty() {
            out.push_str(&format!(
                "on-policy mean reward, deciles 0..100: {}\n",
                row(&self.mean_deciles)
            ));
            out.push_str(&format!(
                "on-policy reward variance, deciles 0..100: {}\n",
                row(&self.variance_deciles)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deciles_are_numpys_linear_percentiles() {
        // numpy.percentile([1, 2, 3, 4], [0, 10, 50, 90, 100]) = 1, 1.3, 2.5, 3.7, 4
        let d = deciles([4.0, 1.0, 3.0, 2.0, f64::NAN].into_iter());
        assert_eq!(d.len(), 11);
        assert_eq!(d[0], 1.0);
        assert!((d[1] - 1.3).abs() < 1e-12);
        assert!((d[5] - 2.5).abs() < 1e-12);
        assert!((d[9] - 3.7).abs() < 1e-12);
        assert_eq!(d[10], 4.0);
        assert!(deciles(std::iter::empty()).is_empty());
        assert_eq!(deciles([0.5].into_iter()), vec![0.5; 11]);
    }
}
