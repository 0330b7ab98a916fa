//! The rules digest: the SQL of the rules and the Rust of gold's sums, read without comments or
//! layout, hashed into every input hash so that a change of rule rebuilds what it touches.

use super::*;

/// A short digest of the SQL that decides silver and gold: part of every input hash, so a
/// changed rule rebuilds instead of skipping. schema.sql holds the window rule (`in_window`).
/// The files are read as `sql_for_digest` reads them: an edit to a comment, or to how a
/// statement is laid out, leaves every date's hash as it was (it made every date of a lab
/// built before look stale, and rebuilt them all); an edit to the SQL itself does not.
/// Worked out once per process: a write's input hashes and its record both name it, and there
/// is no reason to read and hash the SQL twice.
pub fn rules_digest() -> String {
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| digest_of(rules_texts())).clone()
}

/// The texts of the SQL files the rules digest covers, in order.
pub(super) fn rules_texts() -> impl Iterator<Item = &'static str> {
    sql::FILES.iter().filter(|(file, _)| matches!(*file, "v2" | "snapshot" | "schema")).map(|(_, text)| *text)
}

/// The Rust code of gold's sums (`v2::GoldSums`), between its marks in crates/store/src/v2.rs.
pub(super) fn gold_rule_code() -> &'static str {
    rule_code(include_str!("v2.rs"))
}

/// The code between the lines `// gold's rule: begin` and `// gold's rule: end` of `source`
/// (all of it, should the marks be missing: a digest that changes too often is safe).
pub(super) fn rule_code(source: &str) -> &str {
    let begin = source.find("// gold's rule: begin").unwrap_or(0);
    let end = source[begin..].find("// gold's rule: end").map_or(source.len(), |e| begin + e);
    &source[begin..end]
}

/// `rules_digest` of the SQL files' texts, in order, and of gold's Rust code.
pub(super) fn digest_of<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    digest_with(texts, gold_rule_code())
}

pub(super) fn digest_with<'a>(texts: impl Iterator<Item = &'a str>, rust: &str) -> String {
    use md5::Digest;
    let mut h = md5::Md5::new();
    for text in texts {
        h.update(sql_for_digest(text).as_bytes());
    }
    h.update(rust_for_digest(rust).as_bytes());
    hex(&h.finalize())[..8].to_string()
}

/// Rust code without its lines that are only a comment (`//`, `///`), each run of whitespace one
/// space: an edit to a comment or to the layout leaves the digest as it was. A comment at the end
/// of a line of code counts (more often than needed, which is safe).
pub(super) fn rust_for_digest(code: &str) -> String {
    code.lines().filter(|l| !l.trim_start().starts_with("//")).flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ")
}

/// SQL text without its `--` comments, each run of whitespace one space, outside quoted
/// literals and identifiers ('…', "…"), which are kept as written (a doubled quote inside one
/// is an escaped quote). Two texts that differ only in comments and layout read the same.
pub fn sql_for_digest(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    // Whitespace or a comment since the last token: one space before the next.
    let mut gap = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if c == '-' && chars.peek() == Some(&'-') {
            for d in chars.by_ref() {
                if d == '\n' {
                    break;
                }
            }
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        out.push(c);
        if c == '\'' || c == '"' {
            while let Some(d) = chars.next() {
                out.push(d);
                if d == c {
                    match chars.next_if_eq(&c) {
                        Some(escaped) => out.push(escaped),
                        None => break,
                    }
                }
            }
        }
    }
    out
}

pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
