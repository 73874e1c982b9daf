//! Numbers as gymscope's texts, tables and plots show them, one rule each: a rate as a
//! percentage, a mean with two decimals, a share of a count, a plotted value at 6 significant
//! digits; for people (the app's and the report's key figures): counts and tokens with thousands
//! separators, rewards at 4 significant digits. Full precision stays in tooltips and downloads.
//! A leaf: it imports nothing of the crate.

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

/// A count with thousands separators (`12,345`).
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A mean of token counts as a whole number with separators (`3,908`), `–` when there is none.
pub fn tokens(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => {
            let rounded = v.round();
            let sign = if rounded < 0.0 { "-" } else { "" };
            format!("{sign}{}", count(rounded.abs() as usize))
        }
        _ => "–".into(),
    }
}

/// A reward (or any score) at 4 significant digits, no trailing zeros (`0.4667`, `12.35`,
/// `1`); from 10,000 on, a whole number with separators; `–` when there is none.
pub fn reward(v: Option<f64>) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return "–".into();
    };
    if v.abs() >= 10_000.0 {
        return tokens(Some(v));
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A p-value as people read it: two significant digits (`0.56`, `0.039`), `< 0.0001` below
/// that, `–` without one.
pub fn p_value(p: Option<f64>) -> String {
    match p.filter(|p| p.is_finite()) {
        None => "–".into(),
        Some(p) if p < 1e-4 => "< 0.0001".into(),
        Some(p) => {
            let decimals = (1 - p.log10().floor() as i32).clamp(1, 6) as usize;
            format!("{p:.decimals$}")
        }
    }
}

/// A table cell for people, by its column's header (`mean/output_tokens`, `num_rollouts`,
/// `mean/reward`): counts and token statistics as whole numbers with separators, anything else
/// at 4 significant digits. The exact value stays in the cell's tooltip and the downloads.
pub fn for_column(header: &str, v: f64) -> String {
    let field = header.rsplit_once('/').map_or(header, |(_, f)| f);
    let whole = field.contains("tokens")
        || matches!(
            header,
            "num_rollouts" | "expected_num_rollouts" | "missing_num_rollouts" | "rollouts"
        );
    if !v.is_finite() {
        "–".into()
    } else if whole && v.abs() >= 10.0 {
        tokens(Some(v))
    } else {
        reward(Some(v))
    }
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
    fn numbers_for_people() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(tokens(Some(509.6189)), "510");
        assert_eq!(tokens(Some(2157.7708)), "2,158");
        assert_eq!(tokens(None), "–");
        assert_eq!(reward(Some(0.466_666_666_666_666_7)), "0.4667");
        assert_eq!(reward(Some(0.5)), "0.5");
        assert_eq!(reward(Some(1.0)), "1");
        assert_eq!(reward(Some(12.3456)), "12.35");
        assert_eq!(reward(Some(0.000_123_456)), "0.0001235");
        assert_eq!(reward(Some(-0.25)), "-0.25");
        assert_eq!(reward(Some(123_456.7)), "123,457");
        assert_eq!(reward(Some(f64::NAN)), "–");
        assert_eq!(for_column("mean/output_tokens", 509.6189), "510");
        assert_eq!(for_column("std/total_tokens", 2157.7708), "2,158");
        assert_eq!(for_column("mean/reward", 0.666_666_7), "0.6667");
        assert_eq!(for_column("num_rollouts", 12_000.0), "12,000");
        assert_eq!(for_column("mean/judge_score", 0.123_456), "0.1235");
        assert_eq!(for_column("mean/reward", f64::NAN), "–");
        assert_eq!(p_value(Some(0.5555)), "0.56");
        assert_eq!(p_value(Some(0.7002)), "0.70");
        assert_eq!(p_value(Some(1.0)), "1.0");
        assert_eq!(p_value(Some(0.0386)), "0.039");
        assert_eq!(p_value(Some(0.00002)), "< 0.0001");
        assert_eq!(p_value(None), "–");
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
