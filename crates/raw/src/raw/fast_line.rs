//! A fast reader for the common shape of an event line: one JSON object whose fields are plain
//! strings, null, the tenders array and anything else (skipped, but checked to be valid JSON).
//!
//! It accepts only what the careful reader (`slow_line`, on serde_json) would accept with the same
//! result, and gives up (None) on anything unusual: an escape in any string, a duplicate field, a
//! number that is not a plain 64-bit integer, a value of an unexpected type, deep nesting or
//! trailing text. The careful reader then gives the contract's reason for a bad line. A
//! differential test holds the two to the same answers over many thousands of mutated lines.

use super::line::{Line, Tender};
use std::borrow::Cow;

/// The line's fields, or None when serde_json must decide.
pub(super) fn parse(line: &str) -> Option<Line<'_>> {
    let mut r = JsonReader::new(line);
    let mut out = Line::default();
    // Fields met so far: serde rejects a duplicate, even of a null.
    let mut seen = 0u16;
    r.ws();
    r.object(|r, key| {
        let field = match key {
            "event_id" => 0,
            "basket_id" => 1,
            "store_id" => 2,
            "till_id" => 3,
            "event_ts" => 4,
            "uploaded_at" => 5,
            "currency" => 6,
            "tenders" => 7,
            _ => 8,
        };
        if field < 8 {
            if seen & 1 << field != 0 {
                return None;
            }
            seen |= 1 << field;
        }
        match field {
            8 => r.skip_value(0)?,
            // A null reads as a missing field, as serde reads an Option.
            7 => out.tenders = if r.null() { None } else { Some(r.tenders()?) },
            _ => {
                let value = if r.null() { None } else { Some(Cow::Borrowed(r.plain_string()?)) };
                *match field {
                    0 => &mut out.event_id,
                    1 => &mut out.basket_id,
                    2 => &mut out.store_id,
                    3 => &mut out.till_id,
                    4 => &mut out.event_ts,
                    5 => &mut out.uploaded_at,
                    _ => &mut out.currency,
                } = value;
            }
        }
        Some(())
    })?;
    r.ws();
    (r.i == r.s.len()).then_some(out)
}

/// Whether the line is one JSON value of the plain kind this reader checks (no escape, no long
/// number, not deep): true means serde_json would read it; false means ask serde_json.
pub(super) fn is_plain_json(line: &str) -> bool {
    let mut r = JsonReader::new(line);
    r.ws();
    if r.skip_value(0).is_none() {
        return false;
    }
    r.ws();
    r.i == r.s.len()
}

