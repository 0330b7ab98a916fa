//! The memory budget and DuckDB's limits within it: the reports' and the bulk one, fitted to the
//! lab's largest business date, and where DuckDB spills.

/// DuckDB's memory limit for a lab whose largest business date holds `ROWS_PER_STEP` rows or
/// fewer: reports and the explorer get the first; a landing and a long backfill
/// (`Store::bulk`), whose statements are cut to fit (slices of keys and of dates, one thread),
/// the second, which keeps their peak RSS down. A lab with larger dates
/// gets as many times each as its largest date holds steps of rows: the work of a statement
/// grows with the date it works on. Never more than DuckDB's share of the memory budget
/// (`duckdb_share`); past what is held, DuckDB spills to the lab's `recount.spill/`.
pub(super) const MEMORY_PER_STEP: (u64, u64) = (80_000_000, 32_000_000);

/// The rows of one business date (every country) that one step of memory serves: about the
/// full world's largest date.
pub(super) const ROWS_PER_STEP: u64 = 24_000;

/// The process's memory budget in bytes, set once by the command line (`--memory`,
/// `RECOUNT_MEMORY`, `memory` in the config file), else `default_memory_budget`.
pub(super) static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Sets the process's memory budget: before any lab is opened (later calls are ignored).
pub fn set_memory_budget(bytes: u64) {
    let _ = BUDGET.set(bytes);
}

/// The memory budget the process works in.
pub fn memory_budget() -> u64 {
    *BUDGET.get_or_init(default_memory_budget)
}

/// A quarter of the machine's memory, and never less than `MIN_DEFAULT_BUDGET`.
pub fn default_memory_budget() -> u64 {
    // SAFETY: sysconf only reads the system's configuration.
    let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let physical = u64::try_from(pages).unwrap_or(0).saturating_mul(u64::try_from(page).unwrap_or(0));
    (physical / 4).max(MIN_DEFAULT_BUDGET)
}

/// The default budget's floor: a small machine still lands the full world.
pub(super) const MIN_DEFAULT_BUDGET: u64 = 512 << 20;

/// DuckDB's share of the budget: the rest is the recount's (polars) and the parser's.
pub(super) fn duckdb_share(budget: u64) -> u64 {
    budget / 4 * 3
}

/// DuckDB's memory limits for a lab whose largest business date holds `rows`: (reports, bulk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub reports: u64,
    pub bulk: u64,
}

impl Limits {
    pub fn for_rows(rows: u64, budget: u64) -> Limits {
        let steps = rows.div_ceil(ROWS_PER_STEP).max(1);
        let cap = duckdb_share(budget).max(1 << 20);
        Limits { reports: MEMORY_PER_STEP.0.saturating_mul(steps).min(cap), bulk: MEMORY_PER_STEP.1.saturating_mul(steps).min(cap) }
    }
}

/// A size in bytes as DuckDB's `memory_limit` reads it.
pub fn duckdb_size(bytes: u64) -> String {
    format!("{}KiB", bytes.div_ceil(1024))
}

/// Keeps the process's allocations in one glibc malloc arena, for the commands whose work is bulk
/// (`land`, `run`, `daily` and the bench's land + backfill child). glibc gives each thread
/// that allocates an arena of its own, and memory freed into one stays in the process: with
/// DuckDB's and the parser's threads, bulk work held more heap at its peak in many arenas, at
/// no gain in time. The explorer and the reports keep glibc's default: their short writes were
/// a little slower in one arena. `MALLOC_ARENA_MAX`, when set, is left to decide.
pub fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a tunable of glibc's allocator, which any thread may call.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// The memory limit a connection opens with: `RECOUNT_MEMORY_LIMIT` (a DuckDB size, for every
/// statement), else the reports' limit of a lab of small dates (`Store::fit_to_work` raises it
/// once it has read the lab's dates).
pub(super) fn opening_limit() -> (String, Option<Limits>) {
    match std::env::var("RECOUNT_MEMORY_LIMIT") {
        Ok(limit) => (limit, None),
        Err(_) => {
            let limits = Limits::for_rows(0, memory_budget());
            (duckdb_size(limits.reports), Some(limits))
        }
    }
}

/// Where DuckDB spills what does not fit its limit: `recount.spill/` beside the lab's database,
/// emptied by the next writer's open after a crash (`lake::Lab::open`).
pub const SPILL_DIR: &str = "recount.spill";

/// A size as a person writes it: `2GB`, `1.5GiB`, `512MB`, `800MiB`, `64KB`, or a number of
/// bytes. GB and GiB alike are powers of 1024, as DuckDB reads them. At least 16 MiB: less
/// cannot hold a lab's smallest statement.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim().to_ascii_lowercase());
    let scale: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("'{}' is not a size: write it as 2GB, 512MB or a number of bytes", crate::sanitize::for_terminal(t))),
    };
    // Whole and fractional parts in integers: 1.5GB is 1.5 × 2^30 exactly, never a float.
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let bad = || format!("'{}' is not a size: write it as 2GB, 512MB or a number of bytes", crate::sanitize::for_terminal(t));
    if whole.is_empty() && frac.is_empty() || frac.len() > 6 {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let frac_value: u64 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| bad())? };
    let denominator = 10u64.pow(frac.len() as u32);
    let bytes = whole
        .checked_mul(scale)
        .and_then(|w| w.checked_add(u64::try_from(u128::from(frac_value) * u128::from(scale) / u128::from(denominator)).ok()?))
        .ok_or_else(bad)?;
    if bytes < MIN_BUDGET {
        return Err(format!("{} is less than the 16 MiB recount needs at the least", crate::sanitize::for_terminal(t)));
    }
    Ok(bytes)
}

/// The smallest memory budget taken.
const MIN_BUDGET: u64 = 16 << 20;
