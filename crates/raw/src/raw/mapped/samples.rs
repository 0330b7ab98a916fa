//! What `source check` tells of each field of a description over the lines it reads.

use super::*;

/// One field as `source check` found it over the lines it read.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FieldCheck {
    pub field: String,
    pub path: String,
    /// Up to three distinct values read, as text.
    pub samples: Vec<String>,
    /// Lines where the path gave a value.
    pub found: u64,
    /// Lines where it gave none (absent, null or empty).
    pub missing: u64,
    /// Whether the contract needs a value here (till_id does not).
    pub required: bool,
}

/// What `source check` tells of each field over the lines it reads: how many gave a value, how
/// many did not, and a few distinct values.
pub struct FieldSamples {
    map: Map,
    format: FileFormat,
    compression: Option<crate::raw::source::Compression>,
    names: Vec<(usize, &'static str, String)>,
    found: [u64; 8],
    missing: [u64; 8],
    samples: [Vec<String>; 8],
}

impl FieldSamples {
    pub fn new(reader: &Reader) -> FieldSamples {
        use crate::raw::source::{AmountField, FieldPaths, StampField};
        // The contract's own fields, as a description would name them.
        let fields = reader.fields.clone().unwrap_or_else(|| FieldPaths {
            event_id: "event_id".into(),
            basket_id: "basket_id".into(),
            store_id: "store_id".into(),
            till_id: Some("till_id".into()),
            event_ts: StampField::Iso("event_ts".into()),
            uploaded_at: StampField::Iso("uploaded_at".into()),
            currency: "currency".into(),
            amount: AmountField { path: "amount_minor".into(), tenders: Some("tenders".into()), unit: Unit::Minor },
        });
        let mapped = Reader { fields: Some(fields.clone()), ..reader.clone() };
        let map = Map::new(&mapped).unwrap_or_else(|_| unreachable!("the reader has fields"));
        let slot = |name: &str| match name {
            "event_id" => EVENT_ID,
            "basket_id" => BASKET_ID,
            "store_id" => STORE_ID,
            "till_id" => TILL_ID,
            "event_ts" => EVENT_TS,
            "uploaded_at" => UPLOADED_AT,
            "currency" => CURRENCY,
            _ => AMOUNT,
        };
        let names = fields.paths().into_iter().map(|(n, p)| (slot(n), n, p)).collect();
        FieldSamples {
            map,
            format: reader.format,
            compression: reader.compression,
            names,
            found: [0; 8],
            missing: [0; 8],
            samples: Default::default(),
        }
    }

    fn note(&mut self, slot: usize, value: Option<String>) {
        match value.filter(|v| !v.is_empty()) {
            Some(v) => {
                self.found[slot] += 1;
                if self.samples[slot].len() < 3 && !self.samples[slot].contains(&v) {
                    self.samples[slot].push(crate::sanitize::for_terminal(&v).chars().take(40).collect());
                }
            }
            None => self.missing[slot] += 1,
        }
    }

    fn json_line(&mut self, line: &str) {
        let start = object_start(line).ok();
        let spans = start.map(|st| self.map.spans(line, st));
        for k in 0..self.names.len() {
            let slot = self.names[k].0;
            let value = match (start, &spans) {
                (Some(st), _) if slot == AMOUNT && self.map.tenders.is_some() => self.tender_sample(line, st),
                (Some(_), Some(spans)) => match &spans[slot] {
                    Ok(Some(span)) => scalar(line, *span, "").ok().flatten().map(|v| v.text().into_owned()),
                    _ => None,
                },
                _ => None,
            };
            self.note(slot, value);
        }
    }

    fn tender_sample(&self, line: &str, start: usize) -> Option<String> {
        match self.map.tender_amounts(line, start, self.map.tenders.as_deref()?) {
            Ok(Some(Amount::Totals(v, _))) if !v.is_empty() => Some(v.join(" + ")),
            _ => None,
        }
    }

    /// Notes every line of one file.
    pub fn read(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        if self.format == FileFormat::Parquet {
            for row in crate::store::parquet::rows_as_json(path)? {
                self.json_line(&row);
            }
            return Ok(());
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let reader = Reader { compression: self.compression, ..Reader::default() };
        let bytes = inflate(bytes, reader.compression_of(&name))?;
        if self.format == FileFormat::Jsonl {
            // A line that is not UTF-8 is quarantined at landing; a sample of field values skips it.
            for line in crate::raw::split_lines(&bytes).filter_map(|l| crate::raw::line_text(l).ok()).filter(|l| !l.trim().is_empty()) {
                self.json_line(line);
            }
            return Ok(());
        }
        let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
        let mut rdr = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(bytes);
        let headers = rdr.headers()?.clone();
        let cols: Vec<(usize, Option<usize>)> = self
            .names
            .iter()
            .map(|(slot, _, _)| (*slot, headers.iter().position(|h| h.trim() == self.map.paths[*slot].join("."))))
            .collect();
        for rec in rdr.byte_records() {
            let Ok(rec) = csv::StringRecord::from_byte_record(rec?) else { continue };
            for (slot, col) in &cols {
                self.note(*slot, col.and_then(|c| rec.get(c)).map(str::to_string));
            }
        }
        Ok(())
    }

    pub fn finish(self) -> Vec<FieldCheck> {
        self.names
            .iter()
            .map(|(slot, name, path)| FieldCheck {
                field: name.to_string(),
                path: path.clone(),
                samples: self.samples[*slot].clone(),
                found: self.found[*slot],
                missing: self.missing[*slot],
                required: *slot != TILL_ID,
            })
            .collect()
    }
}