/// A cursor over one line of JSON, for readers of the common shape (this one, and a model's in
/// `model::read`): each step returns None when the careful reader must decide.
pub struct JsonReader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> JsonReader<'a> {
    pub fn new(line: &'a str) -> JsonReader<'a> {
        JsonReader { s: line.as_bytes(), text: line, i: 0 }
    }

    /// Whether the whole line has been read.
    pub fn at_end(&self) -> bool {
        self.i == self.s.len()
    }

    pub fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    pub fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    pub fn null(&mut self) -> bool {
        if self.s[self.i..].starts_with(b"null") {
            self.i += 4;
            true
        } else {
            false
        }
    }

    /// A string without escapes or control characters, borrowed from the line.
    pub fn plain_string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let end = start + special_byte(&self.s[start..])?;
        if self.s[end] != b'"' {
            return None; // an escape or a control character: serde_json decides
        }
        self.i = end + 1;
        // The quote is ASCII, so both ends are character boundaries.
        Some(&self.text[start..end])
    }

    /// `[{"method": .., "amount_minor": ..}, ..]`: other fields of a tender are skipped.
    fn tenders(&mut self) -> Option<Vec<Tender<'a>>> {
        let mut out = Vec::with_capacity(2);
        self.array(|r| {
            out.push(r.tender()?);
            Some(())
        })?;
        Some(out)
    }

    fn tender(&mut self) -> Option<Tender<'a>> {
        let mut t = Tender::default();
        let (mut seen_method, mut seen_amount) = (false, false);
        self.object(|r, key| {
            match key {
                "method" => {
                    if std::mem::replace(&mut seen_method, true) {
                        return None;
                    }
                    t.method = if r.null() { None } else { Some(Cow::Borrowed(r.plain_string()?)) };
                }
                "amount_minor" => {
                    if std::mem::replace(&mut seen_amount, true) {
                        return None;
                    }
                    t.amount_minor = if r.null() { None } else { Some(serde_json::Number::from(r.int()?)) };
                }
                _ => r.skip_value(1)?,
            }
            Some(())
        })?;
        Some(t)
    }

    /// `{"key": value, ..}`: `field` reads each value (the reader stands at it, after the colon).
    pub fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.plain_string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            field(self, key)?;
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// `[value, ..]`: `item` reads each value (the reader stands at it).
    pub fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }

    /// A plain integer that fits in i64 (no fraction, exponent or leading zero), followed by a
    /// delimiter.
    pub fn int(&mut self) -> Option<i64> {
        let digits = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        let n = self.i - digits;
        // Up to 18 digits always fit in i64; a sign, a leading zero or more digits go to serde.
        if n == 0 || n > 18 || (n > 1 && self.s[digits] == b'0') {
            return None;
        }
        if !matches!(self.peek(), Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
            return None;
        }
        self.text[digits..self.i].parse().ok()
    }

    /// Skips one JSON value, checking that it is valid; None when unsure.
    pub fn skip_value(&mut self, depth: usize) -> Option<()> {
        if depth > 64 {
            return None;
        }
        match self.peek()? {
            b'"' => self.plain_string().map(|_| ()),
            b'{' => self.object(|r, _| r.skip_value(depth + 1)),
            b'[' => self.array(|r| r.skip_value(depth + 1)),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        if self.s[self.i..].starts_with(w) {
            self.i += w.len();
            Some(())
        } else {
            None
        }
    }

    /// A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?, at most 18 digits before the point. One with
    /// an exponent or more digits may be out of a double's range, which the careful reader
    /// refuses: it decides those.
    fn number(&mut self) -> Option<()> {
        if self.peek()? == b'-' {
            self.i += 1;
        }
        let start = self.i;
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(0)?,
            _ => return None,
        }
        if self.i - start > 18 {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits(1)?;
        }
        (!matches!(self.peek(), Some(b'e' | b'E'))).then_some(())
    }

    /// At least `min` digits.
    fn digits(&mut self, min: usize) -> Option<()> {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        (self.i - start >= min).then_some(())
    }
}

