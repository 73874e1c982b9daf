//! `*_repeat_level_metrics.json` and the `*_across_repeats/*` keys of an agent row, as NeMo Gym
//! v0.7.0 writes them (`reward_profile.py` `_compute_repeat_level_metrics`,
//! `_aggregate_repeat_level_metrics`, orjson): every statistic a float, keys in upstream's order.

use super::write_agent_name;
use crate::json;
use crate::profile::{AcrossRepeats, Profile};
use crate::stats::Spread;
use std::io::{self, Write};

/// Writes `*_repeat_level_metrics.json`: a compact JSON list (`[]` when no agent has two
/// repeats), no trailing newline.
pub fn write_repeat_level_metrics<W: Write>(w: &mut W, p: &Profile) -> io::Result<()> {
    w.write_all(b"[")?;
    for (i, entry) in p.repeats.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"{\"agent_ref\":{\"name\":")?;
        write_agent_name(w, &p.agents[entry.agent].agent)?;
        write!(
            w,
            "}},\"_ng_rollout_index\":{},\"sample_count\":{},\"missing_count\":{}",
            entry.rollout, entry.sample_count, entry.missing_count
        )?;
        for (c, s) in &entry.columns {
            let name = p.column_name(*c);
            let stats = [
                ("mean/", s.mean),
                ("median/", s.median),
                ("std/", s.std),
                ("sem/", s.sem),
                ("min/", s.min),
                ("max/", s.max),
                ("p25/", s.p25),
                ("p75/", s.p75),
            ];
            for (prefix, v) in stats {
                write_member(w, prefix, name, v)?;
            }
            write_ci(w, "", &format!("/{name}"), s)?;
        }
        w.write_all(b"}")?;
    }
    w.write_all(b"]")
}

/// `,"mean_across_repeats/mean/c":…` for each of an agent's across-repeats statistics.
pub(super) fn write_across<W: Write>(
    w: &mut W,
    p: &Profile,
    across: &[AcrossRepeats],
) -> io::Result<()> {
    for a in across {
        let metric = if a.of_mean {
            format!("mean/{}", p.column_name(a.column))
        } else {
            p.column_name(a.column).to_string()
        };
        let s = &a.spread;
        let stats = [
            ("mean_across_repeats/", s.mean),
            ("median_across_repeats/", s.median),
            ("std_across_repeats/", s.std),
            ("min_across_repeats/", s.min),
            ("max_across_repeats/", s.max),
            ("se_across_repeats/", s.sem),
        ];
        for (prefix, v) in stats {
            write_member(w, prefix, &metric, v)?;
        }
        write_ci(w, "_across_repeats", &format!("/{metric}"), s)?;
    }
    Ok(())
}

/// `,"ci_low_95<infix><suffix>":…,"ci_high_95…":…` when the spread has an interval.
fn write_ci<W: Write>(w: &mut W, infix: &str, suffix: &str, s: &Spread) -> io::Result<()> {
    if let Some((low, high)) = s.ci {
        write_member(w, &format!("ci_low_95{infix}"), suffix, low)?;
        write_member(w, &format!("ci_high_95{infix}"), suffix, high)?;
    }
    Ok(())
}

/// `,"<prefix><name>":<v>`.
fn write_member<W: Write>(w: &mut W, prefix: &str, name: &str, v: f64) -> io::Result<()> {
    w.write_all(b",")?;
    json::write_str(w, &format!("{prefix}{name}"))?;
    w.write_all(b":")?;
    json::write_f64(w, v)
}
