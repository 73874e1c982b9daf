//! Strict JSON skimming: where a value, string or number ends, validated as `serde_json` (and
//! upstream's orjson) would validate it, at `memchr` speed and without copying or unescaping.
//!
//! Conservative by contract: `Some(end)` only for text `serde_json` accepts; `None` means "not
//! sure" (an error, or a case kept simple here), and the caller re-reads the line with
//! `serde_json`, which gives the exact message and column. Measured on agent rollouts (tool
//! arguments are JSON inside JSON strings, so every other byte run ends in an escape), serde's
//! validating skip unescaped each such string into its scratch buffer: 130 MB/s a core.
//!
//! Precondition of every function: the text is valid UTF-8 and holds no byte below 0x20 (see
//! [`has_control_bytes`]), so strings need no per-byte control check.

use memchr::memchr2;

/// Nesting deeper than this is left to `serde_json` (its recursion limit is 128).
const MAX_DEPTH: usize = 96;

/// Whether `text` holds a byte below 0x20 (a raw control character, tab or CR): such lines take
/// the `serde_json` path. Written as a branch-free fold per block so it vectorizes.
pub fn has_control_bytes(text: &[u8]) -> bool {
    text.chunks(64)
        .any(|block| block.iter().fold(0u8, |seen, &b| seen | u8::from(b < 0x20)) != 0)
}

/// The index after JSON whitespace at `i`.
pub fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = text.get(i) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting with the quote at `i`.
///
/// Scans 64 bytes at a time for quotes and backslashes as two bit masks, and walks the escapes
/// inside a block through its masks. Why not one `memchr2` per escape: tool arguments are JSON
/// inside JSON strings, so their escapes come every few bytes and each search's setup cost more
/// than the bytes it skipped (perf: `memchr2` and this function were a third of health's time).
pub fn string_end(text: &[u8], i: usize) -> Option<usize> {
    scan_string(text, i, escape_end)
}

/// The end of the string at `i`, each escape's end found (and checked) by `escape`.
#[inline]
fn scan_string(
    text: &[u8],
    i: usize,
    escape: impl Fn(&[u8], usize) -> Option<usize>,
) -> Option<usize> {
    debug_assert_eq!(text.get(i), Some(&b'"'));
    let mut j = i + 1;
    // Most strings of a row are keys and short values (`"type"`, `"auto"`, ids): one 16-byte
    // look settles them, where the 64-byte masks below cost four (perf, structure-dense rows:
    // building those masks was the parsing threads' largest cost).
    if let Some(head) = text.get(j..j + 16) {
        let (quotes, escapes) = quote_backslash_masks16(head);
        let (q, e) = (quotes.trailing_zeros(), escapes.trailing_zeros());
        if q < e {
            return Some(j + q as usize + 1);
        }
        if e == 32 {
            j += 16; // neither: the string goes on past these bytes
        }
    }
    while let Some(block) = text.get(j..j + 64) {
        let (mut quotes, mut escapes) = quote_backslash_masks(block);
        loop {
            let (q, e) = (quotes.trailing_zeros(), escapes.trailing_zeros());
            if q < e {
                return Some(j + q as usize + 1);
            }
            if e == 64 {
                j += 64;
                break;
            }
            let next = escape(text, j + e as usize)?;
            let done = next - j;
            if done >= 64 {
                j = next;
                break;
            }
            quotes &= !0 << done;
            escapes &= !0 << done;
        }
    }
    loop {
        let k = j + memchr2(b'"', b'\\', text.get(j..)?)?;
        if text[k] == b'"' {
            return Some(k + 1);
        }
        j = escape(text, k)?;
    }
}

/// Bit `n` of the first mask is set when `block[n]` is a quote, of the second when it is a
/// backslash, for a 64-byte block: four 16-byte looks.
fn quote_backslash_masks(block: &[u8]) -> (u64, u64) {
    debug_assert_eq!(block.len(), 64);
    let (mut quotes, mut escapes) = (0u64, 0u64);
    for (n, part) in block.chunks_exact(16).enumerate() {
        let (q, e) = quote_backslash_masks16(part);
        quotes |= u64::from(q) << (16 * n);
        escapes |= u64::from(e) << (16 * n);
    }
    (quotes, escapes)
}

