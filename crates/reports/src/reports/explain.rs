//! `recount explain DATE`: why v1 is wrong, entity by entity, on any lab (retail's baskets, a
//! model's records). v1 reads only upload DATE and counts its copies: it misses entities whose
//! only copies landed in another day's upload, and counts re-sent copies twice. The identity
//! `recompute - missed + double counted = v1` must hold to the last unit, per part of the date
//! (retail: its country) and measure; the report computes each side independently and says
//! whether it does.

use super::model::{currency_of, measure_key, measure_label, part_of, part_positions, shown_measures};
use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use crate::lake::model::named;
use crate::model::Model;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use std::collections::BTreeMap;

/// An entity one v1 run gets wrong.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntityLine {
    pub key: String,
    pub grain: Vec<String>,
    /// For a missed entity, the upload its winning copy arrived in; else the date's own.
    pub upload_date: NaiveDate,
    /// Copies in upload DATE (0 for a missed entity).
    pub copies_in_run: i64,
    /// What the line adds to its bucket, per measure of the model.
    pub measures: Vec<i64>,
}

/// The identity of one part of the date, every measure of the model side by side.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PartExplain {
    /// The values of the attributes that name the part (retail: its country; empty: the date whole).
    pub part: String,
    /// The values of every attribute (retail: country and currency): a money measure's currency.
    pub attributes: Vec<String>,
    pub recompute: Vec<i64>,
    pub missed: Vec<i64>,
    pub double_counted: Vec<i64>,
    /// What ONE v1 run for the date counts.
    pub v1: Vec<i64>,
    /// recompute - missed + double counted - v1: zeros when the identity holds.
    pub gap: Vec<i64>,
    pub missed_entities: i64,
    pub double_counted_copies: i64,
    pub missed_lines: Vec<EntityLine>,
    pub double_counted_lines: Vec<EntityLine>,
}

impl PartExplain {
    pub fn identity_holds(&self) -> bool {
        self.gap.iter().all(|g| *g == 0)
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ExplainReport {
    #[serde(skip)]
    pub model: Model,
    pub business_date: NaiveDate,
    pub parts: Vec<PartExplain>,
}

/// The parts being summed, keyed by every attribute's value.
struct Parts<'a> {
    model: &'a Model,
    d: NaiveDate,
    by: BTreeMap<Vec<String>, PartExplain>,
}

impl<'a> Parts<'a> {
    fn new(model: &'a Model, d: NaiveDate) -> Self {
        Parts { model, d, by: BTreeMap::new() }
    }

    fn of(&mut self, attributes: &[String]) -> &mut PartExplain {
        let n = self.model.measures.len();
        self.by.entry(attributes.to_vec()).or_insert_with(|| PartExplain {
            part: part_of(self.model, attributes),
            attributes: attributes.to_vec(),
            recompute: vec![0; n],
            missed: vec![0; n],
            double_counted: vec![0; n],
            v1: vec![0; n],
            gap: vec![0; n],
            ..Default::default()
        })
    }

    /// Adds `values` to one side of a part; a sum past 64 bits is an error naming the date.
    fn add(&mut self, attributes: &[String], side: fn(&mut PartExplain) -> &mut Vec<i64>, values: &[i64]) -> Result<()> {
        let d = self.d;
        for (total, v) in side(self.of(attributes)).iter_mut().zip(values) {
            crate::money::add(total, *v, || format!("explain {d}"))?;
        }
        Ok(())
    }

    /// A key one v1 run gets wrong: with no copy in the run it is missed (its winner's values);
    /// with several, every copy after the first is counted again.
    fn wrong(&mut self, attributes: &[String], mut line: EntityLine, in_run: &[i64], first: &[i64]) -> Result<()> {
        if line.copies_in_run == 0 {
            self.add(attributes, |p| &mut p.missed, &line.measures)?;
            let p = self.of(attributes);
            p.missed_entities += 1;
            p.missed_lines.push(line);
        } else {
            line.measures = in_run
                .iter()
                .zip(first)
                .map(|(a, b)| a.checked_sub(*b).ok_or_else(|| eyre!("explain: a sum past 64 bits")))
                .collect::<Result<_>>()?;
            self.add(attributes, |p| &mut p.double_counted, &line.measures)?;
            let p = self.of(attributes);
            p.double_counted_copies += line.copies_in_run - 1;
            p.double_counted_lines.push(line);
        }
        Ok(())
    }

