//! `--shard i/n`: a deterministic slice of the materialized rows so several collectors can share
//! one run. Whole tasks go to one shard (their rollouts stay together for per-task metrics), dealt
//! round-robin by order of first appearance, so shards get equal numbers of tasks.

use super::key::KeyPart;
use std::collections::HashMap;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard expects I/N with 0 <= I < N (e.g. 0/4), got `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Decides, row by row in materialized order, whether a row belongs to this shard.
pub struct ShardFilter {
    shard: Shard,
    ordinals: HashMap<KeyPart, u64>,
}

impl ShardFilter {
    pub fn new(shard: Shard) -> Self {
        ShardFilter {
            shard,
            ordinals: HashMap::new(),
        }
    }

    pub fn keep(&mut self, task: &KeyPart) -> bool {
        let next = self.ordinals.len() as u64;
        let ordinal = *self.ordinals.entry(task.clone()).or_insert(next);
        ordinal % u64::from(self.shard.count) == u64::from(self.shard.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_tasks() {
        let tasks = [0, 0, 1, 1, 2, 0, 3, 4];
        let mut owners = vec![Vec::new(); tasks.len()];
        for i in 0..3 {
            let mut f = ShardFilter::new(format!("{i}/3").parse().unwrap());
            for (row, t) in tasks.iter().enumerate() {
                if f.keep(&KeyPart::Int(*t)) {
                    owners[row].push(i);
                }
            }
        }
        assert_eq!(owners, [[0], [0], [1], [1], [2], [0], [0], [1]]);
        assert!("3/3".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }
}
