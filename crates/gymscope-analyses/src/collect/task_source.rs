//! Naming the agent that runs a row from the running config (NeMo Gym v0.7.0): a row that names
//! no agent but carries `task_source` (the instance that declared its dataset) gets the agent
//! `resolve_task_sources` would give it (`rollout_collection.py`, `global_config.py`
//! `resolve_dataset_agent`), and rows naming agents the config lacks are refused before any
//! `/run` (`_validate_agent_names`). Messages are v0.7.0's words.

use super::environment::{InstanceKind, Topology};
use crate::gym::difflib::close_match;
use crate::gym::py::str_repr;
use std::collections::BTreeSet;

/// The agent for one `task_source`, or v0.7.0's reason it has none (`'T': …`).
pub fn resolve(topology: &Topology, task_source: &str) -> Result<String, String> {
    let err = |msg: String| Err(format!("{}: {msg}", str_repr(task_source)));
    let Some(instance) = topology.instances.iter().find(|i| i.name == task_source) else {
        let names = topology.instances.iter().map(|i| i.name.as_str());
        return err(match close_match(task_source, names) {
            Some(close) => format!(
                "not in the running config (did you mean {}?)",
                str_repr(close)
            ),
            None => "not in the running config".into(),
        });
    };
    match instance.kind {
        InstanceKind::Setting => return err("not a server instance".into()),
        InstanceKind::OtherServer => {
            return err(
                "instance is not an agent or resources server (datasets cannot route here)".into(),
            )
        }
        InstanceKind::Agent | InstanceKind::Resources => {}
    }
    if instance.pins.len() > 1 {
        let mut pins: Vec<&str> = instance.pins.iter().map(String::as_str).collect();
        pins.sort_unstable();
        return err(format!(
            "its datasets pin conflicting agents ({}), which task_source alone cannot tell apart; pass +agent_map={{{task_source}: <agent>}} to pick one",
            py_list(&pins)
        ));
    }
    let pin = instance.pins.first();
    if instance.kind == InstanceKind::Agent {
        if let Some(pin) = pin.filter(|p| *p != task_source) {
            return err(format!(
                "dataset declared by agent {} pins agent {}, but rows are dispatched to the declaring agent, so the pin would silently not apply. Drop the `agent:` key, or declare the dataset on the resources server and pin there.",
                str_repr(task_source),
                str_repr(pin)
            ));
        }
        return Ok(task_source.to_string());
    }
    let candidates: Vec<&str> = topology
        .instances
        .iter()
        .filter(|i| {
            i.kind == InstanceKind::Agent && i.resources_server.as_deref() == Some(task_source)
        })
        .map(|i| i.name.as_str())
        .collect();
    let mut sorted = candidates.clone();
    sorted.sort_unstable();
    if let Some(pin) = pin {
        if !candidates.contains(&pin.as_str()) {
            return err(format!(
                "the dataset pins agent {}, but no agent of that name references resources server {} (rows are dispatched along the agent -> resources server edge). Agents referencing it: {}.",
                str_repr(pin),
                str_repr(task_source),
                if sorted.is_empty() { "none".to_string() } else { py_list(&sorted) }
            ));
        }
        return Ok(pin.clone());
    }
    match candidates.as_slice() {
        [one] => Ok((*one).to_string()),
        [] => err(format!(
            "no agent in the running config references resources server {}. Point an agent's `resources_server` at it, or declare the dataset on the agent.",
            str_repr(task_source)
        )),
        many => err(format!(
            "{} agents reference this resources server ({}). Pin the harness with an `agent:` key on the dataset declaration, or pass +agent_map={{{task_source}: <agent>}} to pick one at run time.",
            many.len(),
            py_list(&sorted)
        )),
    }
}

/// v0.7.0's error for rows naming agents the config lacks (`None` when every one is an agent).
pub fn unknown_agents(topology: &Topology, requested: &BTreeSet<String>) -> Option<String> {
    let agents: Vec<&str> = topology
        .instances
        .iter()
        .filter(|i| i.kind == InstanceKind::Agent)
        .map(|i| i.name.as_str())
        .collect();
    let hints: Vec<String> = requested
        .iter()
        .filter(|name| !agents.contains(&name.as_str()))
        .map(|name| {
            if topology.instances.iter().any(|i| i.name == *name) {
                format!("{} (exists but is not an agent instance)", str_repr(name))
            } else {
                match close_match(name, agents.iter().copied()) {
                    Some(close) => {
                        format!("{} (did you mean {}?)", str_repr(name), str_repr(close))
                    }
                    None => str_repr(name),
                }
            }
        })
        .collect();
    (!hints.is_empty()).then(|| {
        format!(
            "Rows reference agents not present in the running config: {}. Include the agent's config in the run, or re-route with +agent_map/+agent_name.",
            hints.join(", ")
        )
    })
}

