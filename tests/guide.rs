//! The user guide's screen captures cannot go stale: every screen the guide shows is an excerpt
//! of a capture in docs/captures/ (made by scripts/capture-screens.sh on the lab a first run
//! builds), and the captures show the key table as the code has it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

use std::path::PathBuf;

/// The checkout's root, read when the test runs: `env!` would keep the path of whichever
/// checkout first built this test into a shared target directory.
fn root() -> PathBuf {
    std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
}

fn lines(text: &str) -> Vec<String> {
    text.trim_end_matches('\n').split('\n').map(|l| l.trim_end().to_string()).collect()
}

fn captures() -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = std::fs::read_dir(root().join("docs/captures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), lines(&std::fs::read_to_string(&p).unwrap())))
        .collect();
    out.sort();
    out
}

/// Whether `block` is `capture` with some runs of lines left out (each gap written `…`), in order.
fn is_excerpt(block: &[String], capture: &[String]) -> bool {
    let mut pos = 0;
    for seg in block.split(|l| l.trim() == "…") {
        if seg.is_empty() {
            continue;
        }
        match (pos..=capture.len().saturating_sub(seg.len())).find(|&k| capture.get(k..k + seg.len()) == Some(seg)) {
            Some(k) => pos = k + seg.len(),
            None => return false,
        }
    }
    true
}

#[test]
fn every_screen_in_the_guide_is_an_excerpt_of_a_current_capture() {
    let guide = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let caps = captures();
    let mut blocks = 0;
    let mut it = guide.lines();
    while let Some(line) = it.next() {
        if line.trim() != "```" {
            if line.starts_with("```") {
                // A fenced block of commands, not a screen: skip to its end.
                for l in it.by_ref() {
                    if l.trim() == "```" {
                        break;
                    }
                }
            }
            continue;
        }
        let block: Vec<String> = it.by_ref().take_while(|l| l.trim() != "```").map(|l| l.trim_end().to_string()).collect();
        if !block.iter().any(|l| l.contains('│')) {
            continue; // a text block, not a screen
        }
        blocks += 1;
        assert!(
            caps.iter().any(|(_, c)| is_excerpt(&block, c)),
            "a screen in docs/guide.md is not in docs/captures/ (rerun scripts/capture-screens.sh and paste it):\n{}",
            block.join("\n")
        );
    }
    assert!(blocks >= 8, "the guide shows {blocks} screens");
}

#[test]
fn the_captures_show_the_key_table_and_the_lab_a_first_run_builds() {
    let caps = captures();
    let get = |name: &str| caps.iter().find(|(n, _)| n == name).unwrap().1.join("\n");
    // The help scrolls: its first page and, after End, its last.
    let help = format!("{}\n{}", get("help.txt"), get("help-end.txt"));
    for (label, text) in recount::tui::keys::help_lines() {
        // The popup may wrap a long line: its first words are enough to tell it is there.
        let start: String = text.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        assert!(help.contains(&start), "help capture lacks '{label}  {text}'");
    }
    let overview = get("overview.txt");
    let bar = overview.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    let hints: Vec<String> =
        recount::tui::keys::hints(recount::tui::screen::Screen::Overview).iter().map(|(k, h)| format!("{k} {h}")).collect();
    for h in hints.iter().take(6) {
        assert!(bar.contains(h.as_str()), "hint '{h}' missing from the captured bar: {bar}");
    }
    let sample = root().join("sample-data");
    let ups = recount::raw::list_partitions(&sample).unwrap();
    let newest = ups[ups.len() - 1 - recount::lake::bootstrap::HELD_BACK];
    assert!(overview.contains(&format!("upload {newest})")), "captured on the first-run lab (newest upload {newest}):\n{overview}");
}
