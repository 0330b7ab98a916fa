//! Money is i64 minor units everywhere; this module only turns it into text for people.

/// A currency's minor digits as ISO-4217 gives them: 2 for GBP and USD, 0 for JPY, 3 for KWD
/// and BHD, 4 for CLF. The table is the `iso_currency` crate's (ISO-4217's own list, kept up to
/// date by its maintainers). None for a code ISO-4217 does not list, or one without a minor unit
/// (gold, the testing codes): landing refuses a store with such a currency.
pub fn digits(code: &str) -> Option<u32> {
    iso_currency::Currency::from_code(code)?.exponent().map(u32::from)
}

/// Why `code` cannot be a store's currency, if it cannot.
pub fn refuse(code: &str) -> Option<String> {
    match iso_currency::Currency::from_code(code) {
        None => Some(format!("currency '{code}' is not an ISO-4217 code")),
        Some(c) if c.exponent().is_none() => Some(format!("currency '{code}' ({}) has no minor unit in ISO-4217", c.name())),
        Some(_) => None,
    }
}

/// How a currency is written in a table: its symbol where recount knows one that is not
/// ambiguous, else the ISO code; and its ISO-4217 digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurrencyStyle {
    pub symbol: &'static str,
    /// None: a code ISO-4217 does not list; the amount is shown in minor units, and says so.
    pub decimals: Option<u32>,
    /// Indian numbering groups by lakh and crore: 1,23,45,678.90.
    pub indian_grouping: bool,
}

pub fn style(code: &str) -> CurrencyStyle {
    let (symbol, indian_grouping) = match code {
        "GBP" => ("£", false),
        "INR" => ("₹", true),
        "SGD" => ("S$", false),
        "USD" => ("$", false),
        "EUR" => ("€", false),
        "JPY" => ("¥", false),
        _ => ("", false),
    };
    CurrencyStyle { symbol, decimals: digits(code), indian_grouping }
}

/// `£347,565.80`, `₹1,23,456.00`, `-S$5.10`, `¥1,091,969`, `KWD 1,491.936`; exact for every
/// i64, by the currency's own digits. A code ISO-4217 does not list shows its minor units as
/// they are: `XYZ 1,234 (minor units)`.
pub fn format_major(minor: i64, code: &str) -> String {
    let st = style(code);
    let sign = if minor < 0 { "-" } else { "" };
    let abs = minor.unsigned_abs();
    let prefix = if st.symbol.is_empty() { format!("{code} ") } else { st.symbol.to_string() };
    let Some(decimals) = st.decimals else {
        return format!("{sign}{prefix}{} (minor units)", group_digits(&abs.to_string(), st.indian_grouping));
    };
    let scale = 10u64.pow(decimals);
    let whole = group_digits(&(abs / scale).to_string(), st.indian_grouping);
    let frac = abs % scale;
    if decimals == 0 {
        format!("{sign}{prefix}{whole}")
    } else {
        format!("{sign}{prefix}{whole}.{frac:0width$}", width = decimals as usize)
    }
}

/// The plain decimal a spreadsheet reads as a number, by the currency's digits: `-1234.5` is
/// never written, `-1234.50` is; `1091969` for JPY. Exact for every i64, never through a float.
/// A code ISO-4217 does not list has no major unit: None.
pub fn decimal_major(minor: i64, code: &str) -> Option<String> {
    let decimals = digits(code)?;
    let sign = if minor < 0 { "-" } else { "" };
    let abs = minor.unsigned_abs();
    let scale = 10u64.pow(decimals);
    Some(if decimals == 0 {
        format!("{sign}{abs}")
    } else {
        format!("{sign}{}.{:0width$}", abs / scale, abs % scale, width = decimals as usize)
    })
}

/// Signed change, always with a sign: `+£5,423.19`, `-₹12.00`, `±£0.00`.
pub fn format_delta(minor: i64, code: &str) -> String {
    match minor.signum() {
        1 => format!("+{}", format_major(minor, code)),
        0 => format!("±{}", format_major(0, code)),
        _ => format_major(minor, code),
    }
}

/// Thousands separators for counts: `75,600`.
/// The most revenue one store, or one country, may take on one business date, summed as absolute
/// values over every landed copy: 2^53 minor units (about 90 trillion pounds). Below it, no sum
/// recount makes of a date can pass 64 bits; a landing that would pass it is refused, naming the
/// store or country and the date.
pub const MAX_DAY_REVENUE_MINOR: i64 = 1 << 53;

/// Adds `x` to `total`, or fails naming what overflowed: no sum of money wraps silently.
#[inline]
pub fn add(total: &mut i64, x: i64, what: impl FnOnce() -> String) -> color_eyre::Result<()> {
    *total = total.checked_add(x).ok_or_else(|| color_eyre::eyre::eyre!("{}: the sum passes 64 bits", what()))?;
    Ok(())
}

pub fn format_count(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", group_digits(&n.unsigned_abs().to_string(), false))
}