/// The quote and backslash masks of 16 bytes (`part[..16]`, bits 0–15): vector compares and
/// move-masks (SSE2 is in every x86-64; simd128 in every current browser), a plain loop
/// elsewhere. The compiler does not vectorize the loop into move-masks by itself.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)] // SSE2 intrinsics (SAFETY below)
#[inline]
fn quote_backslash_masks16(part: &[u8]) -> (u32, u32) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    assert!(part.len() >= 16);
    // SAFETY: SSE2 is part of every x86-64 target; `part` has 16 readable bytes (checked above),
    // and an unaligned load has no other requirement.
    #[allow(clippy::cast_ptr_alignment)] // `loadu`: any alignment
    let (q, e) = unsafe {
        let v = _mm_loadu_si128(part.as_ptr().cast::<__m128i>());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x22));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C));
        (_mm_movemask_epi8(quote), _mm_movemask_epi8(backslash))
    };
    // A move-mask is 16 bits, never negative: its absolute value is itself.
    (q.unsigned_abs(), e.unsigned_abs())
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[allow(unsafe_code)] // simd128 loads (SAFETY below)
#[inline]
fn quote_backslash_masks16(part: &[u8]) -> (u32, u32) {
    use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load};
    assert!(part.len() >= 16);
    // SAFETY: `part` has 16 readable bytes (checked above), and `v128_load` has no alignment
    // requirement.
    #[allow(clippy::cast_ptr_alignment)] // any alignment
    let v = unsafe { v128_load(part.as_ptr().cast::<v128>()) };
    (
        u32::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'"')))),
        u32::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'\\')))),
    )
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
fn quote_backslash_masks16(part: &[u8]) -> (u32, u32) {
    let (mut quotes, mut escapes) = (0u32, 0u32);
    for (n, &b) in part.iter().take(16).enumerate() {
        quotes |= u32::from(b == b'"') << n;
        escapes |= u32::from(b == b'\\') << n;
    }
    (quotes, escapes)
}

/// The end of the escape whose backslash is at `k`, when it is one JSON allows.
fn escape_end(text: &[u8], k: usize) -> Option<usize> {
    match text.get(k + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(k + 2),
        b'u' => unicode_escape_end(text, k),
        _ => None,
    }
}

/// The end of the `\uXXXX` escape at `k` (two escapes for a surrogate pair). A lone surrogate is
/// an error to orjson and serde_json alike; it is left to the caller's fallback.
fn unicode_escape_end(text: &[u8], k: usize) -> Option<usize> {
    let unit = hex4(text, k + 2)?;
    match unit {
        0xD800..=0xDBFF => {
            if text.get(k + 6..k + 8)? != b"\\u" {
                return None;
            }
            let low = hex4(text, k + 8)?;
            (0xDC00..=0xDFFF).contains(&low).then_some(k + 12)
        }
        0xDC00..=0xDFFF => None,
        _ => Some(k + 6),
    }
}

fn hex4(text: &[u8], at: usize) -> Option<u32> {
    text.get(at..at + 4)?.iter().try_fold(0u32, |acc, &b| {
        let digit = (b as char).to_digit(16)?;
        Some(acc << 4 | digit)
    })
}

/// The end of the number token at `i`, checked against JSON's grammar and, like serde_json,
/// refused when its value overflows an `f64`.
pub fn number_end(text: &[u8], i: usize) -> Option<usize> {
    let digits = |mut j: usize| {
        let start = j;
        while text.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        (j > start).then_some(j)
    };
    let mut j = i + usize::from(text.get(i) == Some(&b'-'));
    j = match text.get(j)? {
        b'0' => j + 1,
        b'1'..=b'9' => digits(j)?,
        _ => return None,
    };
    let int_end = j;
    if text.get(j) == Some(&b'.') {
        j = digits(j + 1)?;
    }
    let exponent = matches!(text.get(j), Some(b'e' | b'E'));
    if exponent {
        j += 1;
        if let Some(b'+' | b'-') = text.get(j) {
            j += 1;
        }
        j = digits(j)?;
    }
    // Only an exponent or hundreds of integer digits can overflow an f64 (its largest value has
    // 309): anything else is finite without parsing it (perf: the parse was 1% of the read on
    // rows of decimals such as `"created_at":1778816760.0`). The rest is parsed once to see.
    if exponent || int_end - i > 300 {
        let token = std::str::from_utf8(&text[i..j]).ok()?;
        if !token.parse::<f64>().ok()?.is_finite() {
            return None;
        }
    }
    Some(j)
}

/// The end of the literal `word` at `i`.
fn literal_end(text: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    (text.get(i..i + word.len())? == word).then_some(i + word.len())
}

