//! Python's `difflib.get_close_matches(word, possibilities, n=1)` (cutoff 0.6): the "did you
//! mean" of v0.7.0's messages about agents and task sources that are not in the config. The
//! ratio is `SequenceMatcher`'s: twice the matched characters over both lengths, matches found
//! as the longest common block, then recursively left and right of it (no junk: names are
//! shorter than the 200 characters where its auto-junk starts).

/// The best match scoring at least 0.6, ties going to the larger string (Python's `nlargest`
/// over `(score, string)`).
pub fn close_match<'a>(
    word: &str,
    possibilities: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let w: Vec<char> = word.chars().collect();
    let mut best: Option<(f64, &str)> = None;
    for p in possibilities {
        let x: Vec<char> = p.chars().collect();
        let total = (w.len() + x.len()) as f64;
        if total == 0.0 {
            continue;
        }
        let score = 2.0 * matched(&x, &w) as f64 / total;
        if score < 0.6 {
            continue;
        }
        if best.is_none_or(|(s, b)| score > s || (score == s && p > b)) {
            best = Some((score, p));
        }
    }
    best.map(|(_, p)| p)
}

/// Characters of `a` and `b` matched by SequenceMatcher (`a` the candidate, `b` the word, as
/// `get_close_matches` sets them: `set_seq2(word)`, `set_seq1(x)`).
fn matched(a: &[char], b: &[char]) -> usize {
    let (i, j, k) = longest_block(a, b);
    if k == 0 {
        return 0;
    }
    k + matched(&a[..i], &b[..j]) + matched(&a[i + k..], &b[j + k..])
}

/// `find_longest_match` without junk: the earliest longest block in `a`, then in `b`.
fn longest_block(a: &[char], b: &[char]) -> (usize, usize, usize) {
    let (mut best_i, mut best_j, mut best_k) = (0, 0, 0);
    // lengths[j + 1]: length of the match ending at a[i - 1], b[j].
    let mut prev = vec![0usize; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![0usize; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            if ca == cb {
                let k = prev[j] + 1;
                cur[j + 1] = k;
                if k > best_k {
                    (best_i, best_j, best_k) = (i + 1 - k, j + 1 - k, k);
                }
            }
        }
        prev = cur;
    }
    (best_i, best_j, best_k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_pythons_get_close_matches() {
        // Values from CPython 3.13: difflib.get_close_matches(w, ps, n=1).
        let ps = [
            "example_single_tool_call_simple_agent",
            "policy_model",
            "head_server",
        ];
        assert_eq!(
            close_match("example_single_tool_call_agent", ps),
            Some("example_single_tool_call_simple_agent")
        );
        assert_eq!(close_match("polcy_model", ps), Some("policy_model"));
        assert_eq!(close_match("zzz", ps), None);
        assert_eq!(
            close_match("ape", ["apple", "peach", "grape"]),
            Some("grape")
        );
        assert_eq!(close_match("", ["a"]), None);
    }
}
