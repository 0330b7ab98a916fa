//! `recount source check`: a few of a world's files read through its source description before
//! anything lands. Per contract field: the path it is read from, sample values, and how many
//! lines lack it; then how many lines the landing would quarantine, and why. This is how a new
//! user writes a description: check, read the reasons, fix a path, check again.

use super::table::{Cell, Note, Report, Status, Table};
pub use crate::raw::mapped::FieldCheck;
use crate::raw::source::Source;
use color_eyre::eyre::{Result, bail};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct ReasonCount {
    pub reason: String,
    pub lines: u64,
    /// The first line with it: file and line number.
    pub first: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceCheck {
    /// The description read, or the contract's layout.
    pub description: String,
    pub uploads: usize,
    pub first_upload: Option<chrono::NaiveDate>,
    pub last_upload: Option<chrono::NaiveDate>,
    pub stores: usize,
    /// The files read, as `upload/name`.
    pub files: Vec<String>,
    /// Files beside them that the glob does not take.
    pub not_taken: Vec<String>,
    pub fields: Vec<FieldCheck>,
    pub lines: u64,
    pub events: u64,
    pub quarantined: u64,
    pub reasons: Vec<ReasonCount>,
}

impl SourceCheck {
    /// The required fields that mapped nothing in every line read: the description is wrong.
    pub fn unmapped(&self) -> Vec<&FieldCheck> {
        self.fields.iter().filter(|f| f.required && f.found == 0 && self.lines > 0).collect()
    }
}

/// Reads the first `files` files of the world's first uploads through `source`.
pub fn try_description(world: &Path, source: &Source, files: usize) -> Result<SourceCheck> {
    let partitions = source.partitions(world)?;
    if partitions.is_empty() {
        bail!(
            "{}: no upload partition under {}/ matches the template '{}'",
            world.display(),
            source.description.partitions.root,
            source.description.partitions.template
        );
    }
    let stores = source.stores(world)?;
    let mut out = SourceCheck {
        description: source.origin.as_ref().map_or("the contract's layout (no recount.toml)".to_string(), |p| p.display().to_string()),
        uploads: partitions.len(),
        first_upload: partitions.first().map(|p| p.0),
        last_upload: partitions.last().map(|p| p.0),
        stores: stores.stores.len(),
        files: Vec::new(),
        not_taken: Vec::new(),
        fields: Vec::new(),
        lines: 0,
        events: 0,
        quarantined: 0,
        reasons: Vec::new(),
    };
    let mut samples = crate::raw::mapped::FieldSamples::new(source.reader());
    let mut reasons: Vec<ReasonCount> = Vec::new();
    'uploads: for (d, _) in &partitions {
        let (taken, other) = source.files(world, *d)?;
        out.not_taken.extend(other.iter().map(|f| format!("{d}/{}", source.name_in_upload(world, *d, f))));
        for f in taken {
            if out.files.len() >= files {
                break 'uploads;
            }
            let name = format!("{d}/{}", source.name_in_upload(world, *d, &f));
            let bytes = std::fs::read(&f)?;
            samples.read(&f, &bytes)?;
            crate::raw::mapped::read_events(&f, &bytes, source.reader(), &stores, *d, |line, verdict, _| {
                out.lines += 1;
                match verdict {
                    Ok(_) => out.events += 1,
                    Err(reason) => {
                        out.quarantined += 1;
                        match reasons.iter_mut().find(|r| r.reason == reason) {
                            Some(r) => r.lines += 1,
                            None => reasons.push(ReasonCount { reason, lines: 1, first: format!("{name}:{line}") }),
                        }
                    }
                }
                Ok(())
            })?;
            out.files.push(name);
        }
    }
    reasons.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.reason.cmp(&b.reason)));
    out.reasons = reasons;
    out.fields = samples.finish();
    Ok(out)
}

impl Report for SourceCheck {
    fn kind(&self) -> &'static str {
        "source-check"
    }
    fn headline(&self) -> String {
        let span = match (self.first_upload, self.last_upload) {
            (Some(a), Some(b)) => format!(", {a} .. {b}"),
            _ => String::new(),
        };
        format!(
            "source {}: {} upload(s){span}, {} store(s); read {} file(s), {} line(s): {} event(s), {} quarantined",
            self.description,
            self.uploads,
            self.stores,
            self.files.len(),
            crate::money::format_count(self.lines as i64),
            crate::money::format_count(self.events as i64),
            crate::money::format_count(self.quarantined as i64)
        )
    }

    fn tables(&self) -> Vec<Table> {
        let mut fields = Table::new(
            "Fields",
            &[("field", "Field"), ("path", "Path"), ("found", "Found"), ("missing", "Missing"), ("samples", "Samples")],
        );
        for f in &self.fields {
            fields.push(vec![
                Cell::text(&f.field),
                Cell::text(&f.path),
                Cell::Int(f.found as i64),
                Cell::Int(f.missing as i64),
                Cell::text(f.samples.join(" · ")),
            ]);
            if f.required
                && f.found == 0
                && self.lines > 0
                && let Some(r) = fields.rows.last_mut()
            {
                r.flag = Some(Status::Fail);
            }
        }
        let mut reasons = Table::new("Would be quarantined", &[("reason", "Reason"), ("lines", "Lines"), ("first", "First at")]);
        for r in &self.reasons {
            reasons.push(vec![Cell::text(&r.reason), Cell::Int(r.lines as i64), Cell::text(&r.first)]);
        }
        let mut files = Table::new("Files read", &[("file", "File")]);
        for f in &self.files {
            files.push(vec![Cell::text(f)]);
        }
        vec![fields, reasons, files]
    }

    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        for f in self.unmapped() {
            notes.push(Note {
                status: Status::Fail,
                text: format!("{} maps nothing: no line read has a value at '{}'; fix the path in the description", f.field, f.path),
            });
        }
        if !self.not_taken.is_empty() {
            let shown: Vec<&str> = self.not_taken.iter().take(5).map(String::as_str).collect();
            let more = if self.not_taken.len() > 5 { format!(" and {} more", self.not_taken.len() - 5) } else { String::new() };
            notes.push(Note {
                status: Status::Warn,
                text: format!("not taken by the file pattern, so never landed: {}{more}", shown.join(", ")),
            });
        }
        if self.unmapped().is_empty() && self.lines > 0 {
            notes.push(Note {
                status: if self.quarantined == 0 { Status::Pass } else { Status::Info },
                text: "every required field maps; the landing would read these lines as above".to_string(),
            });
        }
        notes
    }
}
