//! Text from the data never reaches a terminal raw.

use std::borrow::Cow;

/// Unicode's bidirectional controls: they reorder the text around them on screen, so a name can
/// be made to read as another (the "Trojan Source" trick).
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Characters that show nothing, or break a line, where a cell is one line of visible text:
/// zero-width spaces and joiners, the word joiner, a byte-order mark inside text, and Unicode's
/// line and paragraph separators. Two ids that differ only by one would look the same.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200d}' | '\u{2028}' | '\u{2029}' | '\u{2060}' | '\u{feff}')
}

fn unsafe_char(c: char) -> bool {
    c.is_control() || is_bidi(c) || is_invisible(c)
}

/// Replaces control characters (C0, DEL, C1), bidi controls and invisible characters with U+FFFD so an escape sequence
/// in a basket_id cannot move the cursor, change colours or reorder what is shown.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if s.chars().any(unsafe_char) {
        Cow::Owned(s.chars().map(|c| if unsafe_char(c) { '\u{FFFD}' } else { c }).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// JSON text with every character a terminal or an editor could act on written as a `\\uXXXX`
/// escape: serde_json escapes C0 controls but writes DEL, C1 controls and bidi controls as they
/// are. Such characters can only stand inside JSON strings, so the escape keeps the data exact.
pub fn json(text: String) -> String {
    // C0 controls stand only between tokens (the layout's newlines): serde escapes them in strings.
    let escape = |c: char| unsafe_char(c) && u32::from(c) >= 0x7f;
    if !text.chars().any(escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A CSV cell for a spreadsheet: no control or bidi character, and a cell that a spreadsheet
/// would take for a formula (it begins with `=`, `+`, `-` or `@`) gets a leading apostrophe, so
/// it is shown as the text it is. Numbers are written by the caller, not through this.
pub fn for_csv(s: &str) -> Cow<'_, str> {
    let clean = for_terminal(s);
    if clean.starts_with(['=', '+', '-', '@']) && !is_signed_phrase(&clean) { Cow::Owned(format!("'{clean}")) } else { clean }
}

/// A signed count in words (`+13 baskets`, `-£5.00 withdrawn in file v2`): a sign and an amount
/// as the first word, words after it, and none of the characters a formula is made of (calls,
/// references, strings, comparisons). A spreadsheet shows it as the text it is, so it needs no
/// apostrophe; `-1+2 x` and `+1 +cmd|' /C calc'!A0` still get one.
fn is_signed_phrase(s: &str) -> bool {
    let Some((first, words)) = s.split_once(' ') else { return false };
    let Some(amount) = first.strip_prefix(['+', '-']) else { return false };
    let formula = |c: char| "=(){}[]|!@\"'*/^&\\<>".contains(c);
    let numeric = |c: char| c.is_ascii_digit() || ",.£$€¥₹".contains(c);
    amount.chars().any(|c| c.is_ascii_digit())
        && amount.chars().all(numeric)
        && words.chars().any(char::is_alphabetic)
        && !words.chars().any(formula)
}

/// Whether a panic's message is Rust's print macros failing on a closed pipe (EPIPE), or a
/// writer (clap's completions) failing the same way.
pub fn is_broken_pipe(message: &str) -> bool {
    message.contains("Broken pipe") || message.contains("os error 32")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_are_text_and_json_escapes_what_serde_leaves() {
        assert_eq!(for_csv("=HYPERLINK(\"http://x\")"), "'=HYPERLINK(\"http://x\")");
        for f in ["+1", "-1+2", "@SUM(A1)"] {
            assert!(for_csv(f).starts_with('\''), "{f}");
        }
        assert_eq!(for_csv("B-1"), "B-1");
        // A signed count in words is text to a spreadsheet: no apostrophe.
        for phrase in ["+13 baskets", "-£5.00 withdrawn in file v2", "+7,216 baskets, +£1,309,792.66 added from upload 2026-10-02"] {
            assert_eq!(for_csv(phrase), phrase);
        }
        for formula in ["+1 +cmd|' /C calc'!A0", "-2+3 x", "+1 =SUM(A1)", "-1 \"x\""] {
            assert!(for_csv(formula).starts_with('\''), "{formula}");
        }
        // Invisible characters never reach a cell as they are.
        assert_eq!(for_terminal("B\u{200b}1\u{2028}"), "B\u{FFFD}1\u{FFFD}");
        assert_eq!(for_csv("a\u{1b}]52;c;x\u{7}"), "a\u{FFFD}]52;c;x\u{FFFD}");
        let v = serde_json::json!({ "id": "a\u{9b}b\u{202e}c\u{7f}" });
        let text = json(serde_json::to_string_pretty(&v).unwrap());
        assert!(!text.chars().any(|c| unsafe_char(c) && c != '\n'), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v, "the data is kept exactly");
    }

    #[test]
    fn escape_sequences_are_neutralised() {
        let evil = "B-1\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\u{9b}";
        let clean = for_terminal(evil);
        assert!(!clean.chars().any(char::is_control), "{clean:?}");
        assert!(clean.starts_with("B-1"));
        assert_eq!(for_terminal("plain £"), "plain £");
    }
}
