//! The Gym config that serves a pivot dataset (what upstream `nemo_gym/config_types.py` @07d6b0d
//! requires of it): a `single_step_tool_use_with_argument_comparison`
//! resources server and a `tool_simulation_agent` whose train dataset is the pivot file. The
//! model block (`policy_model`) comes from a separate model config.

use crate::verifier::ComparatorConfig;

/// Licenses Gym accepts for train and validation entries (`nemo_gym/config_types.py`).
pub const LICENSES: [&str; 10] = [
    "Apache 2.0",
    "MIT",
    "Creative Commons Attribution 4.0 International",
    "Creative Commons Attribution-ShareAlike 4.0 International",
    "CC BY-SA 4.0",
    "CC BY-NC 3.0",
    "NVIDIA Internal Use Only, Do Not Distribute",
    "NVIDIA Evaluation Dataset License Agreement",
    "TBD",
    "GNU General Public License v3.0",
];

#[derive(Clone, Debug)]
pub struct ConfigOptions {
    pub agent_ref: String,
    /// `jsonl_fpath` of the train entry, as it should appear in the file.
    pub train_path: String,
    pub validation_path: Option<String>,
    pub license: String,
    pub description: String,
    pub comparator: ComparatorConfig,
}

/// The default `description` of the train entry, from the pivot file's name.
pub fn default_description(out_name: &str) -> String {
    format!(
        "Single-step pivot dataset built by gymscope from {} rollouts.",
        crate::names::stem(out_name)
    )
}

/// The resources-server instance: a trailing `_agent` becomes `_resources_server`.
pub fn resources_server_name(agent_ref: &str) -> String {
    match agent_ref.strip_suffix("_agent") {
        Some(base) => format!("{base}_resources_server"),
        None => format!("{agent_ref}_resources_server"),
    }
}

/// A YAML scalar: plain when unambiguous, else a JSON (= YAML double-quoted) string.
fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./- ".contains(c))
        && !s.starts_with(['-', ' ', '.'])
        && !s.ends_with(' ')
        && s.parse::<f64>().is_err()
        && !["true", "false", "null", "yes", "no", "on", "off", "~"]
            .contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

