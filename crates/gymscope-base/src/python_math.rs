//! The two numbers of NeMo Gym v0.7.0's confidence intervals that are not plain IEEE arithmetic,
//! to the bit, the same natively and in wasm32 (where Rust's `powf` is not glibc's `pow`):
//!
//! - [`sqrt_as_pow`]: CPython's `float(n) ** 0.5`, which calls the C library's `pow` (glibc 2.36
//!   on the platforms Gym runs on). It equals `sqrt(n)` except at 891 n ≤ 1,000,000, taken from a
//!   table recorded from CPython (`data/pow_half.bin`); beyond 1,000,000, `sqrt`.
//! - [`t975`]: scipy's `stats.t.ppf(0.975, df)`, Boost's Student-t quantile, which is not
//!   correctly rounded (up to 19 ulp off at df 6). Recorded from scipy 1.18.1 for df 1 … 100,000
//!   (`data/t975.bin`: exact values below df 1,000, then each value's distance in ulps from a
//!   Cornish-Fisher expansion); beyond df 100,000 the expansion alone, within 5 ulps
//!   (docs/parity.md).
//!
//! `scripts/parity-v07/tables.py` writes both tables from the v0.7.0 venv's Python.

use std::sync::OnceLock;

const T975: &[u8] = include_bytes!("../data/t975.bin");
const POW_HALF: &[u8] = include_bytes!("../data/pow_half.bin");

/// df below this are stored whole; from it to [`LAST_DF`], as steps from the expansion.
const EXACT_BELOW: u64 = 1000;
const LAST_DF: u64 = 100_000;

/// `float(n) ** 0.5` as CPython computes it with glibc's `pow`.
pub fn sqrt_as_pow(n: u64) -> f64 {
    static EXCEPTIONS: OnceLock<Vec<(u32, f64)>> = OnceLock::new();
    let exceptions = EXCEPTIONS.get_or_init(|| {
        POW_HALF
            .chunks_exact(12)
            .map(|c| {
                let n = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                let mut v = [0u8; 8];
                v.copy_from_slice(&c[4..]);
                (n, f64::from_le_bytes(v))
            })
            .collect()
    });
    if let Ok(n32) = u32::try_from(n) {
        if let Ok(i) = exceptions.binary_search_by_key(&n32, |&(k, _)| k) {
            return exceptions[i].1;
        }
    }
    (n as f64).sqrt()
}

/// scipy's `stats.t.ppf(0.975, df)` for a whole number of degrees of freedom (≥ 1).
pub fn t975(df: u64) -> f64 {
    assert!(df >= 1, "a t quantile needs at least one degree of freedom");
    if df < EXACT_BELOW {
        let at = (df as usize - 1) * 8;
        let mut v = [0u8; 8];
        v.copy_from_slice(&T975[at..at + 8]);
        return f64::from_le_bytes(v);
    }
    let expansion = cornish_fisher_t975(df as f64);
    if df > LAST_DF {
        return expansion;
    }
    let k = (df - EXACT_BELOW) as usize;
    let byte = T975[(EXACT_BELOW as usize - 1) * 8 + k / 2];
    let nibble = if k % 2 == 0 { byte & 0xF } else { byte >> 4 };
    // A signed 4-bit count of steps between adjacent doubles (both values are positive).
    let steps = i64::from((nibble as i8) << 4 >> 4);
    f64::from_bits((expansion.to_bits() as i64 + steps) as u64)
}

/// The fourth-order Cornish-Fisher expansion of the t quantile at 0.975, with exactly the
/// operations of `scripts/parity-v07/tables.py`'s twin (the table's steps are counted from it).
fn cornish_fisher_t975(df: f64) -> f64 {
    const Z: f64 = 1.959963984540054;
    let z = Z;
    let z2 = z * z;
    let z3 = z2 * z;
    let z5 = z3 * z2;
    let z7 = z5 * z2;
    let z9 = z7 * z2;
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    let n2 = df * df;
    z + g1 / df + g2 / n2 + g3 / (n2 * df) + g4 / (n2 * n2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t975_gives_scipys_values() {
        // `repr(scipy.stats.t.ppf(0.975, df))`, scipy 1.18.1 (docs/parity.md), at both storage
        // forms and their seam; df 6 is where Boost is 19 ulp from the correctly rounded value.
        for (df, t) in [
            (1, 12.706204736174694),
            (2, 4.302652729749462),
            (6, 2.4469118511449786),
            (999, 1.9623414611334493),
            (1000, 1.9623390808264083),
            (1001, 1.9623367052808798),
            (20000, 1.9600826051581348),
            (100_000, 1.9599877075346095),
        ] {
            assert_eq!(t975(df), t, "df {df}");
        }
        // Beyond the table: the expansion, close to the normal quantile from above.
        let far = t975(10_000_000);
        assert!((far - 1.959964221767205).abs() < 1e-14, "{far}");
    }

    #[test]
    fn sqrt_as_pow_differs_from_sqrt_where_glibc_does() {
        assert_eq!(sqrt_as_pow(2921), 54.046276467486635);
        assert_eq!(54.04627646748664, 2921f64.sqrt());
        assert_eq!(sqrt_as_pow(4), 2.0);
        assert_eq!(sqrt_as_pow(3), 3f64.sqrt());
        assert_eq!(sqrt_as_pow(5_000_000), 5_000_000f64.sqrt());
    }
}
