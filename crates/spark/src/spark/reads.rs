//! What the driver answers about a warehouse it reads: the snapshots of a table, and a date's
//! gold store by store beside the lab's.

use super::*;

/// One Iceberg snapshot of a table, with every summary property.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct IcebergSnapshot {
    pub snapshot_id: i64,
    pub parent_id: Option<i64>,
    pub committed_at: String,
    pub operation: Option<String>,
    pub current: bool,
    pub current_ancestor: bool,
    pub properties: std::collections::BTreeMap<String, String>,
}

/// What `snapshots` answers: a table's Iceberg snapshots, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct IcebergSnapshotsReport {
    pub table: String,
    pub snapshots: Vec<IcebergSnapshot>,
}

impl Report for IcebergSnapshotsReport {
    fn kind(&self) -> &'static str {
        "spark-snapshots"
    }
    fn headline(&self) -> String {
        format!("{}: {} Iceberg snapshot(s), oldest first", self.table, self.snapshots.len())
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "",
            &[
                ("snapshot_id", "snapshot id"),
                ("parent_id", "parent"),
                ("committed_at", "committed at"),
                ("operation", "operation"),
                ("current", "current"),
                ("run", "run"),
                ("upload", "upload"),
                ("trigger", "trigger"),
                ("dates", "dates"),
                ("properties", "properties"),
            ],
        );
        // These properties have columns of their own; the rest are listed in the last one.
        use crate::warehouse::keys;
        let own = [keys::RUN, keys::UPLOAD, keys::TRIGGER, keys::DATES].map(crate::warehouse::PropKey::full);
        for s in &self.snapshots {
            let p = |k: &str| s.properties.get(k).map(Cell::text).unwrap_or(Cell::Empty);
            let rest: Vec<String> = s.properties.iter().filter(|(k, _)| !own.contains(k)).map(|(k, v)| format!("{k}={v}")).collect();
            t.push_flagged(
                vec![
                    Cell::text(s.snapshot_id.to_string()),
                    s.parent_id.map(|p| Cell::text(p.to_string())).unwrap_or(Cell::Empty),
                    Cell::text(&s.committed_at),
                    s.operation.as_deref().map(Cell::text).unwrap_or(Cell::Empty),
                    Cell::text(if s.current {
                        "current"
                    } else if s.current_ancestor {
                        "ancestor"
                    } else {
                        ""
                    }),
                    p(&own[0]),
                    p(&own[1]),
                    p(&own[2]),
                    p(&own[3]),
                    Cell::text(rest.join("; ")),
                ],
                s.current.then_some(Status::Pass),
            );
        }
        vec![t]
    }
}

/// One store's gold of a date.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct StoreGold {
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub baskets: i64,
    pub revenue_minor: i64,
}

/// What `gold` answers: gold of one date, store by store, as of a snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct GoldOfDate {
    pub business_date: NaiveDate,
    pub snapshot_id: Option<i64>,
    pub rows: Vec<StoreGold>,
}

/// Spark's gold of a date beside the lab's, store by store.
#[derive(Debug, Clone, Serialize)]
pub struct SparkCheck {
    pub business_date: NaiveDate,
    pub spark_snapshot_id: Option<i64>,
    pub lab: PathBuf,
    pub stores: Vec<StoreComparison>,
    pub agree: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StoreComparison {
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub spark_baskets: i64,
    pub lab_baskets: i64,
    pub spark_revenue_minor: i64,
    pub lab_revenue_minor: i64,
    pub agree: bool,
}

impl SparkCheck {
    pub fn new(business_date: NaiveDate, spark: GoldOfDate, lab_dir: &Path, lab: Vec<crate::store::StoreFigures>) -> SparkCheck {
        let lab: Vec<StoreGold> = lab
            .into_iter()
            .map(|r| StoreGold {
                store_id: r.store_id,
                country: r.country,
                currency: r.currency,
                baskets: r.baskets,
                revenue_minor: r.revenue_minor,
            })
            .collect();
        // Each store's row on either side; a store agrees when both rows are the same row.
        let mut pairs: std::collections::BTreeMap<&str, (Option<&StoreGold>, Option<&StoreGold>)> = Default::default();
        for r in &spark.rows {
            pairs.entry(&r.store_id).or_default().0 = Some(r);
        }
        for r in &lab {
            pairs.entry(&r.store_id).or_default().1 = Some(r);
        }
        let stores: Vec<StoreComparison> = pairs
            .into_iter()
            .filter_map(|(store_id, (s, l))| {
                let shown = s.or(l)?;
                Some(StoreComparison {
                    store_id: store_id.to_string(),
                    country: shown.country.clone(),
                    currency: shown.currency.clone(),
                    spark_baskets: s.map_or(0, |r| r.baskets),
                    lab_baskets: l.map_or(0, |r| r.baskets),
                    spark_revenue_minor: s.map_or(0, |r| r.revenue_minor),
                    lab_revenue_minor: l.map_or(0, |r| r.revenue_minor),
                    agree: s == l,
                })
            })
            .collect();
        let agree = stores.iter().all(|s| s.agree);
        SparkCheck { business_date, spark_snapshot_id: spark.snapshot_id, lab: lab_dir.to_path_buf(), stores, agree }
    }
}

impl Report for SparkCheck {
    fn kind(&self) -> &'static str {
        "spark-check"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!(
            "spark check {}: Iceberg gold (snapshot {}) beside the lab at {}",
            self.business_date,
            self.spark_snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "none".into()),
            self.lab.display()
        )
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "",
            &[
                ("store_id", "store"),
                ("country", "country"),
                ("spark_baskets", "spark baskets"),
                ("lab_baskets", "lab baskets"),
                ("spark_revenue_minor", "spark revenue"),
                ("lab_revenue_minor", "lab revenue"),
                ("status", "status"),
            ],
        );
        for s in &self.stores {
            t.push_flagged(
                vec![
                    Cell::text(&s.store_id),
                    Cell::text(&s.country),
                    Cell::Int(s.spark_baskets),
                    Cell::Int(s.lab_baskets),
                    Cell::money(s.spark_revenue_minor, &s.currency),
                    Cell::money(s.lab_revenue_minor, &s.currency),
                    Cell::Status(if s.agree { Status::Pass } else { Status::Fail }),
                ],
                (!s.agree).then_some(Status::Fail),
            );
        }
        vec![t]
    }
    fn notes(&self) -> Vec<Note> {
        let differ = self.stores.iter().filter(|s| !s.agree).count();
        vec![if self.agree {
            Note { status: Status::Pass, text: format!("Spark and the lab agree on all {} store(s), to the minor unit", self.stores.len()) }
        } else {
            Note { status: Status::Fail, text: format!("{differ} of {} store(s) differ between Spark and the lab", self.stores.len()) }
        }]
    }
}

