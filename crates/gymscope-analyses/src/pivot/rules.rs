//! What every row is checked against ([`Rules`]): the options, and the parts of a row the checks
//! read (the rest is skipped while parsing). The checked runs (`checked`) and `--fix` (`fix`)
//! both read them.

use super::tree::Interest;
use super::{stats, PivotOptions};

/// What every row is checked against: the options, and the parts of a row the checks read.
pub struct Rules {
    pub options: PivotOptions,
    /// `--require-any-field` groups, split.
    pub any_field_groups: Vec<Vec<String>>,
    /// What parsing keeps of a row; the rest is skipped.
    pub interest: Interest,
}

impl Rules {
    pub fn new(options: PivotOptions) -> Rules {
        let any_field_groups = options
            .require_any_fields
            .iter()
            .map(|g| {
                g.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .filter(|g: &Vec<String>| !g.is_empty())
            .collect();
        let mut interest = base_interest();
        for path in options
            .require_fields
            .iter()
            .chain(options.require_any_fields.iter())
        {
            for p in path.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                interest.add_path(p);
            }
        }
        if options.gym_models {
            interest.key("responses_create_params").all = true;
        }
        if options.stats {
            stats::add_interest(&mut interest);
        }
        Rules {
            options,
            any_field_groups,
            interest,
        }
    }
}

/// What every check reads; everything else in a row is skipped while parsing.
fn base_interest() -> Interest {
    let mut interest = Interest::default();
    interest.key("agent_ref").all = true;
    interest.key("expected_action").all = true;
    let params = interest.key("responses_create_params");
    params.key("tool_choice").all = true;
    params.key("parallel_tool_calls").all = true;
    let mut tool = Interest::default();
    tool.key("name").all = true;
    tool.key("function").key("name").all = true;
    params.key("tools").elements = Some(Box::new(tool));
    interest
}
