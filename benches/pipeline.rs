//! `cargo bench` runs `recount-bench` on the small world (quick); the full figures come from
//! `recount-bench --preset full --baseline bench/classic/run.sh` (see docs/performance.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench that unwraps fails, as it should

fn main() {
    let work = std::env::temp_dir().join("recount-cargo-bench");
    let baseline = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("bench/classic/run.sh");
    let preset = if std::env::var("RECOUNT_BENCH_PRESET").as_deref() == Ok("full") { "full" } else { "small" };
    let mut bench = std::process::Command::new(env!("CARGO_BIN_EXE_recount-bench"));
    bench.args(["--preset", preset, "--runs", "3", "--work-dir"]).arg(&work);
    if baseline.exists() {
        bench.arg("--baseline").arg(&baseline);
    }
    let status = bench.status().expect("recount-bench starts");
    assert!(status.success(), "recount-bench: {status}");
}
