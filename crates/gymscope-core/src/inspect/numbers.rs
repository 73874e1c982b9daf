//! A field's value as the rollout panel shows it: a JSON number for people (`figures`: tokens
//! and counts with thousands separators, anything else at 4 significant digits), any other
//! value as written. The exact text stays in the cell's tooltip.

/// `raw` (a value's compact JSON) for people, by its field name `key`.
pub fn for_people(key: &str, raw: &str) -> String {
    match raw.parse::<f64>() {
        Ok(v) if v.is_finite() && raw.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
            crate::figures::for_column(key, v)
        }
        _ => raw.to_string(),
    }
}

/// A file's size for people: `950 bytes`, `812 KB`, `6.5 MB`, `1.23 GB` (powers of 1,000, as
/// the progress bars count), 3 significant digits.
pub fn file_size(bytes: u64) -> String {
    let b = bytes as f64;
    let (value, unit) = match bytes {
        0..1_000 => return format!("{bytes} bytes"),
        1_000..1_000_000 => (b / 1e3, "KB"),
        1_000_000..1_000_000_000 => (b / 1e6, "MB"),
        _ => (b / 1e9, "GB"),
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_sizes_read_for_people() {
        assert_eq!(file_size(950), "950 bytes");
        assert_eq!(file_size(812_345), "812 KB");
        assert_eq!(file_size(6_492_620), "6.49 MB");
        assert_eq!(file_size(64_926_200), "64.9 MB");
        assert_eq!(file_size(1_234_567_890), "1.23 GB");
    }

    #[test]
    fn numbers_read_for_people_and_text_as_written() {
        assert_eq!(for_people("reward", "0.39817190233068067"), "0.3982");
        assert_eq!(for_people("input_tokens", "12345"), "12,345");
        assert_eq!(
            for_people("output_tokens_details.reasoning_tokens", "600"),
            "600"
        );
        assert_eq!(for_people("model", "\"nvidia/x\""), "\"nvidia/x\"");
        assert_eq!(for_people("ok", "true"), "true");
        assert_eq!(for_people("x", "NaN"), "NaN");
    }
}
