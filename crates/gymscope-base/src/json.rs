//! JSON details that upstream (Python's `orjson`) and `serde_json` disagree on, kept in one place:
//! number kinds, float formatting, the `-0` integer literal, and a skipper that still validates.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::io;

/// A JSON number as orjson reads it: an integer when the literal is one and fits i64/u64,
/// otherwise a float. Bools are folded into `Int` (upstream applies `int(v)`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Num {
    Int(i64),
    /// Only for integers above `i64::MAX`: pandas gives such a column a non-int64 dtype.
    UInt(u64),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::UInt(v) => v as f64,
            Num::Float(v) => v,
        }
    }

    pub fn from_u64(v: u64) -> Num {
        i64::try_from(v).map_or(Num::UInt(v), Num::Int)
    }

    /// Writes the number as orjson would.
    pub fn write_json<W: io::Write>(self, w: &mut W) -> io::Result<()> {
        match self {
            Num::Int(v) => w.write_all(itoa::Buffer::new().format(v).as_bytes()),
            Num::UInt(v) => w.write_all(itoa::Buffer::new().format(v).as_bytes()),
            Num::Float(v) => write_f64(w, v),
        }
    }
}

/// A serde_json number as [`Num`]: an integer when it is one (`u64` above `i64::MAX`), else a
/// float.
pub fn number_to_num(n: &serde_json::Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i)
    } else if let Some(u) = n.as_u64() {
        Num::UInt(u)
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// orjson's float output: shortest round-trip digits in ryu's layout (`100.0`, `1.5e-7`,
/// `0.00001`), a positive exponent with its sign (`1e+16`: orjson 3.11.7 and later, which NeMo
/// Gym v0.7.0 installs); non-finite values become `null`.
pub fn write_f64<W: io::Write>(w: &mut W, v: f64) -> io::Result<()> {
    // Whole numbers (rewards, token counts, most statistics) are most of a profile's floats:
    // ryu writes those below 1e16 as the integer and `.0`, which itoa writes several times
    // faster. -0.0 is left to ryu (`-0.0`).
    if v.fract() == 0.0 && v.abs() < 1e16 && (v != 0.0 || v.is_sign_positive()) {
        w.write_all(itoa::Buffer::new().format(v as i64).as_bytes())?;
        return w.write_all(b".0");
    }
    if v.is_finite() {
        write_finite(w, v)
    } else {
        w.write_all(b"null")
    }
}

/// ryu's shortest digits with orjson's `e+` on a positive exponent (ryu writes `1e16`).
fn write_finite<W: ?Sized + io::Write>(w: &mut W, v: f64) -> io::Result<()> {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(v).as_bytes();
    match memchr::memchr(b'e', text) {
        Some(e) if text.get(e + 1) != Some(&b'-') => {
            w.write_all(&text[..=e])?;
            w.write_all(b"+")?;
            w.write_all(&text[e + 1..])
        }
        _ => w.write_all(text),
    }
}

/// serde_json formatter that writes floats the way orjson does; everything else (compact layout,
/// escapes of `"`, `\` and U+0000..U+001F only, lowercase `\u00XX`) already matches orjson.
#[derive(Clone, Copy, Default)]
pub struct OrjsonFormatter;

impl serde_json::ser::Formatter for OrjsonFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        write_finite(w, v)
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(v))
    }
}

/// Serializes any value compactly with orjson's number formatting.
pub fn to_writer_orjson<W: io::Write, T: serde::Serialize + ?Sized>(
    w: &mut W,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, OrjsonFormatter);
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// Serializes any value as orjson's `OPT_INDENT_2` writes it (2-space indent, no final newline).
pub fn to_writer_orjson_pretty<W: io::Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
) -> io::Result<()> {
    let formatter = OrjsonPretty(serde_json::ser::PrettyFormatter::new());
    let mut ser = serde_json::Serializer::with_formatter(w, formatter);
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// serde_json's pretty layout (which is orjson's `OPT_INDENT_2`) with orjson's float digits.
pub struct OrjsonPretty<'a>(serde_json::ser::PrettyFormatter<'a>);

impl serde_json::ser::Formatter for OrjsonPretty<'_> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        OrjsonFormatter.write_f64(w, v)
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Writes `s` as a JSON string literal.
pub fn write_str<W: io::Write>(w: &mut W, s: &str) -> io::Result<()> {
    to_writer_orjson(w, s)
}

/// Sorted-key compact JSON: every object's keys sorted by code point, recursively, no
/// whitespace, strings and numbers as `serde_json` writes them. The form gymscope hashes and
/// compares values in (a task's identity across runs, a call's arguments, a pivot's id).
pub fn write_sorted(v: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut members: Vec<(&str, &Value)> =
                map.iter().map(|(k, v)| (k.as_str(), v)).collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            write_members(out, members, |out, v| write_sorted(v, out));
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_sorted(item, out);
            }
            out.push(b']');
        }
        other => serde_json::to_writer(&mut *out, other).expect("writing to a Vec cannot fail"),
    }
}

/// A compact JSON object of `(key, value)` members in their order, each value written by
/// `write` (sort them first for [`write_sorted`]'s form).
pub fn write_members<'k, T>(
    out: &mut Vec<u8>,
    members: impl IntoIterator<Item = (&'k str, T)>,
    mut write: impl FnMut(&mut Vec<u8>, T),
) {
    out.push(b'{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, k).expect("writing to a Vec cannot fail");
        out.push(b':');
        write(out, v);
    }
    out.push(b'}');
}

