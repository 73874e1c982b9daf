//! The report's plots, paired-task table and side-by-side conversations, as static HTML.

use super::model::Model;
use super::plots::{self, Scatter};
use super::{delta_html, n};
use crate::compare::conversations::{PairConversations, SideConversations};
use crate::compare::text::tasks as count_tasks;
use crate::compare::Comparison;
use crate::html::escape;
use crate::report::{write_conversation, write_items};
use std::fmt::Write;

/// Rows of the task table in the static page; the script pages through all of them.
pub(super) const STATIC_ROWS: usize = 1_000;

fn legend(out: &mut String, m: &Model) {
    out.push_str("<p class=\"legend\">");
    for (i, a) in m.agents.iter().enumerate() {
        let name = if a.is_empty() { "(no agent)" } else { a };
        let _ = write!(
            out,
            "<span><svg class=\"swatch\" width=\"10\" height=\"10\"><rect width=\"10\" height=\"10\" fill=\"{}\"/></svg> {}</span> ",
            plots::colour(i),
            escape(name)
        );
    }
    out.push_str("</p>");
}

pub(super) fn plots(out: &mut String, c: &Comparison, m: &Model) {
    out.push_str("<section id=\"plots\"><h2>Where it changed</h2>");
    legend(out, m);
    out.push_str("<div class=\"plots\">");
    let missing = |k: usize| {
        if k == 0 {
            String::new()
        } else {
            format!(
                " {} without a value on one side are not drawn.",
                count_tasks(k)
            )
        }
    };
    let _ = write!(
        out,
        "<figure><figcaption>Mean reward per task, A vs B</figcaption>{}<p class=\"note\">Above the diagonal B is better. \
         A mark stands for the tasks at one place (its size grows with their number).{}</p></figure>",
        plots::scatter(&Scatter {
            id: "scatter",
            label: "mean reward per task, A against B",
            x_label: &format!("A: {}", c.a_name),
            y_label: &format!("B: {}", c.b_name),
            x_range: m.scatter.x_range,
            y_range: m.scatter.y_range,
            diagonal: true,
            zero: false,
            series: m.agents.len(),
            marks: &m.scatter.marks,
        }),
        escape(&missing(m.scatter.missing))
    );
    let _ = write!(
        out,
        "<figure><figcaption>Reward delta per task (B − A)</figcaption>{}<p class=\"note\">{} with a delta.</p></figure>",
        plots::bars("histogram", "tasks per reward delta", "reward delta (B − A)", &m.bars),
        count_tasks(m.bars.iter().map(|b| b.count).sum::<usize>())
    );
    let _ = write!(
        out,
        "<figure><figcaption>Token cost: Δ output tokens vs Δ reward</figcaption>{}<p class=\"note\">Per task, B − A; \
         up is better reward, left is fewer tokens.{}</p></figure>",
        plots::scatter(&Scatter {
            id: "cost",
            label: "reward delta against output-token delta per task",
            x_label: "Δ mean output tokens (B − A)",
            y_label: "Δ mean reward",
            x_range: m.cost.x_range,
            y_range: m.cost.y_range,
            diagonal: false,
            zero: true,
            series: m.agents.len(),
            marks: &m.cost.marks,
        }),
        escape(&missing(m.cost.missing))
    );
    out.push_str("</div></section>\n");
}

