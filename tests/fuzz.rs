//! Fuzz-style tests: seeded mutation corpora (ChaCha8, so every run tries the same inputs and a
//! failure reproduces) over the line parser, stores.csv, the landing and the command line. The
//! claims: nothing panics, every input gets an answer (a row, a quarantine row, a held upload or
//! a clear error), and what is kept survives a round trip. Under a minute together.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `text` with a few random edits: bytes flipped, inserted, deleted, or a slice doubled.
fn mutate(rng: &mut ChaCha8Rng, text: &[u8]) -> Vec<u8> {
    let mut out = text.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let at = if out.is_empty() { 0 } else { rng.random_range(0..out.len()) };
        match rng.random_range(0..5) {
            0 if !out.is_empty() => out[at] = rng.random(),
            1 => out.insert(at, *b"\"{}[],:0-9e\\\x00\x1b\xff".get(rng.random_range(0..17)).unwrap_or(&b'x')),
            2 if !out.is_empty() => {
                out.remove(at);
            }
            3 => {
                let end = (at + rng.random_range(0..40)).min(out.len());
                let slice = out[at..end].to_vec();
                out.splice(at..at, slice);
            }
            _ => out.truncate(at),
        }
    }
    out
}

#[test]
fn the_line_parser_answers_every_mutated_line_without_panicking() {
    let stores = recount::raw::StoreTable::parse(STORES).unwrap();
    let good = event("e1", "B1", "LON1", "2026-08-15T10:00:00.000Z", "2026-08-15T10:00:01.000Z", "GBP", &[1200, 34]);
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..50_000 {
        let bytes = mutate(&mut rng, good.as_bytes());
        let Ok(line) = std::str::from_utf8(&bytes) else { continue };
        match recount::raw::parse_line(line, &stores, day("2026-08-15")) {
            Ok(e) => {
                ok += 1;
                assert!(e.basket_id.len() <= recount::raw::MAX_ID_BYTES && e.store_id == "LON1");
            }
            Err(reason) => {
                bad += 1;
                assert!(!reason.is_empty());
            }
        }
    }
    assert!(ok > 100 && bad > 10_000, "the corpus reaches both answers: {ok} parsed, {bad} refused");
}

#[test]
fn stores_csv_answers_every_mutated_file_and_what_it_keeps_round_trips() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let base = format!("{STORES}\"QU,O\"\"TE\",SG,Asia/Singapore,SGD\n");
    let mut kept = 0;
    for _ in 0..20_000 {
        let bytes = mutate(&mut rng, base.as_bytes());
        let Ok(text) = std::str::from_utf8(&bytes) else { continue };
        if let Ok(table) = recount::raw::StoreTable::parse(text) {
            kept += 1;
            let again = recount::raw::StoreTable::parse(&table.to_csv().unwrap()).unwrap();
            assert_eq!(again.stores, table.stores, "{text:?}");
        }
    }
    assert!(kept > 100, "{kept}");
}

#[test]
fn landing_mutated_files_never_panics_and_every_line_is_a_row_or_a_quarantine_row() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let mut rng = ChaCha8Rng::seed_from_u64(19);
    let lines: Vec<String> = (0..40)
        .map(|i| {
            event(
                &format!("e{i}"),
                &format!("B{}", i % 25),
                "LON1",
                "2026-08-15T10:00:00.000Z",
                "2026-08-15T10:00:01.000Z",
                "GBP",
                &[100 + i],
            )
        })
        .collect();
    let mut lab = open_lab(dir.path());
    for round in 0..20 {
        // Mutated lines in a good gzip, and now and then the gzip's own bytes mutated.
        let text: Vec<String> = lines.iter().map(|l| String::from_utf8_lossy(&mutate(&mut rng, l.as_bytes())).into_owned()).collect();
        let path = w.file("2026-08-15", &format!("f{round:02}.jsonl.gz"), &text);
        if round % 4 == 3 {
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, mutate(&mut rng, &bytes)).unwrap();
        }
        let report = recount::lake::land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
        if report.held.is_empty() {
            let p = &report.partitions[0];
            let lines_written: u64 = text.iter().map(|t| t.split('\n').count() as u64).sum();
            assert_eq!(p.events + p.quarantined, lines_written, "round {round}: every line is a row or a quarantine row");
        } else {
            // A file that cannot be read is named, and the next round starts clean without it.
            assert!(report.held[0].file.starts_with('f'), "{:?}", report.held);
            std::fs::remove_file(&path).unwrap();
        }
    }
    let d = day("2026-08-15");
    recount::lake::v2::run_upload(&lab, d, recount::store::TriggerKind::Upload, opts()).unwrap();
    let check = recount::reports::check::check(&lab, d, None).unwrap();
    assert!(check.engines_agree, "{:?}", check.engine_disagreements);
}

#[test]
fn the_command_line_answers_random_dates_numbers_and_paths_with_a_usage_error_or_a_result() {
    use clap::Parser;
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let words = ["run", "rebuild", "check", "land", "history", "diff", "late", "naive", "fingerprint", "rollback", "evidence"];
    let values = [
        "2026-08-15",
        "2026-02-30",
        "0000-01-01",
        "9999-12-31",
        "-1",
        "99999999999999999999",
        "366",
        "367",
        "1e9",
        "",
        "\u{1b}[2J",
        "../../etc",
        "/dev/null",
        "--late-days",
        "--as-of",
        "--from",
        "--format",
        "csv",
        "json",
        "table",
        "\u{202e}",
    ];
    for _ in 0..5_000 {
        let mut args = vec!["recount".to_string(), words[rng.random_range(0..words.len())].to_string()];
        for _ in 0..rng.random_range(0..5) {
            args.push(values[rng.random_range(0..values.len())].to_string());
        }
        // Parsing never panics: it gives a command or a usage error.
        let _ = recount::cli::Cli::try_parse_from(&args);
    }
    // And a sample run for real against an empty lab: exit 0, 1 or 2, never a panic (101).
    let dir = tempdir();
    let lab = dir.path().join("lab");
    for _ in 0..40 {
        let word = words[rng.random_range(0..words.len())];
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_recount"));
        cmd.arg("--lab").arg(&lab).arg(word);
        for _ in 0..rng.random_range(0..4) {
            cmd.arg(values[rng.random_range(0..values.len())]);
        }
        let out = cmd.output().unwrap();
        let code = out.status.code();
        assert!(matches!(code, Some(0..=2)), "{cmd:?} exited {code:?}: {}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains('\u{1b}') && !err.contains('\u{202e}') && !err.contains("panicked"), "{cmd:?}: {err:?}");
    }
}
