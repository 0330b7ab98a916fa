//! A description's partition layout: its template's levels, the folders and files they match,
//! and the globs that pick the event files.

use super::*;

/// One level of a partition template: literal text around at most one placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) prefix: String,
    pub(super) part: Part,
    pub(super) suffix: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Date,
    Year,
    Month,
    Day,
    /// A level below the day: an hour, `00` to `23`.
    Hour,
    /// A level below the day written `*`: any folder.
    Any,
    None,
}

impl Part {
    pub(super) fn width(self) -> usize {
        match self {
            Part::Date => 10,
            Part::Year => 4,
            Part::Month | Part::Day | Part::Hour => 2,
            Part::Any | Part::None => 0,
        }
    }
}

/// Writer markers beside the data, skipped without a word: `_SUCCESS`, `*.crc`, `_temporary/`,
/// `_committed_*`/`_started_*` and dot files.
pub fn is_writer_marker(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_') || name.ends_with(".crc")
}

/// The files of a directory that `glob` takes, by name, and the others (markers left out). A
/// name recount cannot keep exactly is refused before anything is written.
pub fn list_dir(dir: &Path, glob: &str) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    if !dir.exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let (mut files, mut other) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if is_writer_marker(&text) || text.ends_with(".landing") {
            continue;
        }
        if !entry.file_type()?.is_file() || !glob_match(glob.as_bytes(), text.as_bytes()) {
            other.push(path);
            continue;
        }
        match name.to_str() {
            Some(n) if !n.chars().any(|c| c.is_control() || crate::sanitize::is_bidi(c)) => files.push(path),
            _ => bail!(
                "{}: the file name {:?} is not plain UTF-8 text; rename it before landing (nothing was landed)",
                dir.display(),
                crate::sanitize::for_terminal(&text)
            ),
        }
    }
    files.sort();
    other.sort();
    Ok((files, other))
}

/// The data files of a partition whose files sit in folders below it (`levels`, each matched as
/// a template level is: hourly folders), and what is there that is not taken. With no levels,
/// the partition's own files (`list_dir`).
pub(super) fn list_below(dir: &Path, levels: &[Segment], glob: &str) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let Some((level, rest)) = levels.split_first() else { return list_dir(dir, glob) };
    let (mut files, mut other) = (Vec::new(), Vec::new());
    if !dir.exists() {
        return Ok((files, other));
    }
    for entry in std::fs::read_dir(dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_writer_marker(&name) {
            continue;
        }
        if entry.file_type()?.is_dir() && match_segment(level, &name, &mut [None; 3]).is_ok() {
            let (f, o) = list_below(&entry.path(), rest, glob)?;
            files.extend(f);
            other.extend(o);
        } else {
            other.push(entry.path());
        }
    }
    files.sort();
    other.sort();
    Ok((files, other))
}

/// Whether a file pattern takes a file's name.
pub fn glob_takes(glob: &str, name: &str) -> bool {
    glob_match(glob.as_bytes(), name.as_bytes())
}

/// `*` any run of characters, `?` exactly one, everything else itself.
pub(super) fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

pub(super) fn check_glob(glob: &str) -> Result<()> {
    if glob.is_empty() || glob.contains('/') {
        bail!("files.glob: '{glob}' must be a file name pattern (no '/')");
    }
    Ok(())
}

pub(super) fn check_root(root: &str) -> Result<()> {
    if Path::new(root).is_absolute() || root.split('/').any(|p| p == "..") {
        bail!("partitions.root: '{root}' must be a path inside the world");
    }
    Ok(())
}

