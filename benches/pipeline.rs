//! `cargo bench` runs `recount bench` on the small world (quick); the full figures come from
//! `recount bench --preset full --baseline bench/classic/run.sh` (see docs/performance.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

fn main() -> color_eyre::Result<()> {
    let work = std::env::temp_dir().join("recount-cargo-bench");
    let baseline = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("bench/classic/run.sh");
    let preset = match std::env::var("RECOUNT_BENCH_PRESET").as_deref() {
        Ok("full") => recount::world::Preset::Full,
        _ => recount::world::Preset::Small,
    };
    let report = recount::bench::run(recount::bench::BenchOptions {
        world: None,
        preset,
        seed: recount::world::DEFAULT_SEED,
        runs: 3,
        work_dir: work,
        baseline: baseline.exists().then_some(baseline),
        date: None,
        exe: env!("CARGO_BIN_EXE_recount").into(),
    })?;
    print!("{}", recount::reports::table::render(&report, recount::reports::Format::Table, false));
    Ok(())
}
