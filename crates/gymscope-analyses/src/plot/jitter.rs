//! How a scatter places points whose y values are few (0/1 rewards): drawn plainly they pile
//! into solid lines, so by default each point is moved vertically by a small offset fixed by its
//! task and rollout (the same on every redraw, in the app and the exported report, which stays
//! byte-identical between runs). The user can switch it off.

/// Half the jitter band, as a fraction of the plot's height (the app's canvas and the report's
/// SVG move points by the same share of their height).
pub const JITTER: f64 = 0.025;

/// How many distinct y values still count as discrete.
pub const DISCRETE_LEVELS: usize = 12;

/// How points are placed vertically.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PointMode {
    /// At their value, overlapping (continuous values).
    #[default]
    Exact,
    /// Moved vertically by [`offset`] within a band around their value (discrete values).
    Jitter,
}

impl PointMode {
    /// Jitter when the y values are discrete (at most [`DISCRETE_LEVELS`] distinct) or mostly
    /// piled on a few values (0/1 rewards beside a few fractional ones: [`mostly_piled`]), else
    /// exact.
    pub fn default_for(ys: &[f64]) -> PointMode {
        if is_discrete(ys, DISCRETE_LEVELS) || mostly_piled(ys) {
            PointMode::Jitter
        } else {
            PointMode::Exact
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PointMode::Exact => "exact",
            PointMode::Jitter => "jitter",
        }
    }
}

/// Whether the finite `ys` take at most `limit` distinct values.
pub fn is_discrete(ys: &[f64], limit: usize) -> bool {
    let mut seen: Vec<u64> = Vec::new();
    for y in ys.iter().filter(|y| y.is_finite()) {
        let bits = y.to_bits();
        if !seen.contains(&bits) {
            if seen.len() == limit {
                return false;
            }
            seen.push(bits);
        }
    }
    true
}

/// Whether at least half of the finite `ys` sit on values each held by at least 1 % of them
/// (and by two or more): drawn at their value they would collapse into solid lines (5,232
/// rewards of 0 or 1 among 8,000 did).
pub fn mostly_piled(ys: &[f64]) -> bool {
    let mut counts: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    let mut n = 0u32;
    for y in ys.iter().filter(|y| y.is_finite()) {
        // -0.0 and 0.0 are one value on the plot.
        *counts.entry((y + 0.0).to_bits()).or_default() += 1;
        n += 1;
    }
    let least = (f64::from(n) * 0.01).ceil().max(2.0) as u32;
    let piled: u32 = counts.values().filter(|&&c| c >= least).sum();
    n > 0 && f64::from(piled) >= f64::from(n) * 0.5
}

/// The vertical offset of rollout (`task`, `rollout`) in [-1, 1): a fixed pseudo-random value of
/// its key, so a point never moves between redraws, filters or runs. Scale it to the band.
pub fn offset(task: f64, rollout: f64) -> f64 {
    // Keys are integers stored as f64; mixing both into one word keeps tasks apart.
    let key = (task as i64 as u64).wrapping_mul(0x0001_0000_0001) ^ (rollout as i64 as u64);
    (mix(key) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// splitmix64: a fixed, well-spread mix of a word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mostly_binary_rewards_are_jittered_among_continuous_ones() {
        // 60 rewards of 0 or 1 and 40 distinct fractions: more than 12 levels, still piled.
        let mut ys: Vec<f64> = (0..60).map(|i| f64::from(i % 2)).collect();
        ys.extend((0..40).map(|i| 0.01 + f64::from(i) / 50.0));
        assert_eq!(PointMode::default_for(&ys), PointMode::Jitter);
        // Continuous values (each once) stay exact.
        let spread: Vec<f64> = (0..100).map(|i| f64::from(i) / 100.0).collect();
        assert_eq!(PointMode::default_for(&spread), PointMode::Exact);
    }

    #[test]
    fn offsets_are_fixed_by_the_key_and_spread() {
        assert_eq!(offset(12.0, 3.0), offset(12.0, 3.0));
        assert_ne!(offset(12.0, 3.0), offset(3.0, 12.0));
        assert_ne!(offset(0.0, 1.0), offset(1.0, 0.0));
        let all: Vec<f64> = (0..100)
            .flat_map(|t| (0..8).map(move |r| offset(f64::from(t), f64::from(r))))
            .collect();
        assert!(all.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        assert!(mean.abs() < 0.1, "{mean}");
        assert!(all.iter().any(|v| *v > 0.8) && all.iter().any(|v| *v < -0.8));
    }

    #[test]
    fn discrete_rewards_default_to_jitter() {
        assert_eq!(
            PointMode::default_for(&[0.0, 1.0, 1.0, f64::NAN]),
            PointMode::Jitter
        );
        let many: Vec<f64> = (0..50).map(|i| f64::from(i) / 50.0).collect();
        assert_eq!(PointMode::default_for(&many), PointMode::Exact);
        assert!(is_discrete(&[], 3));
    }
}
