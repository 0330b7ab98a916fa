//! Text from the data never reaches a terminal raw.

use std::borrow::Cow;

/// Replaces control characters (C0, DEL, C1) with U+FFFD so an escape sequence in a basket_id
/// cannot move the cursor or change colours.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(s.chars().map(|c| if c.is_control() { '\u{FFFD}' } else { c }).collect())
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_neutralised() {
        let evil = "B-1\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\u{9b}";
        let clean = for_terminal(evil);
        assert!(!clean.chars().any(char::is_control), "{clean:?}");
        assert!(clean.starts_with("B-1"));
        assert_eq!(for_terminal("plain £"), "plain £");
    }
}