    fn report(self) -> Result<ExplainReport> {
        let (model, d) = (self.model.clone(), self.d);
        let mut parts: Vec<PartExplain> = self.by.into_values().collect();
        for p in &mut parts {
            for i in 0..p.gap.len() {
                let gap = i128::from(p.recompute[i]) - i128::from(p.missed[i]) + i128::from(p.double_counted[i]) - i128::from(p.v1[i]);
                p.gap[i] = i64::try_from(gap).map_err(|_| eyre!("explain {d}: the identity's gap passes 64 bits"))?;
            }
        }
        Ok(ExplainReport { model, business_date: d, parts })
    }
}

/// A retail lab's date: the recompute by store, the baskets from bronze, one v1 run straight from
/// bronze.
pub fn explain(lab: &Lab, d: NaiveDate) -> Result<ExplainReport> {
    crate::recompute::ensure_cached(lab)?;
    let store = lab.store();
    let model = crate::model::retail();
    let mut parts = Parts::new(&model, d);
    for r in store.recompute_by_store(d)? {
        parts.add(&[r.country, r.currency], |p| &mut p.recompute, &[r.baskets, r.revenue_minor])?;
    }
    for b in store.explain_baskets(d)? {
        let line = EntityLine {
            key: b.basket_id,
            grain: vec![b.store_id],
            upload_date: if b.copies_in_run == 0 { b.winner_upload } else { d },
            copies_in_run: b.copies_in_run,
            measures: vec![1, b.winner_revenue_minor],
        };
        parts.wrong(&[b.country, b.currency], line, &[b.copies_in_run, b.revenue_in_run], &[1, b.first_in_run])?;
    }
    for r in store.v1_once_by_country(d)? {
        parts.add(&[r.country, r.currency], |p| &mut p.v1, &[r.events, r.revenue_minor])?;
    }
    parts.report()
}

/// A model lab's date: its kept recount, its keys from its records, one v1 run from its records.
pub fn model_explain(lab: &Lab, model: &Model, d: NaiveDate) -> Result<ExplainReport> {
    model_explain_with(lab, model, d, &crate::lake::model::recompute_of(lab, model, Some(d))?)
}

/// The same with the recount's rows in hand (the explorer's, of every date).
pub fn model_explain_with(lab: &Lab, model: &Model, d: NaiveDate, recount: &[crate::model::recount::ModelRow]) -> Result<ExplainReport> {
    let mut parts = Parts::new(model, d);
    for r in recount.iter().filter(|r| r.business_date == d) {
        parts.add(&r.attributes, |p| &mut p.recompute, &r.measures)?;
    }
    for r in lab.store().model_explain_entities(d)? {
        let attributes = named(&model.attributes, [r.a1, r.a2, r.a3, r.a4]);
        let line = EntityLine {
            key: r.entity_key,
            grain: named(&model.grain, [r.g1, r.g2, r.g3, r.g4]),
            upload_date: if r.copies_in_run == 0 { r.winner_upload } else { d },
            copies_in_run: r.copies_in_run,
            measures: named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
        };
        let in_run = named(&model.measures, [r.r1, r.r2, r.r3, r.r4, r.r5, r.r6]);
        parts.wrong(&attributes, line, &in_run, &named(&model.measures, [r.f1, r.f2, r.f3, r.f4, r.f5, r.f6]))?;
    }
    for r in lab.store().model_v1_once(d)? {
        parts.add(
            &named(&model.attributes, [r.a1, r.a2, r.a3, r.a4]),
            |p| &mut p.v1,
            &named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
        )?;
    }
    parts.report()
}

impl ExplainReport {
    /// The columns of the parts' attributes (retail: country).
    fn part_columns(&self) -> Vec<String> {
        part_positions(&self.model, &shown_measures(&self.model)).into_iter().map(|i| self.model.attributes[i].clone()).collect()
    }

    /// A measure's value in a part as a cell: money by the part's currency.
    fn cell(&self, p: &PartExplain, i: usize, v: i64) -> Cell {
        match currency_of(&self.model, i, &p.attributes) {
            Some(c) => Cell::money(v, c),
            None => Cell::Int(v),
        }
    }

    /// A measure's value in a part as people read it.
    pub fn amount(&self, p: &PartExplain, i: usize, v: i64) -> String {
        match currency_of(&self.model, i, &p.attributes) {
            Some(c) => crate::money::format_major(v, c),
            None => crate::money::format_count(v),
        }
    }