/// The end of the object key at `i` and of the `:` and whitespace after it: where the value starts.
pub fn key_colon(text: &[u8], i: usize) -> Option<usize> {
    if text.get(i) != Some(&b'"') {
        return None;
    }
    let j = skip_ws(text, string_end(text, i)?);
    (text.get(j) == Some(&b':')).then(|| skip_ws(text, j + 1))
}

/// The object key at `i` when written without escapes (an escaped key may spell a key a reader
/// looks for: `None`, so the reader lets serde_json decide), and where its value starts.
pub fn plain_key(text: &str, i: usize) -> Option<(&str, usize)> {
    let line = text.as_bytes();
    if line.get(i) != Some(&b'"') {
        return None;
    }
    let end = string_end(line, i)?;
    let name = &text[i + 1..end - 1];
    if name.contains('\\') {
        return None;
    }
    let j = skip_ws(line, end);
    (line.get(j) == Some(&b':')).then(|| (name, skip_ws(line, j + 1)))
}

/// Calls `member(key, value_start) -> value_end` for each member of the object at `at` (keys
/// without escapes: an escaped key may spell a field read here). Returns the object's end.
pub fn members(
    text: &str,
    at: usize,
    mut member: impl FnMut(&str, usize) -> Option<usize>,
) -> Option<usize> {
    let line = text.as_bytes();
    if line.get(at) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(line, at + 1);
    if line.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (name, at) = plain_key(text, i)?;
        let end = member(name, at)?;
        i = skip_ws(line, end);
        match line.get(i)? {
            b',' => i = skip_ws(line, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The end of the string, number or literal at `i`.
#[inline]
fn scalar_end(text: &[u8], i: usize) -> Option<usize> {
    match text.get(i)? {
        b'"' => string_end(text, i),
        b'-' | b'0'..=b'9' => number_end(text, i),
        b't' => literal_end(text, i, b"true"),
        b'f' => literal_end(text, i, b"false"),
        b'n' => literal_end(text, i, b"null"),
        _ => None,
    }
}

/// The end (exclusive) of the JSON value starting at `i` (no whitespace before it).
pub fn value_end(text: &[u8], mut i: usize) -> Option<usize> {
    // Most values are scalars (a row's `null` defaults, ids, numbers): ended without setting up
    // the container stack below.
    if !matches!(text.get(i)?, b'{' | b'[') {
        return scalar_end(text, i);
    }
    // One flag per open container: `true` for an object.
    let mut open = [false; MAX_DEPTH];
    let mut depth = 0;
    'value: loop {
        i = match text.get(i)? {
            &b @ (b'{' | b'[') => {
                let j = skip_ws(text, i + 1);
                let close = if b == b'{' { b'}' } else { b']' };
                if text.get(j) == Some(&close) {
                    j + 1
                } else {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    open[depth] = b == b'{';
                    depth += 1;
                    i = if b == b'{' { key_colon(text, j)? } else { j };
                    continue 'value;
                }
            }
            _ => scalar_end(text, i)?,
        };
        // After a value: a comma goes on to the next one; a bracket closes its container.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = skip_ws(text, i);
            let in_object = open[depth - 1];
            match text.get(i)? {
                b',' => {
                    let j = skip_ws(text, i + 1);
                    i = if in_object { key_colon(text, j)? } else { j };
                    continue 'value;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            depth -= 1;
            i += 1;
        }
    }
}

/// Whether the value at `i` is already written as `serde_json` with orjson's number format writes
/// it (compact, the same escapes and number forms, no repeated keys), so that copying its bytes
/// gives what parsing and writing it again would. Returns its end when it is; `None` when unsure.
pub fn canonical_value_end(text: &[u8], mut i: usize) -> Option<usize> {
    // Per open container: `None` for an array, else the keys seen so far.
    let mut open: Vec<Option<Vec<&[u8]>>> = Vec::new();
    'value: loop {
        i = match text.get(i)? {
            b'"' => canonical_string_end(text, i)?,
            b'-' | b'0'..=b'9' => canonical_number_end(text, i)?,
            b't' => literal_end(text, i, b"true")?,
            b'f' => literal_end(text, i, b"false")?,
            b'n' => literal_end(text, i, b"null")?,
            &b @ (b'{' | b'[') => {
                let close = if b == b'{' { b'}' } else { b']' };
                if text.get(i + 1) == Some(&close) {
                    i + 2
                } else {
                    if open.len() == MAX_DEPTH {
                        return None;
                    }
                    open.push((b == b'{').then(Vec::new));
                    i += 1;
                    if b == b'{' {
                        i = canonical_key(text, i, &mut open)?;
                    }
                    continue 'value;
                }
            }
            _ => return None,
        };
        loop {
            let Some(top) = open.last() else {
                return Some(i);
            };
            let in_object = top.is_some();
            match text.get(i)? {
                b',' => {
                    i += 1;
                    if in_object {
                        i = canonical_key(text, i, &mut open)?;
                    }
                    continue 'value;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            open.pop();
            i += 1;
        }
    }
}

/// Objects with more keys than this are left to the parser (the repeated-key check is linear).
const CANONICAL_KEYS: usize = 64;

/// A key of the innermost open object and its `:`; a repeated key is not canonical (a parser
/// keeps one of them).
fn canonical_key<'t>(
    text: &'t [u8],
    i: usize,
    open: &mut [Option<Vec<&'t [u8]>>],
) -> Option<usize> {
    if text.get(i) != Some(&b'"') {
        return None;
    }
    let end = canonical_string_end(text, i)?;
    let keys = open.last_mut()?.as_mut()?;
    let key = &text[i..end];
    if keys.len() >= CANONICAL_KEYS || keys.contains(&key) {
        return None;
    }
    keys.push(key);
    (text.get(end) == Some(&b':')).then_some(end + 1)
}

/// A string whose escapes are exactly serde_json's: `\"`, `\\`, `\b \f \n \r \t`, and `\u00XX`
/// (lowercase) for the other control characters; nothing else escaped.
pub fn canonical_string_end(text: &[u8], i: usize) -> Option<usize> {
    scan_string(text, i, canonical_escape_end)
}

/// The end of the escape at `k` when serde_json writes it so.
fn canonical_escape_end(text: &[u8], k: usize) -> Option<usize> {
    match text.get(k + 1)? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(k + 2),
        b'u' => {
            let hex = text.get(k + 2..k + 6)?;
            let unit = hex4(text, k + 2)?;
            let short = matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D);
            let lowercase = !hex.iter().any(u8::is_ascii_uppercase);
            (unit < 0x20 && !short && lowercase).then_some(k + 6)
        }
        _ => None,
    }
}

/// An integer of at most 18 digits other than `-0`, or a float written as orjson writes it.
fn canonical_number_end(text: &[u8], i: usize) -> Option<usize> {
    let end = number_end(text, i)?;
    let token = &text[i..end];
    let is_int = token.iter().all(|&b| b.is_ascii_digit() || b == b'-');
    if is_int {
        return (token != b"-0" && token.len() <= 18).then_some(end);
    }
    let value: f64 = std::str::from_utf8(token).ok()?.parse().ok()?;
    let mut written = Vec::with_capacity(token.len());
    crate::json::write_f64(&mut written, value).ok()?;
    (written == token).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Skip;

    /// What serde_json says of a whole text as one value (the oracle).
    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<Skip>(text).is_ok()
    }

    fn skim_accepts(text: &str) -> bool {
        let b = text.as_bytes();
        !has_control_bytes(b) && value_end(b, 0) == Some(b.len())
    }

    #[test]
    fn accepts_only_what_serde_json_accepts() {
        let cases = [
            r#"{"a":[1,2,{"b":"c\"d\\e\u00e9\ud83d\ude00"}],"n":null,"t":true,"f":false}"#,
            r#"{ "a" : [ ] , "b" : { } }"#,
            r#""plain""#,
            r"-0.5e-3",
            r"123456789012345678901234567890",
            r"1e400",
            r"01",
            r"1.",
            r".5",
            r"-",
            r"1e",
            r"[1,]",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r"{1:2}",
            r#"["\ud800"]"#,
            r#"["\udc00"]"#,
            r#"["\ud800\u0041"]"#,
            r#"["\x"]"#,
            r#"["\u12g4"]"#,
            r"tru",
            r"nul",
            r"[1 2]",
            r#"{"a":1]"#,
            r"[[[]]]",
            r#""unterminated"#,
        ];
        for case in cases {
            if skim_accepts(case) {
                assert!(
                    serde_accepts(case),
                    "skim accepted what serde refuses: {case}"
                );
            }
        }
        // The common shapes take the fast path at all.
        for case in &cases[..5] {
            assert!(skim_accepts(case), "{case}");
        }
        // Without an exponent only hundreds of integer digits can overflow (those are parsed).
        let huge = format!("1{}", "0".repeat(310));
        assert!(!skim_accepts(&huge) && !serde_accepts(&huge));
        let long = format!("-1{}.5", "0".repeat(299));
        assert!(skim_accepts(&long) && serde_accepts(&long));
    }

    #[test]
    fn canonical_text_is_what_writing_the_parsed_value_gives() {
        let cases = [
            r#"{"a":[1,-2,{"b":"c\"d\\e\n\u0001é😀"}],"n":null,"t":true,"f":1.5,"g":1e-7,"h":{}}"#,
            r#"{"a": 1}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u001F"}"#,
            r#"{"a":"\u000a"}"#,
            r#"{"a":1.0e2}"#,
            r#"{"a":100.0}"#,
            r#"{"a":0.10}"#,
            r#"{"a":-0}"#,
            r#"{"a":12345678901234567890}"#,
            "[1,2]",
        ];
        for case in cases {
            let value: serde_json::Value = serde_json::from_str(case).unwrap();
            let mut written = Vec::new();
            crate::json::to_writer_orjson(&mut written, &value).unwrap();
            let canonical = canonical_value_end(case.as_bytes(), 0) == Some(case.len());
            if canonical {
                assert_eq!(String::from_utf8(written).unwrap(), case);
            }
        }
        assert!(canonical_value_end(cases[0].as_bytes(), 0).is_some());
        assert!(canonical_value_end(cases[8].as_bytes(), 0).is_some());
    }

    #[test]
    fn deep_nesting_is_left_to_serde() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(value_end(deep.as_bytes(), 0), None);
        let ok = format!("{}{}", "[".repeat(50), "]".repeat(50));
        assert_eq!(value_end(ok.as_bytes(), 0), Some(100));
    }

    /// Byte by byte: the definition the block scanner must agree with.
    fn string_end_byte_by_byte(
        text: &[u8],
        i: usize,
        escape: fn(&[u8], usize) -> Option<usize>,
    ) -> Option<usize> {
        let mut j = i + 1;
        loop {
            match text.get(j)? {
                b'"' => return Some(j + 1),
                b'\\' => j = escape(text, j)?,
                _ => j += 1,
            }
        }
    }

    #[test]
    fn string_ends_agree_with_the_byte_by_byte_scan_across_blocks() {
        // Escape-dense strings of every length around the 64-byte blocks, escapes and `\u`
        // pairs straddling a block's end, invalid escapes, unterminated strings.
        // The first seven pieces are also serde_json's own escapes (canonical); the pair is not.
        let pieces: [&str; 12] = [
            "a",
            "\\\"",
            "\\\\",
            "\\n",
            "\\u001f",
            "\u{e9}",
            "/",
            "\\ud83d\\ude00",
            "\\ud83d",
            "\\x",
            "\"",
            "\\u12",
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..40_000 {
            // Odd rounds: canonical strings (but for the rare pieces), for `canonical_string_end`.
            let common = if round % 2 == 1 { 7 } else { 8 };
            let mut text = " ".repeat(rng.usize(0..70));
            let start = text.len();
            text.push('"');
            for _ in 0..rng.usize(0..90) {
                // Mostly pieces of a valid string; the last four (a lone surrogate, an invalid
                // escape, a quote, a cut `\u`) now and then.
                let rare = rng.usize(0..40) == 0;
                let n = if rare {
                    rng.usize(8..12)
                } else {
                    rng.usize(0..common)
                };
                text.push_str(pieces[n]);
            }
            let bytes = text.as_bytes();
            assert_eq!(
                string_end(bytes, start),
                string_end_byte_by_byte(bytes, start, escape_end),
                "{text}"
            );
            assert_eq!(
                canonical_string_end(bytes, start),
                string_end_byte_by_byte(bytes, start, canonical_escape_end),
                "{text}"
            );
        }
    }

    #[test]
    fn control_bytes_are_found_anywhere() {
        assert!(!has_control_bytes(&[b'a'; 200]));
        let mut text = vec![b'a'; 200];
        text[131] = b'\t';
        assert!(has_control_bytes(&text));
    }

    #[test]
    fn a_value_ends_before_what_follows_it() {
        let text = br#"{"a":"x"} ,"#;
        assert_eq!(value_end(text, 0), Some(9));
        assert_eq!(value_end(br"12,", 0), Some(2));
        assert_eq!(value_end(br"true}", 0), Some(4));
    }
}
