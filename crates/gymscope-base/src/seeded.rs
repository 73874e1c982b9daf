//! Seeded choices that must come out the same in every gymscope version, natively and in the
//! app: each item's place in the seeded order depends only on the seed and the item's own
//! identity (its task index, its trajectory id), never on which other items are present, so a
//! looser filter keeps the choices a tighter one made. SplitMix64 (Steele, Lea and Flood,
//! "Fast splittable pseudorandom number generators", OOPSLA 2014) is written out here because
//! the seed → selection mapping is part of what users rely on (docs/select-tasks.md "Choosing tasks"): a
//! crate's generator or sampling routine may change its stream between versions.

/// One SplitMix64 step: a well-mixed 64-bit value of `x`.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Which choice a key orders: the cap (`--max-tasks`) and the split (`--val-fraction`) use
/// independent orders, so the validation set is not the cap's leftovers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Cap = 1,
    Split = 2,
}

/// An item's place in the seeded order of `stream`: FNV-1a of its identity, mixed with the seed.
pub fn key(seed: u64, stream: Stream, id: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in id {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    splitmix64(splitmix64(seed ^ (stream as u64).wrapping_mul(0x9e37_79b9)) ^ h)
}

/// Groups named by `names` (one name per item), numbered in order of first appearance, and
/// each group's place in the seeded split order: the `groups` argument of [`split`].
pub fn groups<'n>(seed: u64, names: impl Iterator<Item = &'n str>) -> (Vec<usize>, Vec<u64>) {
    let mut numbers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut group_keys = Vec::new();
    let group_of = names
        .map(|name| {
            *numbers.entry(name).or_insert_with(|| {
                group_keys.push(key(seed, Stream::Split, name.as_bytes()));
                group_keys.len() - 1
            })
        })
        .collect();
    (group_of, group_keys)
}

/// Python's `round()` of a non-negative float to an integer: halves go to the even neighbour
/// (`round(2.5) == 2`, `round(3.5) == 4`).
pub fn round_half_even(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.round_ties_even() as u64
    } else {
        0
    }
}

/// One candidate of a capped choice.
#[derive(Clone, Copy, Debug)]
pub struct CapItem {
    pub key: u64,
    /// The stratum's number (`--stratify`), when stratified.
    pub stratum: usize,
    /// Distance from the preferred value (`--target-pass`); 0 when there is none.
    pub distance: f64,
}

/// Chooses `k` of `items`: nearest the target first, then in seeded order. Stratified, each
/// stratum gets its share of `k` by largest remainder (ties to the lower stratum number), so a
/// stratum of 30 % of the items is 30 % of the choice. Returns one flag per item.
pub fn cap(items: &[CapItem], k: usize, stratified: bool) -> Vec<bool> {
    let mut chosen = vec![false; items.len()];
    if k >= items.len() {
        return vec![true; items.len()];
    }
    let by_preference = |a: &usize, b: &usize| {
        let (x, y) = (&items[*a], &items[*b]);
        x.distance
            .total_cmp(&y.distance)
            .then(x.key.cmp(&y.key))
            .then(a.cmp(b))
    };
    if !stratified {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(by_preference);
        order.into_iter().take(k).for_each(|i| chosen[i] = true);
        return chosen;
    }
    let strata = items.iter().map(|i| i.stratum + 1).max().unwrap_or(0);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); strata];
    for (i, item) in items.iter().enumerate() {
        members[item.stratum].push(i);
    }
    for quota in largest_remainder(&members.iter().map(Vec::len).collect::<Vec<_>>(), k)
        .into_iter()
        .zip(members.iter_mut())
    {
        let (q, m) = quota;
        m.sort_by(by_preference);
        m.iter().take(q).for_each(|&i| chosen[i] = true);
    }
    chosen
}

/// Hamilton's apportionment of `k` seats to groups of the given sizes.
fn largest_remainder(sizes: &[usize], k: usize) -> Vec<usize> {
    let n: usize = sizes.iter().sum();
    if n == 0 {
        return vec![0; sizes.len()];
    }
    let mut seats: Vec<usize> = sizes.iter().map(|&s| s * k / n).collect();
    let mut left = k - seats.iter().sum::<usize>();
    let mut by_remainder: Vec<usize> = (0..sizes.len()).collect();
    // remainder of s·k/n is (s·k mod n)/n: compare the numerators.
    by_remainder.sort_by(|&a, &b| {
        ((sizes[b] * k) % n)
            .cmp(&((sizes[a] * k) % n))
            .then(a.cmp(&b))
    });
    for i in by_remainder {
        if left == 0 {
            break;
        }
        if seats[i] < sizes[i] {
            seats[i] += 1;
            left -= 1;
        }
    }
    seats
}

