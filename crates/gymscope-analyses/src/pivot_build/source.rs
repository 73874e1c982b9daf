//! The first pass over the source (docs/pivots.md "Pivot datasets": `--min-reward`, `--group-by`,
//! `--source-groups`): each row's reward and task group, so the second
//! pass knows every group's class before converting. Only counts are kept per group.

use crate::reward_group::{Outcomes, RewardGroup};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;

/// A row's top-level keys with their raw JSON text: enough for the first pass, which never
/// builds the row's tree.
// A BTreeMap: rows have a few dozen keys, and no hashing is cheaper than SipHash here.
pub type RawRow<'a> = std::collections::BTreeMap<std::borrow::Cow<'a, str>, &'a RawValue>;

/// The value at a dotted path of a raw row, parsing only the objects on the way.
pub fn dotted_raw(row: &RawRow<'_>, path: &str) -> Option<Value> {
    fn at(text: &str, keys: &[&str]) -> Option<Value> {
        let Some((first, rest)) = keys.split_first() else {
            return serde_json::from_str(text).ok();
        };
        let map: RawRow<'_> = serde_json::from_str(text).ok()?;
        at(map.get(*first)?.get(), rest)
    }
    let keys: Vec<&str> = path.split('.').collect();
    let (first, rest) = keys.split_first()?;
    at(row.get(*first)?.get(), rest).filter(|v| !v.is_null())
}

/// The value at a dotted path of a parsed row (objects only, as upstream's `get_path`).
pub fn dotted<'a>(row: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(row, |v, k| v.get(k))
        .filter(|v| !v.is_null())
}

/// A reward as a number (booleans as 0/1), as `crate::reward_group` reads it.
pub fn reward_of(value: Option<&Value>) -> Option<f64> {
    value.and_then(crate::reward_group::reward_value)
}

/// Per task group: its rollouts' outcomes (a non-numeric reward counts as a failure).
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Groups {
    groups: HashMap<String, Outcomes>,
}

/// A row's group facts, written into `pivot_info`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupFacts {
    pub class: RewardGroup,
    pub size: u32,
    pub success_rate: f64,
}

impl Groups {
    /// Counts one row. `key` is the group field's JSON text (`None`: a group of its own).
    pub fn add(&mut self, key: Option<String>, success: bool) {
        if let Some(key) = key {
            let o = self.groups.entry(key).or_default();
            if success {
                o.successes += 1;
            } else {
                o.failures += 1;
            }
        }
    }

    pub fn facts(&self, key: Option<&str>, success: bool) -> GroupFacts {
        let own = Outcomes {
            successes: u32::from(success),
            failures: u32::from(!success),
        };
        let o = key.and_then(|k| self.groups.get(k)).copied().unwrap_or(own);
        let size = o.successes + o.failures;
        GroupFacts {
            class: o.group(),
            size,
            success_rate: f64::from(o.successes) / f64::from(size.max(1)),
        }
    }

    /// Groups by class (`tasks` in the metrics), groups of one included via `singles`.
    pub fn class_counts(&self) -> [u64; 3] {
        let mut counts = [0u64; 3];
        for o in self.groups.values() {
            counts[class_slot(o.group())] += 1;
        }
        counts
    }

    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// Slot of a class in `[all_success, all_failure, mixed]` (the metrics' order).
pub fn class_slot(class: RewardGroup) -> usize {
    match class {
        RewardGroup::AllSuccess => 0,
        RewardGroup::AllFailure | RewardGroup::NoReward => 1,
        RewardGroup::Mixed => 2,
    }
}
