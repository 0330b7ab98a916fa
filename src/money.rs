//! Money is i64 minor units everywhere; this module only turns it into text for people.

/// How a currency is written in a table. Unknown codes fall back to the ISO code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurrencyStyle {
    pub symbol: &'static str,
    pub decimals: u32,
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
        _ => ("", false),
    };
    CurrencyStyle { symbol, decimals: 2, indian_grouping }
}

/// `£347,565.80`, `₹1,23,456.00`, `-S$5.10`; exact for every i64.
pub fn format_major(minor: i64, code: &str) -> String {
    let st = style(code);
    let sign = if minor < 0 { "-" } else { "" };
    let abs = minor.unsigned_abs();
    let scale = 10u64.pow(st.decimals);
    let whole = group_digits(&(abs / scale).to_string(), st.indian_grouping);
    let frac = abs % scale;
    let prefix = if st.symbol.is_empty() { format!("{code} ") } else { st.symbol.to_string() };
    if st.decimals == 0 {
        format!("{sign}{prefix}{whole}")
    } else {
        format!("{sign}{prefix}{whole}.{frac:0width$}", width = st.decimals as usize)
    }
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
    fn extremes_are_exact() {
        assert_eq!(format_major(i64::MIN, "XXX"), "-XXX 92,233,720,368,547,758.08");
        assert_eq!(format_count(75_600), "75,600");
        assert_eq!(format_count_delta(7_399), "+7,399");
        assert_eq!(format_count_delta(0), "+0");
        assert_eq!(format_count_delta(-1_234_567), "-1,234,567");
        assert_eq!(format_delta(0, "GBP"), "±£0.00");
        assert_eq!(format_delta(542_319, "GBP"), "+£5,423.19");
    }
}
