//! Deep JSON: Python's `json` reads nesting far deeper than serde_json's default 128 levels
//! (upstream accepts 300; Python 3.13 reaches about 10,000). Rows are measured first by an
//! iterative scan, so any depth is safe to measure; rows up to [`MAX_DEPTH`] are then parsed
//! without serde_json's limit on a thread with a stack sized for them, deeper ones are refused
//! with their column.
//!
//! In the browser (wasm32) the worker's stack cannot grow: the limit stays at 128 there.

use serde::de::DeserializeOwned;

/// serde_json's own limit: rows within it are parsed on the caller's stack.
pub const SHALLOW: usize = 128;

/// The deepest nesting accepted.
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_DEPTH: usize = 10_000;
#[cfg(target_arch = "wasm32")]
pub const MAX_DEPTH: usize = SHALLOW;

/// Stack for a row deeper than [`SHALLOW`]: generous for 10,000 levels of parsing, checking,
/// formatting and dropping even in a debug build (only the pages used are committed).
#[cfg(not(target_arch = "wasm32"))]
const DEEP_STACK: usize = 512 << 20;

/// How deep a JSON text nests (arrays and objects, strings skipped), and the byte offset of the
/// first bracket beyond `MAX_DEPTH`, if any. Invalid JSON is measured as far as it goes; the
/// parser reports it.
pub fn measure(text: &[u8]) -> (usize, Option<usize>) {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_string {
            // Most of a row is string bytes: jump to the next quote or escape.
            let Some(at) = memchr::memchr2(b'"', b'\\', &text[i..]) else {
                break;
            };
            i += at;
            match text[i] {
                b'\\' => i += 1,
                _ => in_string = false,
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return (depth, Some(i));
                    }
                    max = max.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
    (max, None)
}

/// A serde_json deserializer for a text already measured within [`MAX_DEPTH`]: natively without
/// serde_json's recursion limit (the caller is on a deep stack when the text is deep).
pub fn deserializer(text: &str) -> serde_json::Deserializer<serde_json::de::StrRead<'_>> {
    #[allow(unused_mut)]
    let mut de = serde_json::Deserializer::from_str(text);
    #[cfg(not(target_arch = "wasm32"))]
    de.disable_recursion_limit();
    de
}

/// `serde_json::from_str` through [`deserializer`].
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let mut de = deserializer(text);
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Runs `f` where a text of `depth` levels can be handled: on this stack when shallow, else on a
/// scoped thread with a deep stack (natively; wasm32 never gets past [`SHALLOW`]). `None` when
/// no such thread can be started (the caller reports the row instead of risking the stack).
pub fn with_stack_for<R: Send>(depth: usize, f: impl FnOnce() -> R + Send) -> Option<R> {
    #[cfg(not(target_arch = "wasm32"))]
    if depth > SHALLOW {
        return std::thread::scope(|s| {
            let handle = std::thread::Builder::new()
                .name("deep-json".into())
                .stack_size(DEEP_STACK)
                .spawn_scoped(s, f)
                .ok()?;
            Some(
                handle
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            )
        });
    }
    let _ = depth;
    Some(f())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_outside_strings_at_any_depth() {
        assert_eq!(measure(br#"{"a":[1,{"b":"[[[{"}]}"#), (3, None));
        assert_eq!(measure(br#"["\"[", ["\\"]]"#), (2, None));
        let deep = "[".repeat(MAX_DEPTH + 5);
        assert_eq!(measure(deep.as_bytes()), (MAX_DEPTH + 1, Some(MAX_DEPTH)));
    }

    /// The byte-by-byte scan `measure` jumps through strings to skip.
    fn measure_each_byte(text: &[u8]) -> (usize, Option<usize>) {
        let (mut depth, mut max, mut in_string, mut i) = (0usize, 0usize, false, 0);
        while i < text.len() {
            match (in_string, text[i]) {
                (true, b'\\') => i += 1,
                (_, b'"') => in_string = !in_string,
                (false, b'[' | b'{') => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return (depth, Some(i));
                    }
                    max = max.max(depth);
                }
                (false, b']' | b'}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        (max, None)
    }

    #[test]
    fn jumping_through_strings_measures_as_each_byte() {
        // Texts made of the bytes that matter, in every order a seeded walk makes.
        let alphabet = br#"[]{}"\a,:"#;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..400 {
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            assert_eq!(measure(&text), measure_each_byte(&text), "{text:?}");
        }
        let deep = format!("{}\"{}", "[".repeat(MAX_DEPTH + 2), "\\\"[".repeat(9));
        assert_eq!(measure(deep.as_bytes()), measure_each_byte(deep.as_bytes()));
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn parses_ten_thousand_levels_on_a_deep_stack() {
        let text = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let (depth, over) = measure(text.as_bytes());
        assert_eq!((depth, over), (MAX_DEPTH, None));
        let ok = with_stack_for(depth, || {
            let v: serde_json::Value = from_str(&text).unwrap();
            let out = v.to_string();
            drop(v);
            out == text
        });
        assert_eq!(ok, Some(true));
    }
}