/// [`write_sorted`] as a `String`.
pub fn sorted_string(v: &serde_json::Value) -> String {
    let mut out = Vec::new();
    write_sorted(v, &mut out);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json reads the integer literal `-0` as the float `-0.0`; orjson reads it as the integer
/// `0`. Returns a copy of `line` with every `-0` integer token (outside strings) replaced by ` 0`,
/// or `None` when the line has none. Only called for lines where a `-0.0` was seen, so the
/// common path never pays for it. `line` must be valid JSON.
pub fn rewrite_negative_zero_ints(line: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'-' && line.get(i + 1) == Some(&b'0') {
            let next = line.get(i + 2).copied();
            let is_int_token = !matches!(next, Some(b'.' | b'e' | b'E' | b'0'..=b'9'));
            if is_int_token {
                out.get_or_insert_with(|| line.to_vec())[i] = b' ';
            }
        }
        i += 1;
    }
    out
}

/// Deserializes and discards any JSON value while still rejecting what orjson rejects
/// (lone surrogates, out-of-range numbers), which serde's `IgnoredAny` lets through.
/// Strings without escapes are borrowed, not copied.
pub struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_none<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

/// A JSON value reduced to what profiling needs: its number (bools as 0/1), or nothing.
pub struct MaybeNum(pub Option<Num>);

impl<'de> de::Deserialize<'de> for MaybeNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeNum;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(Num::Int(i64::from(v)))))
            }
            fn visit_i64<E>(self, v: i64) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(Num::Int(v))))
            }
            fn visit_u64<E>(self, v: u64) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(Num::from_u64(v))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(Num::Float(v))))
            }
            fn visit_str<E>(self, _: &str) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_unit<E>(self) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_none<E>(self) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MaybeNum, A::Error> {
                SkipVisitor.visit_seq(seq).map(|_| MaybeNum(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MaybeNum, A::Error> {
                SkipVisitor.visit_map(map).map(|_| MaybeNum(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// What a JSON value is, for messages that say what was found instead of an expected integer.
pub fn describe(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() >= 9.2e18 {
                "a number beyond 64 bits"
            } else {
                "a float"
            }
        }
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a raw JSON token is, from its text: like [`describe`], and it can tell an integer beyond
/// 64 bits (`123456789012345678901`) from a float. Meant for tokens that are not an `i64`.
pub fn describe_token(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a bool",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ if text.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
            "an integer out of the 64-bit range"
        }
        _ => "a float",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_sorted_sorts_keys_recursively() {
        let v = serde_json::json!({"b": [{"z": 1, "a": "x"}], "a": null});
        let mut out = Vec::new();
        write_sorted(&v, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":null,"b":[{"a":"x","z":1}]}"#
        );
    }

    /// The whole-number shortcut writes exactly what ryu writes (with orjson's `e+`), around
    /// every edge it has.
    #[test]
    fn whole_floats_are_written_as_ryu_writes_them() {
        let ryu = |v: f64| {
            let text = ryu::Buffer::new().format_finite(v).to_string();
            if text.contains("e-") {
                text
            } else {
                text.replace('e', "e+")
            }
        };
        let ours = |v: f64| {
            let mut out = Vec::new();
            write_f64(&mut out, v).unwrap();
            String::from_utf8(out).unwrap()
        };
        let mut cases = vec![
            0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e15, 1e16, -1e16, 1e17, 1e300,
        ];
        cases.extend([
            9_999_999_999_999_998.0,
            9_007_199_254_740_993.0,
            123_456_789.0,
        ]);
        cases.extend([f64::MIN_POSITIVE, 4.9e-324, f64::MAX, -f64::MAX, 1e16 - 2.0]);
        let mut x = 0x9E37_79B9_7F4A_7C15u64; // a fixed walk over every exponent
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                cases.extend([v, v.trunc(), (v % 1e17).trunc()]);
            }
        }
        for i in 0..100_000i64 {
            cases.extend([i as f64, -(i as f64), (i * 977_777_777) as f64]);
        }
        for v in cases {
            assert_eq!(ours(v), ryu(v), "{v:e}");
        }
        assert_eq!(ours(f64::NAN), "null");
    }

    fn fmt(v: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_format_like_orjson() {
        assert_eq!(fmt(100.0), "100.0");
        assert_eq!(fmt(1e15), "1000000000000000.0");
        assert_eq!(fmt(1e16), "1e+16");
        assert_eq!(fmt(1.2345e16), "1.2345e+16");
        assert_eq!(fmt(-2.5e300), "-2.5e+300");
        assert_eq!(fmt(1e-6), "1e-6");
        assert_eq!(fmt(2.5e-8), "2.5e-8");
        assert_eq!(fmt(0.00001), "0.00001");
        assert_eq!(fmt(0.000012345), "0.000012345");
        assert_eq!(fmt(-0.0), "-0.0");
        assert_eq!(fmt(1.5e300), "1.5e+300");
        assert_eq!(fmt(18446744073709551616.0), "1.8446744073709552e+19");
        assert_eq!(fmt(f64::INFINITY), "null");
    }

    #[test]
    fn negative_zero_integer_tokens_are_rewritten_outside_strings() {
        let line = br#"{"a":-0,"b":"x-0","c":[-0.0,-0e1,-0]}"#;
        let fixed = rewrite_negative_zero_ints(line).unwrap();
        assert_eq!(fixed, br#"{"a": 0,"b":"x-0","c":[-0.0,-0e1, 0]}"#.to_vec());
        assert!(rewrite_negative_zero_ints(br#"{"a":"-0","b":-0.0}"#).is_none());
    }

    #[test]
    fn skip_rejects_what_orjson_rejects() {
        assert!(serde_json::from_str::<Skip>(r#"{"a":["\ud800"]}"#).is_err());
        assert!(serde_json::from_str::<Skip>(r#"{"a":1e400}"#).is_err());
        assert!(serde_json::from_str::<Skip>(r#"{"a":[1,{"b":"\ud83d\ude00"}]}"#).is_ok());
    }
}