fn float(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The config text. Checked by `validate` for the rules Gym enforces.
pub fn render(o: &ConfigOptions) -> String {
    let rs = resources_server_name(&o.agent_ref);
    let c = &o.comparator;
    let mut y = String::new();
    y.push_str(&format!(
        "{}:\n  resources_servers:\n    single_step_tool_use_with_argument_comparison:\n",
        scalar(&rs)
    ));
    y.push_str(
        "      entrypoint: app.py\n      domain: agent\n      tool_call_comparator_config:\n",
    );
    y.push_str(&format!(
        "        word_count_similarity_threshold: {}\n",
        float(c.word_count_similarity_threshold)
    ));
    if c.parallel_tool_call_rewarding {
        y.push_str("        parallel_tool_call_rewarding: true\n");
        y.push_str(&format!(
            "        allow_subset: {}\n        allow_superset: {}\n",
            c.allow_subset, c.allow_superset
        ));
        y.push_str(&format!(
            "        parallel_tool_call_reward_mode: {}\n",
            c.parallel_tool_call_reward_mode.as_str()
        ));
    }
    y.push_str(&format!(
        "      verified: false\n      description: {}\n",
        scalar(&o.description)
    ));
    y.push_str(&format!(
        "{}:\n  responses_api_agents:\n    tool_simulation_agent:\n      entrypoint: app.py\n",
        scalar(&o.agent_ref)
    ));
    y.push_str(&format!(
        "      resources_server:\n        type: resources_servers\n        name: {}\n",
        scalar(&rs)
    ));
    y.push_str("      model_server:\n        type: responses_api_models\n        name: policy_model\n      datasets:\n");
    let mut entry = |name: &str, path: &str| {
        y.push_str(&format!(
            "      - name: {name}\n        type: {name}\n        jsonl_fpath: {}\n        num_repeats: 1\n        license: {}\n",
            scalar(path),
            scalar(&o.license)
        ));
    };
    entry("train", &o.train_path);
    if let Some(v) = &o.validation_path {
        entry("validation", v);
    }
    y
}

/// The build's config pointed at a selection (`select-pivot`): the train entry's `jsonl_fpath`
/// becomes `train`, and with a split the validation entry's becomes `validation` (an entry made
/// from the train one when the config has none). Line by line, so the rest of the file (a
/// user's own `--config`, its comments) is kept as it is.
pub fn retarget(config: &str, train: &str, validation: Option<&str>) -> Result<String, String> {
    let lines: Vec<&str> = config.lines().collect();
    // Each dataset entry: the line index of its `- name:` and of its `jsonl_fpath:`.
    let mut entries: Vec<(String, usize, Option<usize>, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if let Some(name) = t.strip_prefix("- name:") {
            entries.push((unquote(name), i, None, indent));
        } else if t.starts_with("jsonl_fpath:") {
            if let Some(e) = entries.last_mut() {
                e.2 = Some(i);
            }
        }
    }
    let path_of = |name: &str| {
        entries
            .iter()
            .find(|e| e.0 == name)
            .and_then(|e| e.2.map(|p| (e.1, p)))
    };
    let Some((train_start, train_line)) = path_of("train") else {
        return Err("it has no dataset entry `- name: train` with a `jsonl_fpath`".into());
    };
    let set = |line: &str, path: &str| {
        let indent = line.len() - line.trim_start().len();
        format!("{}jsonl_fpath: {}", &line[..indent], scalar(path))
    };
    let mut out: Vec<String> = lines.iter().map(ToString::to_string).collect();
    out[train_line] = set(lines[train_line], train);
    if let Some(v) = validation {
        if let Some((_, at)) = path_of("validation") {
            out[at] = set(lines[at], v);
        } else {
            let indent = entries.iter().find(|e| e.0 == "train").map_or(0, |e| e.3);
            let end = (train_start + 1..lines.len())
                .find(|&i| {
                    let t = lines[i].trim_start();
                    lines[i].len() - t.len() <= indent && !t.is_empty()
                })
                .unwrap_or(lines.len());
            let copy: Vec<String> = (train_start..end)
                .map(|i| match lines[i].trim_start() {
                    _ if i == train_line => set(lines[i], v),
                    _ if i == train_start => lines[i].replacen("train", "validation", 1),
                    "type: train" => lines[i].replacen("train", "validation", 1),
                    _ => lines[i].to_string(),
                })
                .collect();
            out.splice(end..end, copy);
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    Ok(text)
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['"', '\'']).to_string()
}

/// The option checks Gym would otherwise fail on at server start.
pub fn validate(o: &ConfigOptions) -> Result<(), String> {
    if !LICENSES.contains(&o.license.as_str()) {
        return Err(format!(
            "--license '{}' is not one Gym accepts: {}",
            o.license,
            LICENSES.join(", ")
        ));
    }
    let t = o.comparator.word_count_similarity_threshold;
    if !(0.0..=0.5).contains(&t) {
        return Err(format!(
            "--word-count-similarity-threshold {t} must be between 0 and 0.5: identical multi-word strings score exactly 0.5, so a higher threshold rejects even the demonstration"
        ));
    }
    if o.agent_ref.is_empty() {
        return Err("--agent-ref must not be empty".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_scalars() {
        assert_eq!(
            resources_server_name("x_agent_agent"),
            "x_agent_resources_server"
        );
        assert_eq!(resources_server_name("pivots"), "pivots_resources_server");
        assert_eq!(scalar("/data/p.jsonl"), "/data/p.jsonl");
        assert_eq!(scalar("Apache 2.0"), "Apache 2.0");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(
            scalar("NVIDIA Internal Use Only, Do Not Distribute"),
            "\"NVIDIA Internal Use Only, Do Not Distribute\""
        );
        assert_eq!(float(0.1), "0.1");
        assert_eq!(float(0.0), "0.0");
    }

    #[test]
    fn a_retargeted_config_is_the_one_rendered_for_the_selection() {
        let o = ConfigOptions {
            agent_ref: "pivot_agent".into(),
            train_path: "/data/pivots.jsonl".into(),
            validation_path: None,
            license: "TBD".into(),
            description: "d".into(),
            comparator: ComparatorConfig::new(0.1),
        };
        let built = render(&o);
        let selected = ConfigOptions {
            train_path: "/data/sel.jsonl".into(),
            validation_path: Some("/data/sel.val.jsonl".into()),
            ..o.clone()
        };
        assert_eq!(
            retarget(&built, "/data/sel.jsonl", Some("/data/sel.val.jsonl")).unwrap(),
            render(&selected)
        );
        // a config that has a validation entry already: both paths replaced in place
        let both = render(&ConfigOptions {
            validation_path: Some("/data/old-val.jsonl".into()),
            ..o.clone()
        });
        assert_eq!(
            retarget(&both, "/data/sel.jsonl", Some("/data/sel.val.jsonl")).unwrap(),
            render(&selected)
        );
        let only_train = ConfigOptions {
            train_path: "a path: with colon".into(),
            ..o.clone()
        };
        assert_eq!(
            retarget(&built, "a path: with colon", None).unwrap(),
            render(&only_train)
        );
        assert!(retarget("x: 1\n", "/p", None)
            .unwrap_err()
            .contains("no dataset entry"));
    }
}
