//! Compiles `queries/*.sql` into constants: one `Statement` per `-- name: NAME` block, in a module
//! per file (`sql::v2::SILVER_INSERT`). A statement the code names but the files lack is then a
//! compile error, not a panic at run time. Costs well under a second of build time.
//!
//! A `-- define: NAME` block (any file) holds SQL text that statements use as `@NAME`: a rule
//! DuckDB cannot hold in a macro (a window's ORDER BY) is still written once. An `@NAME` that no
//! block defines fails the build. A definition may use other definitions.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a build script fails the build by panicking, with its message

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The query files stay at the checkout's top, beside `queries/spark/` (the Spark engine's).
    let dir = Path::new("../../queries");
    println!("cargo:rerun-if-changed=../../queries");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("queries/")
        .map(|e| e.expect("queries/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    let mut defines: Vec<(String, String)> = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("reading a query file");
        for (name, body) in blocks(&text, "-- define: ") {
            defines.push((name, body.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join(" ")));
        }
    }
    let mut out = String::new();
    let mut all = Vec::new();
    let mut texts = Vec::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let file = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).expect("reading a query file");
        texts.push((file.clone(), text.clone()));
        writeln!(out, "pub mod {file} {{\n    use super::Statement;").unwrap();
        let mut seen = std::collections::HashSet::new();
        for (name, body) in blocks(&text, "-- name: ") {
            let body = expand(&body, &defines, &file, &name);
            assert!(!body.is_empty(), "queries/{file}.sql: statement {name} is empty");
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "queries/{file}.sql: statement name '{name}' is not snake_case"
            );
            assert!(seen.insert(name.clone()), "queries/{file}.sql: statement {name} is named twice");
            let konst = name.to_uppercase();
            writeln!(out, "    pub const {konst}: Statement = Statement {{ file: {file:?}, name: {name:?}, sql: {body:?} }};").unwrap();
            all.push(format!("{file}::{konst}"));
        }
        writeln!(out, "}}").unwrap();
    }
    writeln!(out, "/// Every statement of every file, in file order.").unwrap();
    writeln!(out, "pub const ALL: &[Statement] = &[{}];", all.join(", ")).unwrap();
    writeln!(out, "/// Each file's whole text, for the rules digest.").unwrap();
    let files: Vec<String> = texts.iter().map(|(f, t)| format!("({f:?}, {t:?})")).collect();
    writeln!(out, "pub const FILES: &[(&str, &str)] = &[{}];", files.join(", ")).unwrap();
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("statements.rs");
    std::fs::write(dest, out).unwrap();
}

/// The blocks of `text` headed by `marker` (`-- name: ` or `-- define: `): each block runs to the
/// next block of either kind.
fn blocks(text: &str, marker: &str) -> Vec<(String, String)> {
    let heads = ["-- name: ", "-- define: "];
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let after = &rest[at + marker.len()..];
        let name_end = after.find('\n').unwrap_or(after.len());
        let name = after[..name_end].trim().to_string();
        let body_and_more = &after[name_end..];
        let body_end = heads.iter().filter_map(|h| body_and_more.find(h)).min().unwrap_or(body_and_more.len());
        out.push((name, body_and_more[..body_end].trim().to_string()));
        rest = &body_and_more[body_end..];
    }
    out
}

/// `body` with every `@NAME` replaced by its definition.
fn expand(body: &str, defines: &[(String, String)], file: &str, statement: &str) -> String {
    expand_at(body, defines, file, statement, 0)
}

fn expand_at(body: &str, defines: &[(String, String)], file: &str, statement: &str, depth: usize) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let name = &after[..end];
        let Some((_, text)) = defines.iter().find(|(n, _)| n == name) else {
            panic!("queries/{file}.sql {statement}: @{name} is not defined by any `-- define:` block");
        };
        // A definition may use others (`@winners` holds `@copy_order`), a few deep at most.
        assert!(depth < 8, "queries/{file}.sql {statement}: @{name} is defined through itself");
        out.push_str(&expand_at(text, defines, file, statement, depth + 1));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
