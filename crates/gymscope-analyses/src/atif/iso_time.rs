//! A POSIX timestamp as Python writes it in NeMo Gym v0.7.0's ATIF export:
//! `datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")`. CPython rounds the
//! fraction to microseconds half to even, leaves out a zero fraction, and refuses years outside
//! 1..=9999.

/// `None` where Python raises (the year is out of range or the time does not fit `time_t`).
pub fn iso_utc(t: f64) -> Option<String> {
    if !t.is_finite() {
        return None;
    }
    // `_PyTime_ObjectToTimeval` with `_PyTime_ROUND_HALF_EVEN`.
    let mut int_part = t.trunc();
    let mut micros = round_half_even((t - int_part) * 1e6);
    if micros >= 1e6 {
        micros -= 1e6;
        int_part += 1.0;
    } else if micros < 0.0 {
        micros += 1e6;
        int_part -= 1.0;
    }
    if !(-9.2e18..9.2e18).contains(&int_part) {
        return None;
    }
    let secs = int_part as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    if !(1..=9999).contains(&year) {
        return None;
    }
    let mut out = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    let micros = micros as u32;
    if micros != 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    out.push('Z');
    Some(out)
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - r).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::iso_utc;

    /// Python 3.13's answers (`datetime.fromtimestamp(t, UTC).isoformat()`).
    #[test]
    fn as_python_writes_them() {
        let cases = [
            (0.0, Some("1970-01-01T00:00:00Z")),
            (1.5, Some("1970-01-01T00:00:01.500000Z")),
            (1796417684.9631386, Some("2026-12-04T20:54:44.963139Z")),
            (-1.5, Some("1969-12-31T23:59:58.500000Z")),
            (1e-7, Some("1970-01-01T00:00:00Z")),
            (5e-7, Some("1970-01-01T00:00:00Z")),
            (1.5e-6, Some("1970-01-01T00:00:00.000002Z")),
            (2.5e-6, Some("1970-01-01T00:00:00.000002Z")),
            (-62135596800.0, Some("0001-01-01T00:00:00Z")),
            (-62135596801.0, None),
            (253402300800.0, None),
            (1e20, None),
        ];
        for (t, want) in cases {
            assert_eq!(iso_utc(t).as_deref(), want, "{t}");
        }
    }
}
