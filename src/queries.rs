//! The SQL lives in `queries/*.sql`, one statement family a file, each statement headed by
//! `-- name: NAME`. It is compiled into the binary; parameters are always bound, never formatted.

use std::collections::HashMap;
use std::sync::OnceLock;

const FILES: &[(&str, &str)] = &[
    ("schema", include_str!("../queries/schema.sql")),
    ("land", include_str!("../queries/land.sql")),
    ("v1", include_str!("../queries/v1.sql")),
    ("v2", include_str!("../queries/v2.sql")),
    ("snapshot", include_str!("../queries/snapshot.sql")),
    ("fingerprint", include_str!("../queries/fingerprint.sql")),
    ("reports", include_str!("../queries/reports.sql")),
    ("recompute", include_str!("../queries/recompute.sql")),
    ("history", include_str!("../queries/history.sql")),
];

fn index() -> &'static HashMap<(&'static str, &'static str), &'static str> {
    static INDEX: OnceLock<HashMap<(&'static str, &'static str), &'static str>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map = HashMap::new();
        for &(file, text) in FILES {
            let mut rest = text;
            while let Some(at) = rest.find("-- name: ") {
                let after = &rest[at + "-- name: ".len()..];
                let name_end = after.find('\n').unwrap_or(after.len());
                let name = after[..name_end].trim();
                let body_and_more = &after[name_end..];
                let body_end = body_and_more.find("-- name: ").unwrap_or(body_and_more.len());
                let body = body_and_more[..body_end].trim();
                map.insert((file, name), body);
                rest = &body_and_more[body_end..];
            }
        }
        map
    })
}

/// The statement `name` of `queries/<file>.sql`. A missing name is a programming error.
pub fn sql(file: &str, name: &str) -> &'static str {
    index().get(&(file, name)).copied().unwrap_or_else(|| panic!("no statement '{name}' in queries/{file}.sql"))
}

/// A short digest of the SQL that decides silver and gold: part of every input hash, so a
/// changed rule rebuilds instead of skipping. schema.sql holds the window rule (`in_window`).
pub fn rules_digest() -> String {
    use md5::Digest;
    let mut h = md5::Md5::new();
    for (file, text) in FILES {
        if matches!(*file, "v2" | "snapshot" | "schema") {
            h.update(text.as_bytes());
        }
    }
    hex(&h.finalize())[..8].to_string()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_has_named_statements_without_empty_bodies() {
        for &(file, _) in FILES {
            let names: Vec<_> = index().keys().filter(|(f, _)| *f == file).collect();
            assert!(!names.is_empty(), "queries/{file}.sql has no statements");
        }
        for (key, body) in index() {
            assert!(!body.is_empty(), "{key:?} is empty");
        }
        assert!(sql("v2", "silver_insert").contains("copy_rank = 1"));
    }
}
