//! The hash map of the read's hot paths (rollout keys, interned field names): foldhash instead of
//! std's SipHash, which perf put at 3 % of `gymscope profile`'s CPU. foldhash seeds itself per
//! process, so a file cannot be crafted to make every key collide. And [`LastValues`], the one
//! Python-dict-like list of named values.

use std::hash::Hash;

pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// The set of [`FastMap`]'s hasher.
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// Entries searched for linearly before they are indexed: most rows have a few fields, and a
/// scan of a few is faster than hashing; a row of 100,000 fields must not be quadratic.
const LINEAR_ENTRIES: usize = 16;

/// Named values in first-seen order where a repeated name keeps its first position and takes
/// its last value, as a Python dict does (`rollout_infos`, a JSON object read by Python's
/// `json`). Linear in the number of names whatever their count: past 16 entries the positions
/// are indexed. Reused across rows: [`LastValues::clear`] keeps the buffers.
#[derive(Clone, Debug)]
pub struct LastValues<K, V> {
    entries: Vec<(K, V)>,
    at: FastMap<K, usize>,
}

impl<K, V> Default for LastValues<K, V> {
    fn default() -> Self {
        LastValues {
            entries: Vec::new(),
            at: FastMap::default(),
        }
    }
}

impl<K: Eq + Hash + Clone, V> LastValues<K, V> {
    pub fn clear(&mut self) {
        self.entries.clear();
        if !self.at.is_empty() {
            // Only a wide row filled it; clearing an empty map would still walk its capacity.
            self.at.clear();
        }
    }

    /// Sets `key` to `value`: in place when the key is there, else at the end.
    pub fn set(&mut self, key: K, value: V) {
        if self.at.is_empty() && self.entries.len() >= LINEAR_ENTRIES {
            let at = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i));
            self.at.extend(at);
        }
        let found = if self.at.is_empty() {
            self.entries.iter().position(|(k, _)| *k == key)
        } else {
            self.at.get(&key).copied()
        };
        if let Some(i) = found {
            self.entries[i].1 = value;
        } else {
            if !self.at.is_empty() {
                self.at.insert(key.clone(), self.entries.len());
            }
            self.entries.push((key, value));
        }
    }

    pub fn entries(&self) -> &[(K, V)] {
        &self.entries
    }

    pub fn into_entries(self) -> Vec<(K, V)> {
        self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain linear reference, across the switch to the index and after a clear.
    #[test]
    fn first_positions_and_last_values_whatever_the_width() {
        let mut values = LastValues::default();
        for width in [0usize, 3, 16, 17, 40] {
            values.clear();
            let mut reference: Vec<(u32, u32)> = Vec::new();
            let names = (0..width as u32).chain((0..width as u32).rev().step_by(2));
            for (step, name) in names.enumerate() {
                let value = step as u32;
                values.set(name, value);
                match reference.iter_mut().find(|(k, _)| *k == name) {
                    Some(slot) => slot.1 = value,
                    None => reference.push((name, value)),
                }
            }
            assert_eq!(values.entries(), reference.as_slice(), "width {width}");
        }
    }
}