fn py_list(names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| str_repr(n)).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::environment::Instance;

    fn inst(name: &str, kind: InstanceKind, rs: Option<&str>, pins: &[&str]) -> Instance {
        Instance {
            name: name.into(),
            kind,
            resources_server: rs.map(String::from),
            pins: pins.iter().map(ToString::to_string).collect(),
            agent_type: (kind == InstanceKind::Agent).then(|| "simple_agent".to_string()),
            allowed_agents: None,
        }
    }

    fn stack() -> Topology {
        Topology {
            servers: Vec::new(),
            instances: vec![
                inst("math", InstanceKind::Resources, None, &[]),
                inst("math_agent", InstanceKind::Agent, Some("math"), &[]),
                inst("code", InstanceKind::Resources, None, &[]),
                inst("code_a", InstanceKind::Agent, Some("code"), &[]),
                inst("code_b", InstanceKind::Agent, Some("code"), &[]),
                inst("pinned", InstanceKind::Resources, None, &["code_b"]),
                inst("lonely", InstanceKind::Resources, None, &[]),
                inst("policy_model", InstanceKind::OtherServer, None, &[]),
                inst("policy_base_url", InstanceKind::Setting, None, &[]),
            ],
            allow_unsupported_pairing: false,
        }
    }

    #[test]
    fn task_sources_resolve_as_v07() {
        let t = stack();
        assert_eq!(resolve(&t, "math").unwrap(), "math_agent");
        assert_eq!(resolve(&t, "code_a").unwrap(), "code_a");
        assert_eq!(
            resolve(&t, "code").unwrap_err(),
            "'code': 2 agents reference this resources server (['code_a', 'code_b']). Pin the harness with an `agent:` key on the dataset declaration, or pass +agent_map={code: <agent>} to pick one at run time."
        );
        assert!(resolve(&t, "pinned")
            .unwrap_err()
            .contains("Agents referencing it: none."));
        assert!(resolve(&t, "lonely").unwrap_err().starts_with(
            "'lonely': no agent in the running config references resources server 'lonely'."
        ));
        assert_eq!(
            resolve(&t, "mathh").unwrap_err(),
            "'mathh': not in the running config (did you mean 'math'?)"
        );
        assert_eq!(
            resolve(&t, "policy_base_url").unwrap_err(),
            "'policy_base_url': not a server instance"
        );
        assert!(resolve(&t, "policy_model")
            .unwrap_err()
            .ends_with("(datasets cannot route here)"));
    }

    #[test]
    fn unknown_agents_are_named_with_a_hint() {
        let t = stack();
        let names = |v: &[&str]| v.iter().map(ToString::to_string).collect::<BTreeSet<_>>();
        assert_eq!(unknown_agents(&t, &names(&["math_agent"])), None);
        assert_eq!(
            unknown_agents(&t, &names(&["math", "math_agnt", "zz"])).unwrap(),
            "Rows reference agents not present in the running config: 'math' (exists but is not an agent instance), 'math_agnt' (did you mean 'math_agent'?), 'zz'. Include the agent's config in the run, or re-route with +agent_map/+agent_name."
        );
    }

    #[test]
    fn pairings_a_verifier_refuses_are_named() {
        let mut t = stack();
        t.instances[0].allowed_agents = Some(Ok(vec!["math_agent_type".into()]));
        let routes = [("math_agent".to_string(), Some("math".to_string()))]
            .into_iter()
            .collect();
        // The task source is the agent's own resources server: one line (v0.7.0 keys the
        // rejections by agent and verifier, the later check's words kept).
        assert_eq!(
            t.pairing_error(&routes).unwrap(),
            "Rows would be scored by a verifier that does not accept the agent running them:\n  - rows routed to 'math_agent' run 'simple_agent', but the resources server it runs against 'math' accepts only: math_agent_type\n\nRoute these rows to an agent running one of the accepted types, or pass --allow-unsupported-pairing (or set NEMO_GYM_ALLOW_UNSUPPORTED_PAIRING=1) to bypass the check."
        );
        t.instances[0].allowed_agents = Some(Ok(vec!["simple_agent".into()]));
        assert_eq!(t.pairing_error(&routes), None);
        t.instances[0].allowed_agents = Some(Ok(vec!["x".into()]));
        t.allow_unsupported_pairing = true;
        assert_eq!(t.pairing_error(&routes), None);
    }
}
