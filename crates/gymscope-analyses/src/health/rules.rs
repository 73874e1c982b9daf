//! The rules of the signals that both readings of a row apply — the `Value` reading
//! (`signals`) and the skimming one (`fast_values`) — so that the two cannot drift apart: what
//! is answer text in a content part, and when a tool's JSON answer is an error.

/// Whether a content part (its `type`, its `text` as JSON) carries non-blank answer text.
pub(super) fn text_part(kind: Option<&str>, text: Option<&str>) -> bool {
    matches!(kind, Some("output_text" | "text") | None)
        && text.is_some_and(|t| t.starts_with('"') && !blank_json_string(t))
}

/// Whether a JSON string literal (quotes included, valid JSON) holds only whitespace (as
/// `str::trim`): ASCII on the raw bytes, anything else on the decoded text.
pub(super) fn blank_json_string(raw: &str) -> bool {
    let inner = raw.as_bytes();
    let inner = &inner[1..inner.len().saturating_sub(1).max(1)];
    let mut i = 0;
    while i < inner.len() {
        match inner[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'\\' => match inner.get(i + 1) {
                Some(b'n' | b't' | b'r') => i += 2,
                Some(b'u') => return blank_decoded(raw),
                _ => return false,
            },
            // Unicode whitespace (no-break space, ...): decided on the decoded text.
            b if b >= 0x80 => return blank_decoded(raw),
            _ => return false,
        }
    }
    true
}

fn blank_decoded(raw: &str) -> bool {
    serde_json::from_str::<std::borrow::Cow<str>>(raw).is_ok_and(|t| t.trim().is_empty())
}

/// The error rule on a tool's answer that is a JSON object: a non-empty `error`, a `status` of
/// failed or error, a `detail`, or a non-zero `exit_code`.
pub(super) fn is_error_object(v: &serde_json::Value) -> bool {
    let non_empty = |e: &serde_json::Value| match e {
        serde_json::Value::Null | serde_json::Value::Bool(false) => false,
        serde_json::Value::String(s) => !s.trim().is_empty(),
        serde_json::Value::Object(m) => !m.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        _ => true,
    };
    v.get("error").is_some_and(non_empty)
        || v.get("status")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.eq_ignore_ascii_case("failed") || s.eq_ignore_ascii_case("error"))
        || v.get("detail").is_some_and(|d| !d.is_null())
        || v.get("exit_code")
            .is_some_and(|c| c.as_f64().is_some_and(|c| c != 0.0))
}