/// The position of the first quote, backslash or control character in `s`, eight bytes at a
/// time (a byte at a time it was a large share of a landing's CPU). In each word, the lowest byte
/// flagged by the zero-byte test is always a true match (a false flag needs a true match below
/// it), so the first flagged byte is exact.
fn special_byte(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
        let w = u64::from_le_bytes(chunk);
        let flagged = zero(w ^ (ONES * b'"' as u64)) | zero(w ^ (ONES * b'\\' as u64)) | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if flagged != 0 {
            return Some(i + (flagged.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map(|p| i + p)
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Lines to mutate: every line of the bundled sample world's first files, and lines with
    /// the rarer shapes (nulls, extra fields, whitespace, nested values).
    fn seeds() -> Vec<String> {
        let mut lines = vec![
            r#"{"event_id":"e1","basket_id":"b1","store_id":"LON1","till_id":"t1","event_ts":"2026-10-24T23:30:00.000Z","uploaded_at":"2026-10-24T23:31:00.000Z","currency":"GBP","tenders":[{"method":"card","amount_minor":3000000000},{"method":"cash","amount_minor":5}],"items":[{"sku":"x","qty":1,"unit_price_minor":3000000005}],"extra":true}"#.to_string(),
            r#" { "event_id" : "é€", "basket_id":null, "tenders" : [ { "amount_minor" : 0 , "note": [1.5, -0, {"a": [] }, false] } ], "x": {} } "#.to_string(),
            r#"{"tenders":[],"currency":"INR","v":-12.75}"#.to_string(),
            "{}".to_string(),
        ];
        let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../sample-data");
        let mut files: Vec<_> = crate::raw::list_partitions(&world)
            .unwrap()
            .into_iter()
            .take(3)
            .flat_map(|d| crate::raw::list_files(&world, d).unwrap())
            .collect();
        files.truncate(4);
        for f in files {
            let text = String::from_utf8(crate::raw::decompress(&std::fs::read(f).unwrap()).unwrap().into_vec()).unwrap();
            lines.extend(text.lines().take(40).map(str::to_string));
        }
        lines
    }

    pub const TOKENS: &[&str] = &[
        "\"",
        "\\",
        "\\u0041",
        "\\n",
        ",",
        ":",
        "{",
        "}",
        "[",
        "]",
        "null",
        "true",
        "false",
        " ",
        "\t",
        "\r\n",
        "-",
        "0",
        "01",
        "7",
        "1.5",
        "1e5",
        "-3",
        "9223372036854775807",
        "99999999999999999999",
        "\u{1}",
        "é",
        "\"event_id\":\"x\",",
        "\"tenders\":null,",
        "\"tenders\":[{\"amount_minor\":1}],",
        "\"method\":\"card\",",
        "\"amount_minor\":null,",
        "\"amount_minor\":12,",
        "\"q\":[[[[1]]]],",
        "nul",
        "tru",
        "\"a\":1 2,",
        "}}",
        "x",
    ];

    /// `line` with one to three random cuts, inserted tokens or repeated stretches.
    pub fn mutate(line: &str, rng: &mut impl Rng) -> String {
        let mut s = line.to_string();
        for _ in 0..rng.random_range(1..=3) {
            let cuts: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
            let at = cuts[rng.random_range(0..cuts.len())];
            match rng.random_range(0..4) {
                0 => {
                    let end = cuts.iter().copied().find(|&c| c > at + rng.random_range(0..4)).unwrap_or(s.len());
                    s.replace_range(at..end, "");
                }
                1 | 2 => s.insert_str(at, TOKENS[rng.random_range(0..TOKENS.len())]),
                _ => {
                    // Repeat a stretch of the line: duplicate fields, doubled values.
                    let end = cuts.iter().copied().find(|&c| c >= at + rng.random_range(1..40)).unwrap_or(s.len());
                    let piece = s[at..end].to_string();
                    s.insert_str(end, &piece);
                }
            }
        }
        s
    }

    #[test]
    fn the_word_scan_finds_the_first_quote_backslash_or_control_character() {
        // Every position in a word and past it, each special byte, behind plain ASCII and UTF-8.
        for len in 0..20 {
            for special in [b'"', b'\\', 0x00, 0x1f] {
                for filler in ["a", "é"] {
                    let mut s: Vec<u8> = filler.repeat(len).into_bytes();
                    let at = s.len();
                    s.push(special);
                    s.extend_from_slice(b"x\"\\\x01tail");
                    assert_eq!(special_byte(&s), Some(at), "{len} {special} {filler}");
                }
            }
            let plain = " ~\x7f".repeat(len).into_bytes();
            assert_eq!(special_byte(&plain), None);
        }
    }

    #[test]
    fn the_fast_reader_agrees_with_serde_json_or_gives_up() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20261130);
        let seeds = seeds();
        assert!(seeds.len() > 100, "sample lines to mutate");
        // True when the fast reader took the line (and then agreed with serde_json).
        let check = |line: &str| -> bool {
            let careful = super::super::slow_line::read(line);
            let Some(got) = parse(line) else { return false };
            match careful {
                Ok(want) => assert_eq!(got, want, "different fields for {line}"),
                Err(e) => panic!("the fast reader accepted a line the careful reader rejects ({e}): {line}"),
            }
            true
        };
        assert!(seeds.iter().all(|l| check(l)), "every seed line is read by the fast reader");
        let total = 60_000;
        let fast = (0..total).filter(|i| check(&mutate(&seeds[i % seeds.len()], &mut rng))).count();
        // The mutations must reach both sides: lines the fast reader takes and lines it leaves.
        assert!(fast > 5_000 && total - fast > 5_000, "fast {fast} of {total}");
    }
}
