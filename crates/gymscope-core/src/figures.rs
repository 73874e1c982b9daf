//! Numbers as gymscope's texts, tables and plots show them, one rule each: a rate as a
//! percentage, a mean with two decimals, a share of a count, a plotted value at 6 significant
//! digits. A leaf: it imports nothing of the crate.

/// A rate in [0, 1] as a percentage with one decimal (`12.5 %`), `-` when there is none.
pub fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.1} %", v * 100.0))
}

/// A value with two decimals (`0.67`), `-` when there is none.
pub fn two_decimals(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

/// `f"{count / total:.2%}"`: the double `count/total` times 100, rounded half-even on its exact
/// binary value, as Rust's formatter also does; `0.00%` of nothing.
pub fn percent_of(count: u64, total: u64) -> String {
    if total == 0 {
        return "0.00%".into();
    }
    format!("{:.2}%", (count as f64 / total as f64) * 100.0)
}

/// `v` at 6 significant digits; integers below 1e15 (token counts) exactly.
pub fn round6(v: f64) -> f64 {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return v;
    }
    format!("{v:.5e}").parse().unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_like_python() {
        // Python: f"{23/160:.2%}" == "14.37%" (the double 23/160*100 is just below 14.375)
        assert_eq!(percent_of(23, 160), "14.37%");
        assert_eq!(percent_of(3, 5), "60.00%");
        assert_eq!(percent_of(0, 0), "0.00%");
        assert_eq!(format!("{:.2}", 19.0 / 8.0), "2.38");
    }

    #[test]
    fn figures_read_as_before() {
        assert_eq!(percent(Some(0.125)), "12.5 %");
        assert_eq!(percent(None), "-");
        assert_eq!(two_decimals(Some(2.0 / 3.0)), "0.67");
        assert_eq!(percent_of(1, 3), "33.33%");
        assert_eq!(round6(1.234_567_89), 1.234_57);
        assert_eq!(round6(123_456_789.0), 123_456_789.0);
        assert_eq!(round6(2.999_999_9), 3.0);
    }
}