pub(super) fn tasks(out: &mut String, c: &Comparison, m: &Model) {
    let total = c.tasks.len();
    out.push_str(
        "<section id=\"tasks\"><h2>Regressions and improvements</h2>\
         <div class=\"controls\" id=\"task-controls\" hidden><span id=\"task-chip\"></span> \
         <label>agent <select id=\"task-agent\"><option value=\"\">all</option></select></label> \
         <label>task <input id=\"task-search\" type=\"search\" size=\"8\" placeholder=\"index\"></label> \
         <span id=\"task-count\"></span> <span id=\"task-pager\"></span></div>\
         <div class=\"scroll\"><table id=\"task-table\"><thead><tr>\
         <th data-col=\"0\">task A</th><th data-col=\"1\">task B</th><th data-col=\"2\">agent</th>\
         <th data-col=\"3\">mean A</th><th data-col=\"4\">mean B</th><th data-col=\"5\">Δ reward</th>\
         <th data-col=\"6\">group A</th><th data-col=\"7\">group B</th>\
         <th data-col=\"8\">tokens A</th><th data-col=\"9\">tokens B</th></tr></thead><tbody>",
    );
    // Without the script: the worst regressions and, when they do not all fit, the best
    // improvements (the end of the list), with the number of tasks left out between them.
    let half = STATIC_ROWS / 2;
    let shown: Vec<usize> = if total <= STATIC_ROWS {
        (0..total).collect()
    } else {
        (0..half).chain(total - half..total).collect()
    };
    for (k, &i) in shown.iter().enumerate() {
        if k == half && total > STATIC_ROWS {
            let _ = write!(
                out,
                "<tr class=\"gap\"><td colspan=\"10\">… {} not shown without JavaScript …</td></tr>",
                count_tasks(total - STATIC_ROWS)
            );
        }
        let t = &c.tasks[i];
        let agent = m.agents[m.series[i]].as_str();
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td><td class=\"agent\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            t.task_a,
            t.task_b,
            escape(agent),
            n(t.mean_a),
            n(t.mean_b),
            delta_html(t.delta, true, &super::signed_reward(t.delta)),
            t.group_a.as_str(),
            t.group_b.as_str(),
            crate::figures::tokens(t.tokens_a),
            crate::figures::tokens(t.tokens_b)
        );
    }
    out.push_str("</tbody></table></div>");
    if total > STATIC_ROWS {
        let _ = write!(
            out,
            "<p class=\"note nojs\">Without JavaScript the {half} worst regressions and the {half} best improvements of {total} paired tasks are shown.</p>"
        );
    }
    out.push_str("</section>\n");
}

/// One run's side of a task: `total` is the task's rollouts in that run (the page shows at most
/// `MAX_SHOWN_ROLLOUTS` of them, and says so).
fn side(out: &mut String, label: &str, run: &str, convs: &SideConversations, total: usize) {
    let _ = write!(
        out,
        "<div class=\"side\"><h3><span class=\"run-{}\">{label}</span> {}</h3>",
        label.to_ascii_lowercase(),
        escape(run)
    );
    let rollouts = convs.iter().filter(|(r, _)| r.is_some()).count();
    if rollouts < total {
        let _ = write!(
            out,
            "<p class=\"note\" data-sampled>The first {rollouts} of this task's {total} rollouts in this run.</p>"
        );
    }
    for (rollout, c) in convs {
        if let Some(r) = rollout {
            let _ = write!(
                out,
                "<details class=\"rollout\"><summary>Rollout {r} · reward {}</summary><div class=\"conv\">",
                escape(c.reward.as_deref().unwrap_or("–"))
            );
            write_conversation(out, c);
            out.push_str("</div></details>");
        } else {
            out.push_str("<p class=\"note\">From a profiling file: the prompt only (the answers are not in that file).</p><div class=\"conv\">");
            write_items(out, &c.input, &[]);
            out.push_str("</div>");
        }
    }
    out.push_str("</div>");
}

pub(super) fn conversations(out: &mut String, c: &Comparison, convs: &[PairConversations]) {
    out.push_str("<section id=\"details\"><h2>Regressed tasks side by side</h2>");
    if convs.is_empty() {
        out.push_str(
            "<p class=\"note\">No regressed task's conversations are included in this report.</p>",
        );
    } else {
        let _ = write!(
            out,
            "<p class=\"note\">The {} worst regressions, A's rollouts beside B's.</p>",
            convs.len()
        );
    }
    for p in convs {
        let t = c
            .tasks
            .iter()
            .find(|t| t.task_a == p.task_a && t.task_b == p.task_b);
        let about = t.map_or_else(String::new, |t| {
            format!(
                " · {} · {} → {} ({} → {})",
                t.agent.as_deref().unwrap_or("no agent"),
                n(t.mean_a),
                n(t.mean_b),
                t.group_a.as_str(),
                t.group_b.as_str()
            )
        });
        let _ = write!(
            out,
            "<details class=\"pair\" id=\"pair-{}\"><summary>Task {} in A, {} in B{}</summary><div class=\"sides\">",
            p.task_a,
            p.task_a,
            p.task_b,
            escape(&about)
        );
        let (total_a, total_b) =
            t.map_or((0, 0), |t| (t.rollouts_a as usize, t.rollouts_b as usize));
        side(out, "A", &c.a_name, &p.a, total_a);
        side(out, "B", &c.b_name, &p.b, total_b);
        out.push_str("</div></details>");
    }
    out.push_str("</section>\n");
}
