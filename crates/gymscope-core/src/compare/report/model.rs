//! What the comparison report's plots show, as plain data: tasks at the same place (binary
//! rewards put many tasks on few points) become one mark with a count, per agent, so the plots
//! stay small and honest at 25,000 tasks; each task knows its mark and histogram bin so a click
//! on either filters the task table to exactly those tasks.

use super::plots::{bins, range, Bar, Mark, Tone};
use crate::compare::text::{signed, tasks};
use crate::compare::Comparison;
use crate::table::short_number;
use std::collections::BTreeMap;

/// Above this many distinct places, marks are merged on a grid.
const MAX_MARKS: usize = 3_000;
const GRID: f64 = 60.0;
/// Distinct deltas shown as one bar each up to this many (binary rewards: multiples of 1/n).
const MAX_BARS: usize = 25;

pub(super) struct Marks {
    pub marks: Vec<Mark>,
    /// Per task (in `Comparison::tasks` order), its mark.
    pub of: Vec<Option<usize>>,
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    /// Tasks lacking a value on one axis.
    pub missing: usize,
}

pub(super) struct Model {
    pub agents: Vec<String>,
    /// Per task, its agent's position in `agents` (the colour).
    pub series: Vec<usize>,
    pub scatter: Marks,
    pub cost: Marks,
    pub bars: Vec<Bar>,
    pub bar_of: Vec<Option<usize>>,
}

pub(super) fn model(c: &Comparison) -> Model {
    let agents: Vec<String> = c.agents.iter().map(|(a, _)| a.clone()).collect();
    let series: Vec<usize> = c
        .tasks
        .iter()
        .map(|t| {
            let name = t.agent.as_deref().unwrap_or("");
            agents.iter().position(|a| a == name).unwrap_or(0)
        })
        .collect();
    let both = |x: Option<f64>, y: Option<f64>| x.zip(y);
    let scatter_points: Vec<Option<(f64, f64)>> =
        c.tasks.iter().map(|t| both(t.mean_a, t.mean_b)).collect();
    let r = range(scatter_points.iter().flatten().flat_map(|&(x, y)| [x, y]));
    let scatter = marks(&scatter_points, &series, &agents, r, r, |x, y, n, agent| {
        format!("A {x} → B {y} · {n} · {agent}")
    });
    let cost_points: Vec<Option<(f64, f64)>> = c
        .tasks
        .iter()
        .map(|t| both(t.tokens_b.zip(t.tokens_a).map(|(b, a)| b - a), t.delta))
        .collect();
    let xr = range(cost_points.iter().flatten().map(|p| p.0));
    let yr = range(cost_points.iter().flatten().map(|p| p.1));
    let cost = marks(&cost_points, &series, &agents, xr, yr, |x, y, n, agent| {
        format!("Δ output tokens {x} · Δ reward {y} · {n} · {agent}")
    });

    let deltas: Vec<f64> = c.tasks.iter().filter_map(|t| t.delta).collect();
    let (edges, of) = bins(&deltas, MAX_BARS);
    let mut counts = vec![0usize; edges.len()];
    for &b in &of {
        counts[b] += 1;
    }
    let mut of = of.into_iter();
    let bar_of = c
        .tasks
        .iter()
        .map(|t| t.delta.and_then(|_| of.next()))
        .collect();
    let bars = edges
        .iter()
        .zip(counts)
        .map(|(&(lo, hi), count)| {
            // Binned bars are labelled by their lower edge (the title has both).
            let label = signed(Some(lo));
            let what = if lo == hi {
                format!("Δ {}", signed(Some(lo)))
            } else {
                format!("Δ {} to {}", signed(Some(lo)), signed(Some(hi)))
            };
            let tone = if hi < 0.0 {
                Tone::Worse
            } else if lo > 0.0 {
                Tone::Better
            } else {
                Tone::Same
            };
            Bar {
                label,
                count,
                title: format!("{what}: {}", tasks(count)),
                tone,
            }
        })
        .collect();
    Model {
        agents,
        series,
        scatter,
        cost,
        bars,
        bar_of,
    }
}

/// A mark's place: (x, y) as ordered bits or grid cells, and the series.
type Place = (u64, u64, usize);

/// A mark being built: its id, how many points, and the first point's exact position.
struct Slot {
    id: usize,
    count: usize,
    x: f64,
    y: f64,
}

/// Groups points by exact place and series, or, when there are too many places, by grid cell.
fn marks(
    points: &[Option<(f64, f64)>],
    series: &[usize],
    agents: &[String],
    xr: (f64, f64),
    yr: (f64, f64),
    title: impl Fn(String, String, String, &str) -> String,
) -> Marks {
    let exact: BTreeMap<Place, usize> = points
        .iter()
        .zip(series)
        .filter_map(|(p, &s)| p.map(|(x, y)| ((ordered(x), ordered(y), s), 0)))
        .collect();
    let cell =
        |v: f64, (lo, hi): (f64, f64)| (((v - lo) / (hi - lo) * GRID) as u64).min(GRID as u64);
    let gridded = exact.len() > MAX_MARKS;
    let place = |x: f64, y: f64, s: usize| {
        if gridded {
            (cell(x, xr), cell(y, yr), s)
        } else {
            (ordered(x), ordered(y), s)
        }
    };
    // Ids in place order, so the same input gives the same page.
    let mut places: BTreeMap<Place, Slot> = BTreeMap::new();
    for (p, &s) in points.iter().zip(series) {
        if let Some((x, y)) = *p {
            places
                .entry(place(x, y, s))
                .or_insert(Slot {
                    id: 0,
                    count: 0,
                    x,
                    y,
                })
                .count += 1;
        }
    }
    let mut marks = Vec::with_capacity(places.len());
    for (id, (&(px, py, s), slot)) in places.iter_mut().enumerate() {
        slot.id = id;
        let (count, x, y) = (slot.count, slot.x, slot.y);
        let agent = match agents.get(s).map(String::as_str) {
            Some("") | None => "no agent",
            Some(a) => a,
        };
        let (mx, my, tx, ty) = if gridded {
            let at = |c: u64, (lo, hi): (f64, f64)| lo + (c as f64 + 0.5) / GRID * (hi - lo);
            let span = |c: u64, (lo, hi): (f64, f64)| {
                let w = (hi - lo) / GRID;
                let from = lo + c as f64 * w;
                format!("{}…{}", short_number(from), short_number(from + w))
            };
            (at(px, xr), at(py, yr), span(px, xr), span(py, yr))
        } else {
            (x, y, short_number(x), short_number(y))
        };
        marks.push(Mark {
            x: mx,
            y: my,
            series: s,
            count,
            title: title(tx, ty, tasks(count), agent),
            id,
        });
    }
    let of = points
        .iter()
        .zip(series)
        .map(|(p, &s)| p.map(|(x, y)| places[&place(x, y, s)].id))
        .collect();
    Marks {
        marks,
        of,
        x_range: xr,
        y_range: yr,
        missing: points.iter().filter(|p| p.is_none()).count(),
    }
}

/// A float as a key that sorts as the number does.
fn ordered(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}
