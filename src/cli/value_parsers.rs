//! The flags' value parsers: a malformed value is clap's usage error (exit 2), said before
//! any file is read.

/// `--limit`: `--limit 0` would print nothing and say "stopped at --limit 0": refused as a usage error.
pub(super) fn match_limit(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("at least 1 match (use --count to count without printing)".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}

/// `--max-line-bytes`: at least 1 (a limit of 0 would refuse every line).
pub(super) fn line_limit(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("the limit must be at least 1 byte".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}

/// A number flag: `nan` and `inf` are refused while parsing, as a usage error (exit 2); a
/// threshold of NaN would compare false with every reward and select silently wrong.
pub(super) fn finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("expected a finite number, got `{s}`")),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}

/// `--alpha`: a finite number strictly between 0 and 1 (a usage error otherwise, exit 2).
pub(super) fn probability(s: &str) -> Result<f64, String> {
    match finite(s)? {
        x if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!(
            "expected a number between 0 and 1 (exclusive), got `{s}`"
        )),
    }
}

/// `--effect`: a finite number above 0.
pub(super) fn positive(s: &str) -> Result<f64, String> {
    match finite(s)? {
        x if x > 0.0 => Ok(x),
        _ => Err(format!("expected a number above 0, got `{s}`")),
    }
}