/// The largest exact search for a grouped split: cells of its table (4 bytes each).
const EXACT_SPLIT_CELLS: usize = 1 << 24;

/// Chooses the validation items: `round(fraction × n)` of them in seeded order, or, with
/// `groups` (each item's group number and each group's key), whole groups whose total is the
/// nearest to that size that whole groups allow (ties to the smaller), groups of one size taken
/// in seeded order. Returns one flag per item (`true`: validation).
pub fn split(keys: &[u64], groups: Option<(&[usize], &[u64])>, fraction: f64) -> Vec<bool> {
    let n = keys.len();
    let target = (round_half_even(fraction * n as f64) as usize).min(n);
    let mut val = vec![false; n];
    let Some((group_of, group_keys)) = groups else {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| keys[a].cmp(&keys[b]).then(a.cmp(&b)));
        order.into_iter().take(target).for_each(|i| val[i] = true);
        return val;
    };
    let mut sizes = vec![0usize; group_keys.len()];
    for &g in group_of {
        sizes[g] += 1;
    }
    let mut order: Vec<usize> = (0..group_keys.len()).filter(|&g| sizes[g] > 0).collect();
    order.sort_by(|&a, &b| group_keys[a].cmp(&group_keys[b]).then(a.cmp(&b)));
    let taken = choose_groups(&order, &sizes, target);
    for (i, &g) in group_of.iter().enumerate() {
        val[i] = taken[g];
    }
    val
}

