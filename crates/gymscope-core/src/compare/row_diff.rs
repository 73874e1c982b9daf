//! Row-level differences across runs (docs/app.md, "Compare"): the paired tasks in any order
//! (by reward delta, either way, by a mean, by tokens, by task; flipped tasks alone), and two
//! transcripts of a task, one per run, aligned item by item with what differs marked: the
//! items only one run has, and inside an item both runs changed, the words that differ.
//!
//! Items and words are aligned by a longest common subsequence (`lcs`), bounded so a long
//! transcript never costs more than [`MAX_CELLS`] comparisons: past it, the rest is aligned by
//! position.

use super::multi::flip_of;
use super::PairedTask;
use crate::conversation::Item;

/// How the paired tasks are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TaskSort {
    /// Reward delta, the comparison's own order (worst regression first).
    #[default]
    Delta,
    Task,
    Agent,
    MeanA,
    MeanB,
    TokensA,
    TokensB,
}

/// The positions of `tasks` in `sort`'s order, descending when asked (a missing value always
/// last), ties by task; only the flipped ones (their reward group changed) with `flipped`.
pub fn sorted_tasks(
    tasks: &[PairedTask],
    sort: TaskSort,
    descending: bool,
    flipped: bool,
) -> Vec<usize> {
    let key = |t: &PairedTask| match sort {
        TaskSort::Delta => t.delta,
        TaskSort::Task => Some(t.task_a as f64),
        TaskSort::MeanA => t.mean_a,
        TaskSort::MeanB => t.mean_b,
        TaskSort::TokensA => t.tokens_a,
        TaskSort::TokensB => t.tokens_b,
        TaskSort::Agent => None,
    };
    let mut order: Vec<usize> = (0..tasks.len())
        .filter(|&i| !flipped || flip_of(&tasks[i]).is_some_and(|f| f != 0))
        .collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&tasks[i], &tasks[j]);
        let by = if sort == TaskSort::Agent {
            a.agent.cmp(&b.agent)
        } else {
            match (key(a), key(b)) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => return std::cmp::Ordering::Less,
                (None, Some(_)) => return std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        };
        let by = if descending { by.reverse() } else { by };
        by.then(a.task_a.cmp(&b.task_a))
    });
    order
}

/// Most comparisons one alignment makes (items, or an item's words).
pub const MAX_CELLS: usize = 4_000_000;

/// A piece of an item's text: `changed` when the other run's item has not got it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Piece {
    pub text: String,
    pub changed: bool,
}

/// One row of two aligned transcripts: item indices in A's and B's items.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Row {
    Same {
        a: usize,
        b: usize,
    },
    /// The same kind of item in both, its text changed: both texts in pieces.
    Changed {
        a: usize,
        b: usize,
        a_text: Vec<Piece>,
        b_text: Vec<Piece>,
    },
    OnlyA {
        a: usize,
    },
    OnlyB {
        b: usize,
    },
}

/// An item's kind and author (`message user`, `call get_weather`) and its text.
pub fn parts(item: &Item) -> (String, &str) {
    match item {
        Item::Message { role, text } => (format!("message {role}"), text),
        Item::Reasoning { text } => ("reasoning".into(), text),
        Item::FunctionCall {
            name, arguments, ..
        } => (format!("call {name}"), arguments),
        Item::FunctionOutput { output, .. } => ("output".into(), output),
        Item::Other { kind, json } => (kind.clone(), json),
    }
}