/// Signed count with thousands separators: `+7,399`, `+0`, `-12`.
pub fn format_count_delta(n: i64) -> String {
    if n < 0 { format_count(n) } else { format!("+{}", format_count(n)) }
}

fn group_digits(digits: &str, indian: bool) -> String {
    let bytes = digits.as_bytes();
    let n = bytes.len();
    let mut out = String::with_capacity(n + n / 2);
    for (i, &b) in bytes.iter().enumerate() {
        let left = n - i; // digits from here to the end
        if i > 0 {
            let sep = if indian { left == 3 || (left > 3 && (left - 3).is_multiple_of(2)) } else { left.is_multiple_of(3) };
            if sep {
                out.push(',');
            }
        }
        out.push(b as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pounds_group_by_thousands() {
        assert_eq!(format_major(34_756_580, "GBP"), "£347,565.80");
        assert_eq!(format_major(5, "GBP"), "£0.05");
        assert_eq!(format_major(-510, "SGD"), "-S$5.10");
    }

    #[test]
    fn rupees_group_by_lakh_and_crore() {
        assert_eq!(format_major(1_234_567_890, "INR"), "₹1,23,45,678.90");
        assert_eq!(format_major(100_000, "INR"), "₹1,000.00");
    }

    #[test]
    fn every_currency_is_shown_by_its_iso_4217_digits() {
        assert_eq!(format_major(1_091_969, "JPY"), "¥1,091,969");
        assert_eq!(format_major(1_491_936, "KWD"), "KWD 1,491.936");
        assert_eq!(format_major(-1, "BHD"), "-BHD 0.001");
        assert_eq!(format_major(123_456, "CLF"), "CLF 12.3456");
        assert_eq!(format_major(1_234_567_890, "INR"), "₹1,23,45,678.90");
        assert_eq!(format_major(1_999, "USD"), "$19.99");
        assert_eq!(format_delta(-5, "JPY"), "-¥5");
        assert_eq!(format_delta(0, "KWD"), "±KWD 0.000");
        assert_eq!(
            [digits("JPY"), digits("KWD"), digits("BHD"), digits("CLF"), digits("INR")],
            [Some(0), Some(3), Some(3), Some(4), Some(2)]
        );
    }

    #[test]
    fn a_code_iso_4217_does_not_list_is_refused_and_never_given_two_digits() {
        assert_eq!(digits("XYZ"), None);
        assert!(refuse("XYZ").is_some_and(|r| r.contains("not an ISO-4217 code")));
        assert!(refuse("XAU").is_some_and(|r| r.contains("no minor unit")), "gold has no minor unit");
        assert_eq!(refuse("JPY"), None);
        assert_eq!(format_major(123_456, "XYZ"), "XYZ 123,456 (minor units)");
    }

    /// No code but this module turns minor units into major ones: a line that speaks of minor
    /// units and divides by 100, takes a float, or prints two fixed decimals is a fixed two digits.
    #[test]
    fn no_money_is_formatted_with_a_fixed_two_digits_anywhere_else() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            // A directory another process removed between the listing and the walk is gone.
            let Ok(entries) = std::fs::read_dir(dir) else { return };
            for e in entries {
                let p = e.unwrap().path();
                // Caches that tools write and delete while the tests run are not sources.
                if p.file_name().is_some_and(|n| n == "__pycache__" || n == ".mypy_cache" || n == ".ruff_cache") {
                    continue;
                }
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs" || x == "py") {
                    out.push(p);
                }
            }
        }
        // The workspace's top, two floors above this crate.
        let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..");
        let mut files = Vec::new();
        for d in ["src", "crates", "spark", "benches"] {
            walk(&root.join(d), &mut files);
        }
        assert!(files.len() > 20, "the walk found the sources");
        let fixed = ["/ 100", "/100", "% 100", "%100", "as f64", ":.2", "100.0", "float("];
        let mut found = Vec::new();
        for f in files.iter().filter(|f| !f.ends_with("crates/core/src/money.rs")) {
            for (n, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
                if line.to_lowercase().contains("minor") && fixed.iter().any(|p| line.contains(p)) {
                    found.push(format!("{}:{}: {line}", f.display(), n + 1));
                }
            }
        }
        assert!(found.is_empty(), "money formatted outside money.rs:\n{}", found.join("\n"));
    }

    #[test]
    fn extremes_are_exact() {
        assert_eq!(format_major(i64::MIN, "USD"), "-$92,233,720,368,547,758.08");
        assert_eq!(format_major(i64::MIN, "CLF"), "-CLF 922,337,203,685,477.5808");
        assert_eq!(format_count(75_600), "75,600");
        assert_eq!(format_count_delta(7_399), "+7,399");
        assert_eq!(format_count_delta(0), "+0");
        assert_eq!(format_count_delta(-1_234_567), "-1,234,567");
        assert_eq!(format_delta(0, "GBP"), "±£0.00");
        assert_eq!(format_delta(542_319, "GBP"), "+£5,423.19");
    }
}