/// Which groups (in `order`, seeded) make a total nearest `target`.
fn choose_groups(order: &[usize], sizes: &[usize], target: usize) -> Vec<bool> {
    let mut taken = vec![false; sizes.len()];
    let mut distinct: Vec<usize> = order.iter().map(|&g| sizes[g]).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let span = target
        .saturating_mul(2)
        .min(order.iter().map(|&g| sizes[g]).sum());
    if distinct.len().saturating_mul(span + 1) > EXACT_SPLIT_CELLS {
        // Too many distinct group sizes for the exact search: the seeded order, taking each
        // group that brings the total nearer the target.
        let mut total = 0usize;
        for &g in order {
            if (total + sizes[g]).abs_diff(target) < total.abs_diff(target) {
                total += sizes[g];
                taken[g] = true;
            }
        }
        return taken;
    }
    let count_of = |size: usize| order.iter().filter(|&&g| sizes[g] == size).count();
    // used[i][s]: the fewest groups of the i-th size that reach total s with the sizes before
    // it (u32::MAX: unreachable). A bounded subset sum, at most `span` wide.
    let mut used: Vec<Vec<u32>> = Vec::with_capacity(distinct.len());
    let mut reach = vec![false; span + 1];
    reach[0] = true;
    for &d in &distinct {
        let limit = count_of(d) as u32;
        let mut row = vec![u32::MAX; span + 1];
        for s in 0..=span {
            if reach[s] {
                row[s] = 0;
            } else if s >= d && row[s - d] < limit {
                row[s] = row[s - d] + 1;
            }
        }
        for s in 0..=span {
            reach[s] = row[s] != u32::MAX;
        }
        used.push(row);
    }
    let best = (0..=span)
        .filter(|&s| reach[s])
        .min_by_key(|&s| (s.abs_diff(target), s))
        .unwrap_or(0);
    let mut s = best;
    for (i, &d) in distinct.iter().enumerate().rev() {
        let k = used[i][s] as usize;
        s -= k * d;
        for &g in order.iter().filter(|&&g| sizes[g] == d).take(k) {
            taken[g] = true;
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_pythons() {
        assert_eq!(round_half_even(2.5), 2);
        assert_eq!(round_half_even(3.5), 4);
        assert_eq!(round_half_even(0.5), 0);
        assert_eq!(round_half_even(2.6), 3);
        assert_eq!(round_half_even(0.1 * 25.0), 2); // 2.5 → 2
        assert_eq!(round_half_even(f64::NAN), 0);
    }

    #[test]
    fn an_items_key_depends_on_the_seed_and_itself_only() {
        assert_eq!(key(7, Stream::Cap, b"12"), key(7, Stream::Cap, b"12"));
        assert_ne!(key(7, Stream::Cap, b"12"), key(8, Stream::Cap, b"12"));
        assert_ne!(key(7, Stream::Cap, b"12"), key(7, Stream::Split, b"12"));
        // The published stream: a change here changes every user's selections.
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    fn items(n: usize, seed: u64) -> Vec<CapItem> {
        (0..n)
            .map(|i| CapItem {
                key: key(seed, Stream::Cap, i.to_string().as_bytes()),
                stratum: usize::from(i % 10 >= 7),
                distance: 0.0,
            })
            .collect()
    }

    #[test]
    fn a_cap_is_deterministic_and_keeps_each_strata_share() {
        let a = cap(&items(100, 1), 20, true);
        assert_eq!(a, cap(&items(100, 1), 20, true));
        assert_ne!(a, cap(&items(100, 2), 20, true));
        assert_eq!(a.iter().filter(|&&c| c).count(), 20);
        let minority = (0..100).filter(|&i| a[i] && i % 10 >= 7).count();
        assert_eq!(minority, 6, "30 % of 20");
        let plain = cap(&items(100, 1), 20, false);
        assert_eq!(plain.iter().filter(|&&c| c).count(), 20);
        assert_eq!(cap(&items(5, 1), 9, false), vec![true; 5]);
    }

    #[test]
    fn the_nearest_to_the_target_go_first() {
        let mut its = items(10, 3);
        for (i, it) in its.iter_mut().enumerate() {
            it.distance = (i as f64 - 4.0).abs();
        }
        let chosen = cap(&its, 3, false);
        assert_eq!(
            (0..10).filter(|&i| chosen[i]).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
    }

    #[test]
    fn apportionment_gives_every_seat() {
        assert_eq!(largest_remainder(&[7, 3], 5), vec![4, 1]); // 3.5, 1.5 → tie to the first
        assert_eq!(largest_remainder(&[1, 1, 1], 2), vec![1, 1, 0]);
        assert_eq!(largest_remainder(&[0, 4], 2), vec![0, 2]);
    }

    #[test]
    fn a_plain_split_takes_round_f_n() {
        let keys: Vec<u64> = (0..25)
            .map(|i: u64| key(5, Stream::Split, &i.to_le_bytes()))
            .collect();
        let val = split(&keys, None, 0.1);
        assert_eq!(val.iter().filter(|&&v| v).count(), 2); // round(2.5) = 2
        assert_eq!(split(&keys, None, 0.14).iter().filter(|&&v| v).count(), 4); // 3.5 → 4
        assert_eq!(split(&keys, None, 0.0).iter().filter(|&&v| v).count(), 0);
    }

    #[test]
    fn a_grouped_split_takes_whole_groups_nearest_the_size() {
        // groups of sizes 5, 5, 3, 1 (14 items); target round(0.5 × 14) = 7 → 5 + 1 + … = 6 or
        // 3 + 5 = 8 or 5 + 1 = 6: nearest is 6 or 8 (distance 1); ties go to the smaller: 6.
        let group_of: Vec<usize> = [0; 5]
            .into_iter()
            .chain([1; 5])
            .chain([2; 3])
            .chain([3])
            .collect();
        let gkeys = [4, 3, 2, 1];
        let keys = vec![0; group_of.len()];
        let val = split(&keys, Some((&group_of, &gkeys)), 0.5);
        let size = val.iter().filter(|&&v| v).count();
        assert_eq!(size, 6);
        for g in 0..4 {
            let members: Vec<bool> = (0..group_of.len())
                .filter(|&i| group_of[i] == g)
                .map(|i| val[i])
                .collect();
            assert!(members.iter().all(|&v| v == members[0]), "group {g} split");
        }
        // An exact fit exists: 3 + 1 + … target round(0.3 × 14) = 4 → the groups of 3 and 1.
        let val = split(&keys, Some((&group_of, &gkeys)), 0.3);
        assert_eq!(
            (0..14).filter(|&i| val[i]).collect::<Vec<_>>(),
            vec![10, 11, 12, 13]
        );
    }
}
