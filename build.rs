//! Compiles `queries/*.sql` into constants: one `Statement` per `-- name: NAME` block, in a module
//! per file (`sql::v2::SILVER_INSERT`). A statement the code names but the files lack is then a
//! compile error, not a panic at run time. Costs well under a second of build time.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("queries");
    println!("cargo:rerun-if-changed=queries");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("queries/")
        .map(|e| e.expect("queries/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    let mut out = String::new();
    let mut all = Vec::new();
    let mut texts = Vec::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let file = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).expect("reading a query file");
        texts.push((file.clone(), text.clone()));
        writeln!(out, "pub mod {file} {{\n    use super::Statement;").unwrap();
        let mut rest = text.as_str();
        let mut seen = std::collections::HashSet::new();
        while let Some(at) = rest.find("-- name: ") {
            let after = &rest[at + "-- name: ".len()..];
            let name_end = after.find('\n').unwrap_or(after.len());
            let name = after[..name_end].trim().to_string();
            let body_and_more = &after[name_end..];
            let body_end = body_and_more.find("-- name: ").unwrap_or(body_and_more.len());
            let body = body_and_more[..body_end].trim();
            assert!(!body.is_empty(), "queries/{file}.sql: statement {name} is empty");
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "queries/{file}.sql: statement name '{name}' is not snake_case"
            );
            assert!(seen.insert(name.clone()), "queries/{file}.sql: statement {name} is named twice");
            let konst = name.to_uppercase();
            writeln!(out, "    pub const {konst}: Statement = Statement {{ file: {file:?}, name: {name:?}, sql: {body:?} }};").unwrap();
            all.push(format!("{file}::{konst}"));
            rest = &body_and_more[body_end..];
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
