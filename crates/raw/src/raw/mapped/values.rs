//! A value found in a raw line or a Parquet cell, without a JSON parser: a JSON path followed
//! through the text, an Arrow cell, a decimal's exact text.

use color_eyre::eyre::{Result, bail, eyre};
use std::borrow::Cow;
use std::path::Path;

/// One Arrow cell as a leaf value: text, or an integer's or a decimal's exact text; null is None.
pub(super) fn arrow_cell<'a>(col: &'a dyn crate::store::arrow::array::Array, i: usize, label: &str) -> Result<Option<Scalar<'a>>, String> {
    use crate::store::arrow::array::AsArray;
    use crate::store::arrow::datatypes::{self as t, DataType};
    if col.is_null(i) {
        return Ok(None);
    }
    let num = |s: String| Ok(Some(Scalar::Num(Cow::Owned(s))));
    match col.data_type() {
        DataType::Utf8 => Ok(Some(Scalar::Str(Cow::Borrowed(col.as_string::<i32>().value(i))))),
        DataType::LargeUtf8 => Ok(Some(Scalar::Str(Cow::Borrowed(col.as_string::<i64>().value(i))))),
        DataType::Utf8View => Ok(Some(Scalar::Str(Cow::Borrowed(col.as_string_view().value(i))))),
        DataType::Int8 => num(col.as_primitive::<t::Int8Type>().value(i).to_string()),
        DataType::Int16 => num(col.as_primitive::<t::Int16Type>().value(i).to_string()),
        DataType::Int32 => num(col.as_primitive::<t::Int32Type>().value(i).to_string()),
        DataType::Int64 => num(col.as_primitive::<t::Int64Type>().value(i).to_string()),
        DataType::UInt8 => num(col.as_primitive::<t::UInt8Type>().value(i).to_string()),
        DataType::UInt16 => num(col.as_primitive::<t::UInt16Type>().value(i).to_string()),
        DataType::UInt32 => num(col.as_primitive::<t::UInt32Type>().value(i).to_string()),
        DataType::UInt64 => num(col.as_primitive::<t::UInt64Type>().value(i).to_string()),
        DataType::Decimal128(_, scale) => num(decimal_text(col.as_primitive::<t::Decimal128Type>().value(i), *scale)),
        DataType::Boolean => Err(format!("{label} is a boolean")),
        other => Err(format!("{label} is a column of {other}, which recount does not read (write text, integers or DECIMAL)")),
    }
}

/// An Arrow decimal's exact text: 1250 at scale 2 is "12.50".
pub(super) fn decimal_text(v: i128, scale: i8) -> String {
    if scale <= 0 {
        return v.checked_mul(10i128.pow(u32::from(scale.unsigned_abs()))).map_or_else(|| "out of range".to_string(), |x| x.to_string());
    }
    let digits = scale as usize;
    let sign = if v < 0 { "-" } else { "" };
    let abs = format!("{:0>width$}", v.unsigned_abs(), width = digits + 1);
    let (int, frac) = abs.split_at(abs.len() - digits);
    format!("{sign}{int}.{frac}")
}

/// A leaf value: text (a JSON string, decoded) or a JSON number's exact text.
pub(super) enum Scalar<'a> {
    Str(Cow<'a, str>),
    Num(Cow<'a, str>),
}

impl<'a> Scalar<'a> {
    pub(super) fn text(self) -> Cow<'a, str> {
        match self {
            Scalar::Str(s) | Scalar::Num(s) => s,
        }
    }
    pub(super) fn text_ref(&self) -> &str {
        match self {
            Scalar::Str(s) | Scalar::Num(s) => s,
        }
    }
}

/// The value at `span` of a valid JSON text: a string (decoded), a number (its text), null
/// (None); anything else is not a value a field can take.
pub(super) fn scalar<'a>(line: &'a str, (a, b): (usize, usize), label: &str) -> Result<Option<Scalar<'a>>, String> {
    let v = &line[a..b];
    match v.as_bytes()[0] {
        b'"' if !v.contains('\\') => Ok(Some(Scalar::Str(Cow::Borrowed(&v[1..v.len() - 1])))),
        b'"' => serde_json::from_str::<String>(v).map(|s| Some(Scalar::Str(Cow::Owned(s)))).map_err(|_| format!("{label} is not a string")),
        b'n' => Ok(None),
        b'-' | b'0'..=b'9' => Ok(Some(Scalar::Num(Cow::Borrowed(v)))),
        b't' | b'f' => Err(format!("{label} is a boolean")),
        _ => Err(format!("{label} is a list or an object, not a value")),
    }
}

