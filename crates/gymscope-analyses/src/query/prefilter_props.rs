//! The prefilter never changes an answer: on generated rows whose text is written with every
//! escape JSON allows (`\uXXXX` in either hex case, short escapes, surrogate pairs, `\/`), with
//! Unicode that folds onto ASCII (KELVIN SIGN, LONG S) and needles cut from the decoded text so
//! that they span escapes, a query with its prefilter matches exactly the rows it matches without.

use super::{read_keyed, Query, RunFacts};

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

const ALPHABET: &[char] = &[
    'a', 'b', 'e', 'k', 's', 'z', 'A', 'E', 'K', 'S', 'Z', '0', '7', ' ', '-', '.', '"', '\\', '/',
    '\n', '\t', '\u{1}', '\u{1b}', 'é', 'É', '\u{212A}', '\u{17F}', 'ß', '😀', '\u{2028}',
];

/// `c` as JSON may write it, chosen at random among the forms allowed.
fn encode(c: char, rng: &mut Rng, out: &mut String) {
    let u = |v: u32, rng: &mut Rng| {
        let s = format!("\\u{v:04x}");
        if rng.below(2) == 0 {
            s
        } else {
            s.to_uppercase().replace("\\U", "\\u")
        }
    };
    match (c, rng.below(3)) {
        ('"', 0) => out.push_str("\\\""),
        ('\\', 0) => out.push_str("\\\\"),
        ('/', 0) => out.push_str("\\/"),
        ('\n', 0) => out.push_str("\\n"),
        ('\t', 0) => out.push_str("\\t"),
        (c, 1) if (c as u32) > 0xFFFF => {
            let v = c as u32 - 0x10000;
            out.push_str(&u(0xD800 + (v >> 10), rng));
            out.push_str(&u(0xDC00 + (v & 0x3FF), rng));
        }
        (c, 1) => out.push_str(&u(c as u32, rng)),
        ('"' | '\\' | '\n' | '\t' | '\u{1}' | '\u{1b}', _) => out.push_str(&u(c as u32, rng)),
        ('/', _) => out.push('/'),
        (c, _) => out.push(c),
    }
}

fn expressions(needle: &str, scope: &str) -> Vec<String> {
    let quoted = super::string_literal(needle);
    let mut out = vec![
        format!("{scope} ~ {quoted}"),
        format!("{scope} ~ {quoted} or prompt ~ \"zzqq\""),
        format!("reward == 1 and {scope} ~ {quoted}"),
    ];
    if !needle.contains(['/', '\n', '\t']) {
        let re = regex::escape(needle);
        out.push(format!("{scope} ~ /{re}/"));
        out.push(format!("{scope} ~ /{re}/i"));
        out.push(format!("{scope} ~ /(?:{re})+x?|qqq/i"));
        out.push(format!("{scope} ~ /\\b{re}/"));
    }
    out
}

#[test]
fn prefiltered_matching_is_unfiltered_matching_on_generated_text() {
    let mut rng = Rng(0x5EED_0043);
    let facts = RunFacts {
        pass_threshold: 1.0,
        ..RunFacts::default()
    };
    let (mut checked, mut matched, mut rejected) = (0, 0, 0);
    for _ in 0..400 {
        let text: String = (0..=rng.below(24))
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        let mut encoded = String::new();
        for c in text.chars() {
            encode(c, &mut rng, &mut encoded);
        }
        let line = format!(
            r#"{{"_ng_task_index":0,"_ng_rollout_index":0,"reward":1,"response":{{"output":[{{"type":"message","content":[{{"type":"output_text","text":"{encoded}"}}]}},{{"type":"function_call","name":"f","arguments":"{encoded}"}}]}}}}"#
        );
        let row = read_keyed(line.as_bytes()).unwrap().unwrap();
        let chars: Vec<char> = text.chars().collect();
        for _ in 0..6 {
            // A needle cut from the text (it spans whatever escapes the text got), changed in
            // case half the time; or letters the text may not hold.
            let needle: String = if rng.below(4) == 0 {
                (0..=rng.below(4))
                    .map(|_| ALPHABET[rng.below(12)])
                    .collect()
            } else {
                let start = rng.below(chars.len());
                let end = start + 1 + rng.below(chars.len() - start);
                let cut: String = chars[start..end].iter().collect();
                if rng.below(2) == 0 {
                    cut.to_uppercase()
                } else {
                    cut
                }
            };
            for scope in ["output", "text", "args"] {
                for expr in expressions(&needle, scope) {
                    let Ok(q) = Query::parse(&expr) else {
                        continue;
                    };
                    let slow = q.matches_slowly(line.as_bytes(), row.clone(), &facts);
                    let fast = q
                        .matches(line.as_bytes(), row.clone(), &facts, &[])
                        .is_some();
                    assert_eq!(fast, slow, "{expr} on {line}");
                    checked += 1;
                    matched += usize::from(slow);
                    rejected += usize::from(!q.may_match(line.as_bytes()));
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
    // Both answers were exercised, and the prefilter did reject rows.
    assert!(
        matched > checked / 10 && rejected > checked / 10,
        "{matched} {rejected} of {checked}"
    );
}