pub(super) fn parse_template(t: &str) -> Result<(Vec<Segment>, usize)> {
    let mut out = Vec::new();
    for seg in t.split('/') {
        if seg.contains('*') && seg != "*" {
            bail!(
                "partitions.template: '{seg}': a * stands for a whole level, written '*' alone; inside other text it would be taken literally"
            );
        }
        let (prefix, part, suffix) = match seg.find('{') {
            None if seg == "*" => (String::new(), Part::Any, String::new()),
            None => (seg.to_string(), Part::None, String::new()),
            Some(open) => {
                let close =
                    seg[open..].find('}').map(|c| open + c).ok_or_else(|| eyre!("partitions.template: '{seg}' has an unclosed '{{'"))?;
                let part = match &seg[open + 1..close] {
                    "date" => Part::Date,
                    "yyyy" => Part::Year,
                    "mm" => Part::Month,
                    "dd" => Part::Day,
                    "hh" => Part::Hour,
                    other => bail!("partitions.template: '{{{other}}}' is not one of {{date}}, {{yyyy}}, {{mm}}, {{dd}}, {{hh}}"),
                };
                let suffix = &seg[close + 1..];
                if suffix.contains('{') {
                    bail!("partitions.template: '{seg}' has more than one placeholder");
                }
                (seg[..open].to_string(), part, suffix.to_string())
            }
        };
        if seg.is_empty() || seg == ".." || seg == "." {
            bail!("partitions.template: '{t}' has an empty or relative level");
        }
        out.push(Segment { prefix, part, suffix });
    }
    let has = |p: Part| out.iter().filter(|s| s.part == p).count();
    let whole = has(Part::Date) == 1 && has(Part::Year) + has(Part::Month) + has(Part::Day) == 0;
    let split = has(Part::Date) == 0 && has(Part::Year) == 1 && has(Part::Month) == 1 && has(Part::Day) == 1;
    if !whole && !split {
        bail!("partitions.template: '{t}' must name the upload date once, as {{date}} or as {{yyyy}}, {{mm}} and {{dd}}");
    }
    // The levels below the day: from the first hour or wildcard level on (fixed text between
    // the date and it is part of the partition's path, as it always was). A part of the date
    // below it would split one upload over folders the date does not name.
    let dated = out.iter().position(|s| matches!(s.part, Part::Hour | Part::Any)).unwrap_or(out.len());
    if out[dated..].iter().any(|s| matches!(s.part, Part::Date | Part::Year | Part::Month | Part::Day)) {
        bail!("partitions.template: '{t}': an hour or a '*' level must come below the levels that name the date");
    }
    let below = out.len() - dated;
    Ok((out, below))
}

/// Matches one directory name against a template level; a whole date when it gives one.
pub(super) fn match_segment(seg: &Segment, name: &str, parts: &mut [Option<u32>; 3]) -> Result<Option<NaiveDate>, String> {
    let pattern = format!(
        "{}{}{}",
        seg.prefix,
        match seg.part {
            Part::Date => "YYYY-MM-DD",
            Part::Year => "YYYY",
            Part::Month => "MM",
            Part::Day => "DD",
            Part::Hour => "HH",
            Part::Any => "*",
            Part::None => "",
        },
        seg.suffix
    );
    if seg.part == Part::Any {
        return Ok(None);
    }
    let shown = crate::sanitize::for_terminal(name);
    let value = name
        .strip_prefix(seg.prefix.as_str())
        .and_then(|r| r.strip_suffix(seg.suffix.as_str()))
        .ok_or_else(|| format!("partition directory '{shown}' is not named {pattern}"))?;
    if value.len() != seg.part.width() || !value.bytes().all(|b| b.is_ascii_digit() || (seg.part == Part::Date && b == b'-')) {
        return Err(format!("partition directory '{shown}': '{}' is not a valid {pattern}", crate::sanitize::for_terminal(value)));
    }
    let bad = || format!("partition directory '{shown}': '{value}' is not a valid date ({pattern})");
    match seg.part {
        Part::Date => crate::raw::strict_date(value).map(Some).ok_or_else(bad),
        Part::None | Part::Any => Ok(None),
        Part::Hour if value.parse::<u32>().is_ok_and(|h| h < 24) => Ok(None),
        Part::Hour => Err(format!("partition directory '{shown}': '{value}' is not an hour (00 to 23, {pattern})")),
        p => {
            let n: u32 = value.parse().map_err(|_| bad())?;
            let (slot, ok) = match p {
                Part::Year => (0, n >= 1),
                Part::Month => (1, (1..=12).contains(&n)),
                _ => (2, (1..=31).contains(&n)),
            };
            if !ok {
                return Err(bad());
            }
            parts[slot] = Some(n);
            Ok(None)
        }
    }
}