pub(super) fn ws(s: &[u8], mut i: usize) -> usize {
    while matches!(s.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the valid JSON value starting at `i`.
pub(super) fn value_end(s: &[u8], i: usize) -> usize {
    match s[i] {
        b'"' => string_end(s, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < s.len() {
                match s[j] {
                    b'"' => {
                        j = string_end(s, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            s.len()
        }
        _ => {
            let mut j = i;
            while j < s.len() && !matches!(s[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            j
        }
    }
}

pub(super) fn string_end(s: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < s.len() {
        match s[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    s.len()
}

/// Where a line's top object starts, once the line is known to be one valid JSON value (by
/// serde_json's grammar: the fast reader's check clears the plain line, serde_json decides any
/// other); the walks over it may then trust it. Else the line's reason.
pub(super) fn object_start(line: &str) -> Result<usize, String> {
    if !crate::raw::fast_line::is_plain_json(line) && serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
        return Err("malformed JSON: not one valid JSON value".into());
    }
    let start = ws(line.as_bytes(), 0);
    if line.as_bytes().get(start) != Some(&b'{') {
        return Err("malformed JSON: not an object".into());
    }
    Ok(start)
}

/// The entries of the object starting at `at` (`{`) of a valid JSON text: each key as written
/// (quoted, escapes and all) and its value's span.
pub(super) fn entries(line: &str, at: usize) -> impl Iterator<Item = (&str, (usize, usize))> {
    let s = line.as_bytes();
    let mut i = ws(s, at + 1);
    std::iter::from_fn(move || {
        if i >= s.len() || s[i] != b'"' {
            return None;
        }
        let key_end = string_end(s, i);
        let raw_key = &line[i..key_end];
        let v = ws(s, ws(s, key_end) + 1);
        let end = value_end(s, v);
        i = ws(s, end);
        if s.get(i) == Some(&b',') {
            i = ws(s, i + 1);
        }
        Some((raw_key, (v, end)))
    })
}

/// Whether a key as written (quoted) names `key`, its escapes decoded.
pub(super) fn key_is(raw_key: &str, key: &str) -> bool {
    if raw_key.contains('\\') {
        serde_json::from_str::<String>(raw_key).is_ok_and(|k| k == key)
    } else {
        &raw_key[1..raw_key.len() - 1] == key
    }
}

/// The span of the value at `path` in the object starting at `start`; None when a key is absent
/// or a step is null. A key given twice on the path, or a step that is not an object, is the
/// line's reason.
pub(super) fn lookup(line: &str, start: usize, path: &[String], label: &str) -> Result<Option<(usize, usize)>, String> {
    let s = line.as_bytes();
    let mut at = start;
    for (k, key) in path.iter().enumerate() {
        if s[at] == b'n' {
            return Ok(None);
        }
        if s[at] != b'{' {
            return Err(format!("{label}: {} is not an object", path[..k].join(".")));
        }
        let mut found = None;
        for (raw_key, span) in entries(line, at) {
            if key_is(raw_key, key) && found.replace(span).is_some() {
                return Err(format!("malformed JSON: duplicate field `{}`", crate::sanitize::for_terminal(key)));
            }
        }
        let Some(span) = found else { return Ok(None) };
        at = span.0;
        if k + 1 == path.len() {
            return Ok(Some(span));
        }
    }
    Ok(None)
}

/// The named columns (paths) of a Parquet file, row by row, as text: a store list. A row that
/// lacks one, or gives it as anything but text, is an error naming the row.
pub fn parquet_columns(path: &Path, names: [&str; 4]) -> Result<Vec<[String; 4]>> {
    let mut out = Vec::new();
    for (i, row) in crate::store::parquet::rows_as_json(path)?.iter().enumerate() {
        let mut got: [String; 4] = Default::default();
        for (k, name) in names.iter().enumerate() {
            let keys: Vec<String> = name.split('.').map(str::to_string).collect();
            let v = lookup(row, ws(row.as_bytes(), 0), &keys, name)
                .and_then(|span| span.map(|sp| scalar(row, sp, name)).transpose())
                .map_err(|e| eyre!("{}: row {}: {e}", path.display(), i + 1))?
                .flatten();
            match v {
                Some(Scalar::Str(s)) => got[k] = s.into_owned(),
                _ => bail!("{}: row {}: no text in column '{name}'", path.display(), i + 1),
            }
        }
        out.push(got);
    }
    Ok(out)
}