/// Pairs `(i, j)` of a longest common subsequence of `a` and `b` under `same`; by position
/// (equal ones only) when the table would pass [`MAX_CELLS`].
fn lcs<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > MAX_CELLS {
        return (0..n.min(m))
            .filter(|&i| same(&a[i], &b[i]))
            .map(|i| (i, i))
            .collect();
    }
    // lengths[i][j]: the LCS of a[i..] and b[j..].
    let mut lengths = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[at(i, j)] = if same(&a[i], &b[j]) {
                lengths[at(i + 1, j + 1)] + 1
            } else {
                lengths[at(i + 1, j)].max(lengths[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < n && j < m {
        if same(&a[i], &b[j]) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[at(i + 1, j)] >= lengths[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// Words and the spaces after them, so the pieces join back into the text.
fn words(text: &str) -> Vec<&str> {
    text.split_inclusive(char::is_whitespace).collect()
}

/// `ws` joined into pieces, the words not in `kept` (positions) marked changed.
fn pieces(ws: &[&str], kept: impl Iterator<Item = usize>) -> Vec<Piece> {
    let mut same = vec![false; ws.len()];
    for k in kept {
        same[k] = true;
    }
    let mut out: Vec<Piece> = Vec::new();
    for (w, same) in ws.iter().zip(same) {
        match out.last_mut() {
            Some(p) if p.changed != same => p.text.push_str(w),
            _ => out.push(Piece {
                text: (*w).to_string(),
                changed: !same,
            }),
        }
    }
    out
}

/// Both texts in pieces, the words the other text lacks marked.
fn word_diff(a: &str, b: &str) -> (Vec<Piece>, Vec<Piece>) {
    let (wa, wb) = (words(a), words(b));
    let pairs = lcs(&wa, &wb, |x, y| x.trim_end() == y.trim_end());
    (
        pieces(&wa, pairs.iter().map(|p| p.0)),
        pieces(&wb, pairs.iter().map(|p| p.1)),
    )
}

/// Two transcripts aligned: items equal in kind and text are [`Row::Same`]; between them, the
/// items of the same kind are paired in order as [`Row::Changed`], the rest one run's alone.
pub fn diff_items(a: &[Item], b: &[Item]) -> Vec<Row> {
    let (pa, pb): (Vec<_>, Vec<_>) = (a.iter().map(parts).collect(), b.iter().map(parts).collect());
    let matched = lcs(&pa, &pb, |x, y| x == y);
    let mut rows = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (mi, mj) in matched.into_iter().chain([(a.len(), b.len())]) {
        // The gap before the match: pair items of the same kind in order.
        let (gap_a, gap_b): (Vec<usize>, Vec<usize>) = ((i..mi).collect(), (j..mj).collect());
        let kinds = lcs(&gap_a, &gap_b, |&x, &y| pa[x].0 == pb[y].0);
        let (mut x, mut y) = (0, 0);
        for (kx, ky) in kinds.into_iter().chain([(gap_a.len(), gap_b.len())]) {
            rows.extend(gap_a[x..kx].iter().map(|&a| Row::OnlyA { a }));
            rows.extend(gap_b[y..ky].iter().map(|&b| Row::OnlyB { b }));
            if let (Some(&ia), Some(&ib)) = (gap_a.get(kx), gap_b.get(ky)) {
                let (a_text, b_text) = word_diff(pa[ia].1, pb[ib].1);
                rows.push(Row::Changed {
                    a: ia,
                    b: ib,
                    a_text,
                    b_text,
                });
            }
            (x, y) = (kx + 1, ky + 1);
        }
        if mi < a.len() && mj < b.len() {
            rows.push(Row::Same { a: mi, b: mj });
        }
        (i, j) = (mi + 1, mj + 1);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: &str, text: &str) -> Item {
        Item::Message {
            role: role.into(),
            text: text.into(),
        }
    }

    fn call(name: &str, args: &str) -> Item {
        Item::FunctionCall {
            name: name.into(),
            call_id: "c".into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn transcripts_align_by_item_and_mark_the_changed_words() {
        let a = [
            msg("user", "What is 2+2?"),
            call("calc", "2+2"),
            msg("assistant", "The answer is 4."),
        ];
        let b = [
            msg("user", "What is 2+2?"),
            msg("assistant", "The answer is 5."),
        ];
        let rows = diff_items(&a, &b);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[0], Row::Same { a: 0, b: 0 });
        assert_eq!(rows[1], Row::OnlyA { a: 1 });
        let Row::Changed {
            a: 2,
            b: 1,
            a_text,
            b_text,
        } = &rows[2]
        else {
            panic!("{rows:?}")
        };
        let changed = |p: &[Piece]| {
            p.iter()
                .filter(|p| p.changed)
                .map(|p| p.text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(changed(a_text), ["4."]);
        assert_eq!(changed(b_text), ["5."]);
        let joined: String = b_text.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(joined, "The answer is 5.");
        // A run's extra item of another kind is its alone.
        let rows = diff_items(&b, &[msg("user", "What is 2+2?"), call("calc", "x")]);
        assert_eq!(
            rows,
            [
                Row::Same { a: 0, b: 0 },
                Row::OnlyA { a: 1 },
                Row::OnlyB { b: 1 }
            ]
        );
    }

    #[test]
    fn tasks_sort_by_delta_either_way_and_filter_the_flipped() {
        use crate::reward_group::RewardGroup::{AllFailure, AllSuccess, Mixed};
        let task = |i: i64, delta: Option<f64>, g: (RewardGroup, RewardGroup)| PairedTask {
            task_a: i,
            task_b: i,
            pos_a: 0,
            pos_b: 0,
            agent: None,
            rollouts_a: 1,
            rollouts_b: 1,
            mean_a: Some(0.5),
            mean_b: delta.map(|d| 0.5 + d),
            delta,
            group_a: g.0,
            group_b: g.1,
            tokens_a: None,
            tokens_b: None,
            fields_a: vec![],
            fields_b: vec![],
        };
        use crate::reward_group::RewardGroup;
        let tasks = [
            task(0, Some(-0.5), (AllSuccess, Mixed)),
            task(1, Some(0.25), (Mixed, Mixed)),
            task(2, None, (Mixed, Mixed)),
            task(3, Some(0.5), (AllFailure, AllSuccess)),
        ];
        assert_eq!(
            sorted_tasks(&tasks, TaskSort::Delta, false, false),
            [0, 1, 3, 2]
        );
        assert_eq!(
            sorted_tasks(&tasks, TaskSort::Delta, true, false),
            [3, 1, 0, 2]
        );
        assert_eq!(sorted_tasks(&tasks, TaskSort::Delta, true, true), [3, 0]);
        assert_eq!(
            sorted_tasks(&tasks, TaskSort::Task, true, false),
            [3, 2, 1, 0]
        );
    }
}