    pub fn table(&self) -> Table {
        let m = &self.model;
        let shown = shown_measures(m);
        let name =
            |i: usize, label: &str| if shown.len() > 1 { format!("{} {label}", measure_label(&m.measures[i])) } else { label.to_string() };
        let mut cols: Vec<(String, String)> = self.part_columns().into_iter().map(|c| (c.clone(), c)).collect();
        for &i in &shown {
            for (side, label) in
                [("recompute", "recompute"), ("missed", "- missed"), ("double_counted", "+ double counted"), ("v1", "= v1 (one run)")]
            {
                cols.push((measure_key(&m.measures[i], Some(side)), name(i, label)));
            }
        }
        cols.push(("identity".into(), "identity".into()));
        cols.extend(shown.iter().map(|&i| (measure_key(&m.measures[i], Some("identity_gap")), name(i, "gap"))));
        cols.push((format!("missed_{}s", m.entity), format!("missed {}s", m.entity)));
        cols.push(("double_counted_copies".into(), "extra copies".into()));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new("", &refs);
        let positions = part_positions(m, &shown);
        for p in &self.parts {
            let holds = p.identity_holds();
            let mut cells: Vec<Cell> = positions.iter().map(|&i| Cell::text(&p.attributes[i])).collect();
            for &i in &shown {
                cells.extend([p.recompute[i], p.missed[i], p.double_counted[i], p.v1[i]].map(|v| self.cell(p, i, v)));
            }
            cells.push(Cell::text(if holds { "holds" } else { "BROKEN" }));
            cells.extend(shown.iter().map(|&i| self.cell(p, i, p.gap[i])));
            cells.extend([Cell::Int(p.missed_entities), Cell::Int(p.double_counted_copies)]);
            t.rows.push(super::Row {
                cells,
                flag: if holds { None } else { Some(Status::Fail) },
                drill: Some(format!("explain:{}:{}", self.business_date, p.part)),
                summary: false,
            });
        }
        t
    }

    /// The entities behind the numbers: every missed one and every one counted twice.
    pub fn baskets_table(&self) -> Table {
        let m = &self.model;
        let shown = shown_measures(m);
        let mut cols: Vec<(String, String)> = vec![("kind".into(), "kind".into())];
        cols.extend(self.part_columns().into_iter().map(|c| (c.clone(), c)));
        cols.push((m.key.clone(), m.key.clone()));
        cols.extend(m.grain.iter().map(|g| (g.clone(), g.clone())));
        cols.extend([("upload_date", "upload"), ("copies_in_run", "copies in run")].map(|(k, l)| (k.to_string(), l.to_string())));
        cols.extend(shown.iter().map(|&i| (measure_key(&m.measures[i], None), measure_label(&m.measures[i]).to_string())));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new(format!("{}s behind the numbers", m.entity), &refs);
        let positions = part_positions(m, &shown);
        for p in &self.parts {
            for (kind, list) in [("missed", &p.missed_lines), ("double counted", &p.double_counted_lines)] {
                for b in list {
                    let mut cells = vec![Cell::text(kind)];
                    cells.extend(positions.iter().map(|&i| Cell::text(&p.attributes[i])));
                    cells.push(Cell::text(&b.key));
                    cells.extend(b.grain.iter().map(Cell::text));
                    cells.extend([Cell::Date(b.upload_date), Cell::Int(b.copies_in_run)]);
                    cells.extend(shown.iter().map(|&i| self.cell(p, i, b.measures[i])));
                    t.push(cells);
                }
            }
        }
        t
    }

    /// One part's identity in words, measure by measure: "GB: £10.00 - £1.00 + £2.00 = £11.00 = one
    /// v1 run £11.00".
    fn sentence(&self, p: &PartExplain, i: usize) -> String {
        let a = |v: i64| self.amount(p, i, v);
        let bridged = p.recompute[i].saturating_sub(p.missed[i]).saturating_add(p.double_counted[i]);
        let who = match (p.part.is_empty(), shown_measures(&self.model).len() > 1) {
            (_, true) => format!("{} {}", p.part, self.model.measures[i].name).trim().to_string(),
            (false, false) => p.part.clone(),
            (true, false) => self.model.measures[i].name.clone(),
        };
        let is = if p.gap[i] == 0 { "=" } else { "≠" };
        format!(
            "{who}: {} - {} + {} = {} {is} one v1 run {}",
            a(p.recompute[i]),
            a(p.missed[i]),
            a(p.double_counted[i]),
            a(bridged),
            a(p.v1[i])
        )
    }
}

impl Report for ExplainReport {
    fn kind(&self) -> &'static str {
        "explain"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!(
            "explain {}: recompute - missed + double counted = what ONE v1 run counts (check's v1 column sums every run appended)",
            self.business_date
        )
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table()]
    }
    fn notes(&self) -> Vec<Note> {
        let shown = shown_measures(&self.model);
        self.parts
            .iter()
            .flat_map(|p| shown.iter().map(move |&i| (p, i)))
            .map(|(p, i)| Note { status: if p.gap[i] == 0 { Status::Pass } else { Status::Fail }, text: self.sentence(p, i) })
            .collect()
    }
}
