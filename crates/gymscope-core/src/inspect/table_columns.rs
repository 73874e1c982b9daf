//! The task table's wide data made readable (issue 44, "Tables for wide data"): the profile's
//! `stat/field` columns (`mean/reward`, `max/output_tokens`, …, about 80 for a run with a few
//! verifier fields) grouped by field — the reward first, then token counts, then each verifier
//! field — with a default set shown (every statistic of the reward, the mean of the rest) and
//! the others a click away in the column picker. Columns without a `/` (`num_rollouts`, …) form
//! their own group at the end.

/// One group of the table's header: a field and its columns (indices into the task headers),
/// in display order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnGroup {
    /// The field (`reward`, `output_tokens`, `judge_score`), or "" for columns of no field.
    pub field: String,
    pub columns: Vec<usize>,
}

/// Display order of statistics within a group (others after, as written).
const STATS: [&str; 5] = ["mean", "median", "std", "min", "max"];

/// The statistic and field of a header (`mean/reward` → (`mean`, `reward`)).
pub fn split(header: &str) -> Option<(&str, &str)> {
    header.split_once('/')
}

/// The short label of a column inside its group: the statistic, or the whole header.
pub fn label(header: &str) -> &str {
    split(header).map_or(header, |(stat, _)| stat)
}

fn field_rank(field: &str) -> u8 {
    match field {
        "reward" => 0,
        f if f.ends_with("tokens") => 1,
        "" => 3,
        _ => 2,
    }
}

fn stat_rank(stat: &str) -> usize {
    STATS.iter().position(|s| *s == stat).unwrap_or(STATS.len())
}

/// The headers grouped by field, in display order: reward, token counts, other fields (first
/// seen first), then the columns of no field.
pub fn groups(headers: &[String]) -> Vec<ColumnGroup> {
    let mut groups: Vec<ColumnGroup> = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let field = split(h).map_or("", |(_, f)| f);
        match groups.iter_mut().find(|g| g.field == field) {
            Some(g) => g.columns.push(i),
            None => groups.push(ColumnGroup {
                field: field.to_string(),
                columns: vec![i],
            }),
        }
    }
    // Stable sorts: the first-seen order survives within a rank.
    groups.sort_by_key(|g| field_rank(&g.field));
    for g in &mut groups {
        g.columns.sort_by_key(|&c| stat_rank(label(&headers[c])));
    }
    groups
}

/// Whether each column is shown before the user picks: the reward's statistics, every other
/// field's mean, and the columns of no field (counts).
pub fn shown_by_default(headers: &[String]) -> Vec<bool> {
    headers
        .iter()
        .map(|h| match split(h) {
            Some((_, "reward")) => true,
            Some((stat, _)) => stat == "mean",
            None => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(names: &[&str]) -> Vec<String> {
        names.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn columns_group_by_field_reward_first_then_tokens_then_fields() {
        let h = headers(&[
            "mean/judge_score",
            "mean/output_tokens",
            "mean/reward",
            "max/judge_score",
            "max/output_tokens",
            "max/reward",
            "min/reward",
            "num_rollouts",
            "std/reward",
        ]);
        let g = groups(&h);
        let fields: Vec<&str> = g.iter().map(|g| g.field.as_str()).collect();
        assert_eq!(fields, ["reward", "output_tokens", "judge_score", ""]);
        let reward: Vec<&str> = g[0].columns.iter().map(|&c| label(&h[c])).collect();
        assert_eq!(reward, ["mean", "std", "min", "max"]);
        assert_eq!(g[3].columns, [7]);
        // Every column once.
        let mut all: Vec<usize> = g.iter().flat_map(|g| g.columns.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..h.len()).collect::<Vec<_>>());
        let shown = shown_by_default(&h);
        assert_eq!(
            shown,
            [true, true, true, false, false, true, true, true, true]
        );
    }

    #[test]
    fn no_headers_no_groups() {
        assert!(groups(&[]).is_empty());
        assert_eq!(label("num_rollouts"), "num_rollouts");
    }
}