/// `spark check DATE` on a model's warehouse: the warehouse's gold of the date (read through its
/// mirror) beside the lab's (--lab), row by row of the model's grain.
#[derive(Debug, Clone, Serialize)]
pub struct SparkModelCheck {
    pub model: crate::model::Model,
    pub business_date: NaiveDate,
    pub lab: PathBuf,
    pub spark: Vec<crate::model::recount::ModelRow>,
    pub lab_rows: Vec<crate::model::recount::ModelRow>,
    pub agree: bool,
}

impl SparkModelCheck {
    pub fn new(
        model: crate::model::Model,
        business_date: NaiveDate,
        lab: &Path,
        (spark, lab_rows): (Vec<crate::model::recount::ModelRow>, Vec<crate::model::recount::ModelRow>),
    ) -> SparkModelCheck {
        let agree = spark == lab_rows;
        SparkModelCheck { model, business_date, lab: lab.to_path_buf(), spark, lab_rows, agree }
    }

    /// Each grain's measures on either side (None: no row there), in grain order.
    fn pairs(&self) -> Vec<GrainPair<'_>> {
        let mut grains: Vec<&Vec<String>> = self.spark.iter().chain(&self.lab_rows).map(|r| &r.grain).collect();
        grains.sort();
        grains.dedup();
        grains.into_iter().map(|g| (g, measures_of(&self.spark, g), measures_of(&self.lab_rows, g))).collect()
    }
}

/// A grain's values, and its measures in Spark's gold and in the lab's (None: no row there).
type GrainPair<'r> = (&'r Vec<String>, Option<&'r Vec<i64>>, Option<&'r Vec<i64>>);

/// The measures of `rows`' row of grain `g` (None: no such row).
fn measures_of<'r>(rows: &'r [crate::model::recount::ModelRow], g: &[String]) -> Option<&'r Vec<i64>> {
    rows.iter().find(|r| r.grain == g).map(|r| &r.measures)
}

impl Report for SparkModelCheck {
    fn kind(&self) -> &'static str {
        "spark-check"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!("spark check {}: Iceberg gold.{} beside the lab at {}", self.business_date, self.model.gold, self.lab.display())
    }
    fn tables(&self) -> Vec<Table> {
        let mut cols: Vec<(String, String)> = self.model.grain.iter().map(|c| (c.clone(), c.clone())).collect();
        for m in &self.model.measures {
            for side in ["spark", "lab"] {
                cols.push((format!("{side}_{}", m.name), format!("{side} {}", m.name)));
            }
        }
        cols.push(("status".into(), "status".into()));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new("", &refs);
        for (g, spark, lab) in self.pairs() {
            let mut row: Vec<Cell> = g.iter().map(Cell::text).collect();
            for i in 0..self.model.measures.len() {
                for side in [spark, lab] {
                    row.push(side.map_or(Cell::Absent("none".into()), |m| Cell::Int(m[i])));
                }
            }
            let agree = spark == lab;
            row.push(Cell::Status(if agree { Status::Pass } else { Status::Fail }));
            t.push_flagged(row, (!agree).then_some(Status::Fail));
        }
        vec![t]
    }
    fn notes(&self) -> Vec<Note> {
        let rows = self.pairs();
        let differ = rows.iter().filter(|(_, s, l)| s != l).count();
        vec![if self.agree {
            Note { status: Status::Pass, text: format!("Spark and the lab agree on all {} row(s) of the date", rows.len()) }
        } else {
            Note { status: Status::Fail, text: format!("{differ} of {} row(s) of the date differ between Spark and the lab", rows.len()) }
        }]
    }
}
