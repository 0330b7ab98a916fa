//! A model: the parts of a daily metric that the contract's rules need (section 7 of
//! docs/data-contract.md). The entity and its business key, the event and arrival times, the
//! dimension that gives each event its time zone (or a business date read as-is), gold's grain,
//! the attributes carried into gold, the measures and the per-field checks. Retail is one model,
//! manufacturing a second; any other is a `[model]` table in a world's `recount.toml`.
//!
//! This module is data and checks only, with no I/O: `read` applies a model to one line, and
//! `recount` counts a world's gold from its raw files with it.

pub mod copies;
mod json;
pub mod read;
pub mod recount;

use color_eyre::eyre::{Result, bail};
use serde::{Deserialize, Serialize};

/// A measure: how many entities, or the sum of an integer field over them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// The gold column.
    pub name: String,
    /// `"count"`, or the field summed: a path (`units`), or a sum over a list's elements
    /// (`tenders[].amount_minor`).
    pub of: String,
    /// A money measure: the attribute that names its ISO-4217 currency.
    #[serde(default)]
    pub currency: Option<String>,
}

impl Measure {
    pub fn is_count(&self) -> bool {
        self.of == "count"
    }
}

/// A check on each line; a line that breaks one is quarantined with the check's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub name: String,
    /// `FIELD >= 0`, or `FIELD <= FIELD`: integer fields of the line; or `LIST[] not empty`: a
    /// list that must hold an element (a sum over an empty list is 0 unless a check refuses it).
    pub rule: String,
}

/// Where a business date comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dimension {
    /// The dimension file at the world's root (CSV).
    pub file: String,
    /// Its key column, which the event's field of the same name refers to.
    pub key: String,
    /// Its time zone column (IANA names).
    pub timezone: String,
}

/// A model as `recount.toml` writes it (`[model]`), and as the built-in ones are defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    /// The gold table, `gold.NAME`.
    pub gold: String,
    /// What one entity is called in a report ("basket", "record").
    pub entity: String,
    /// The business key: survives re-sends.
    pub key: String,
    /// The message's own id: a re-send gets a new one (it orders copies after the arrival time).
    #[serde(default = "default_event_id")]
    pub event_id: String,
    pub event_time: String,
    pub arrival_time: String,
    /// The folder under the world's root that holds the upload partitions.
    pub events_root: String,
    /// The dimension that gives each event its time zone; None with `business_date`.
    #[serde(default)]
    pub dimension: Option<Dimension>,
    /// A date field read as-is as the business date, for feeds that already carry one.
    #[serde(default)]
    pub business_date: Option<String>,
    /// Gold's grain after `business_date`: event fields (the dimension's key among them).
    pub grain: Vec<String>,
    /// Dimension columns carried into gold after the grain.
    #[serde(default)]
    pub attributes: Vec<String>,
    pub measures: Vec<Measure>,
    #[serde(default)]
    pub checks: Vec<Check>,
}

fn default_event_id() -> String {
    "event_id".into()
}

/// The built-in models' names.
pub const BUILT_IN: [&str; 2] = ["retail", "manufacturing"];

/// A model in `recount.toml`: a built-in's name, or a table of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ModelChoice {
    Named(String),
    Own(Box<Model>),
}

/// Read by what the value is (a name, or a table), so that a table's error is the table's own
/// (`unknown field `grian``), never "did not match any variant" of a type of ours.
impl<'de> Deserialize<'de> for ModelChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Choice;
        impl<'de> serde::de::Visitor<'de> for Choice {
            type Value = ModelChoice;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a built-in model's name (model = \"manufacturing\") or a [model] table")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<ModelChoice, E> {
                Ok(ModelChoice::Named(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<ModelChoice, A::Error> {
                Model::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|m| ModelChoice::Own(Box::new(m)))
            }
        }
        d.deserialize_any(Choice)
    }
}

impl ModelChoice {
    /// The model it names, checked.
    pub fn model(&self) -> Result<Model> {
        let m = match self {
            ModelChoice::Named(n) => built_in(n)?,
            ModelChoice::Own(m) => (**m).clone(),
        };
        m.validate()?;
        Ok(m)
    }
}

/// Where retail, the built-in model, finds its uploads in a world (and a lab keeps them).
pub const EVENTS_DIR: &str = "pos/events";

/// A built-in model by name.
pub fn built_in(name: &str) -> Result<Model> {
    match name {
        "retail" => Ok(retail()),
        "manufacturing" => Ok(manufacturing()),
        other => bail!(
            "model = \"{}\" is not a built-in model (there are: {}); a model of your own is a [model] table",
            crate::sanitize::for_terminal(other),
            BUILT_IN.join(", ")
        ),
    }
}

fn measure(name: &str, of: &str, currency: Option<&str>) -> Measure {
    Measure { name: name.into(), of: of.into(), currency: currency.map(str::to_string) }
}

/// The contract's sections 1-4: daily store sales.
pub fn retail() -> Model {
    Model {
        name: "retail".into(),
        gold: "daily_store_sales".into(),
        entity: "basket".into(),
        key: "basket_id".into(),
        event_id: default_event_id(),
        event_time: "event_ts".into(),
        arrival_time: "uploaded_at".into(),
        events_root: EVENTS_DIR.into(),
        dimension: Some(Dimension { file: "stores.csv".into(), key: "store_id".into(), timezone: "timezone".into() }),
        business_date: None,
        grain: vec!["store_id".into()],
        attributes: vec!["country".into(), "currency".into()],
        measures: vec![measure("baskets", "count", None), measure("revenue_minor", "tenders[].amount_minor", Some("currency"))],
        // The contract's section 7: an empty list sums to 0, so retail refuses a basket with no
        // payment by a check of its own (its reader words it as it always has).
        checks: vec![Check { name: "a_basket_has_a_tender".into(), rule: "tenders[] not empty".into() }],
    }
}

/// The contract's section 7: a plant's daily production and defects.
pub fn manufacturing() -> Model {
    Model {
        name: "manufacturing".into(),
        gold: "daily_metrics".into(),
        entity: "record".into(),
        key: "record_id".into(),
        event_id: default_event_id(),
        event_time: "produced_at".into(),
        arrival_time: "uploaded_at".into(),
        events_root: "mes/records".into(),
        dimension: Some(Dimension { file: "plants.csv".into(), key: "plant_id".into(), timezone: "timezone".into() }),
        business_date: None,
        grain: vec!["plant_id".into(), "line_id".into(), "product_id".into()],
        attributes: Vec::new(),
        measures: vec![
            measure("records", "count", None),
            measure("units_produced", "units", None),
            measure("defect_count", "defects", None),
        ],
        checks: vec![
            Check { name: "units_non_negative".into(), rule: "units >= 0".into() },
            Check { name: "defects_non_negative".into(), rule: "defects >= 0".into() },
            Check { name: "defects_within_units".into(), rule: "defects <= units".into() },
        ],
    }
}

/// A parsed check rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    NonNegative(String),
    AtMost(String, String),
    /// The list at this path holds at least one element.
    NotEmpty(String),
}

impl Check {
    pub fn parse(&self) -> Result<Rule> {
        let words: Vec<&str> = self.rule.split_whitespace().collect();
        match words.as_slice() {
            [f, ">=", "0"] if is_path(f) => Ok(Rule::NonNegative(f.to_string())),
            [a, "<=", b] if is_path(a) && is_path(b) => Ok(Rule::AtMost(a.to_string(), b.to_string())),
            [l, "not", "empty"] if l.strip_suffix("[]").is_some_and(is_path) => Ok(Rule::NotEmpty(l.trim_end_matches("[]").to_string())),
            _ => bail!(
                "model.checks: check {:?} has rule {:?}; a rule is `FIELD >= 0`, `FIELD <= FIELD` or `LIST[] not empty`",
                crate::sanitize::for_terminal(&self.name),
                crate::sanitize::for_terminal(&self.rule)
            ),
        }
    }
}

fn is_path(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

fn is_sum_path(s: &str) -> bool {
    match s.split_once("[].") {
        Some((list, field)) => is_path(list) && is_path(field),
        None => is_path(s),
    }
}

impl Model {
    /// The position among the attributes of the one that names money measure `m`'s currency
    /// (None: not a money measure). Every report that shows money by currency asks here.
    pub fn currency_at(&self, m: &Measure) -> Option<usize> {
        m.currency.as_ref().and_then(|c| self.attributes.iter().position(|a| a == c))
    }

    /// Every key a model needs, checked; an error names the key. The one check of a model, for
    /// `model`, `source check`, `land` and Spark alike: what it passes, a lab can land.
    pub fn validate(&self) -> Result<()> {
        let name_ok = name_ok_column;
        if !name_ok(&self.name) {
            bail!("model.name: {:?} is not a name (letters, digits and _)", crate::sanitize::for_terminal(&self.name));
        }
        if !name_ok(&self.gold) {
            bail!("model.gold: {:?} is not a table name (letters, digits and _)", crate::sanitize::for_terminal(&self.gold));
        }
        // The word reports use for one entity ("basket", "production record").
        if self.entity.is_empty() || self.entity.len() > 40 || !self.entity.chars().all(|c| c.is_ascii_alphanumeric() || " _-".contains(c))
        {
            bail!(
                "model.entity: {:?} is not a word for one entity (letters, digits, spaces, _ and -, at most 40)",
                crate::sanitize::for_terminal(&self.entity)
            );
        }
        for (key, v) in [
            ("model.key", &self.key),
            ("model.event_id", &self.event_id),
            ("model.event_time", &self.event_time),
            ("model.arrival_time", &self.arrival_time),
        ] {
            if !is_path(v) {
                bail!("{key}: {:?} is not a field path", crate::sanitize::for_terminal(v));
            }
        }
        match (&self.dimension, &self.business_date) {
            (Some(_), Some(_)) => bail!("model: give either model.dimension or model.business_date, not both"),
            (None, None) => {
                bail!("model: a business date needs model.dimension (a file with a time zone column) or model.business_date (a date field)")
            }
            (Some(d), None) if !self.grain.contains(&d.key) => {
                bail!(
                    "model.grain: it must hold the dimension's key {:?}, which the events refer to",
                    crate::sanitize::for_terminal(&d.key)
                )
            }
            (None, Some(_)) if !self.attributes.is_empty() => {
                bail!("model.attributes: attributes come from the dimension, and this model has none")
            }
            _ => {}
        }
        if self.grain.is_empty() {
            bail!("model.grain: gold's grain needs at least one field after business_date");
        }
        if let Some(g) = self.grain.iter().find(|g| !is_path(g)) {
            bail!("model.grain: {:?} is not a field path", crate::sanitize::for_terminal(g));
        }
        if let Some(a) = self.attributes.iter().find(|a| !name_ok(a)) {
            bail!("model.attributes: {:?} is not a column name (letters, digits and _)", crate::sanitize::for_terminal(a));
        }
        self.validate_measures()?;
        for c in &self.checks {
            if !name_ok(&c.name) {
                bail!("model.checks: {:?} is not a check's name (letters, digits and _)", crate::sanitize::for_terminal(&c.name));
            }
            c.parse()?;
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(twice) = self.gold_columns().into_iter().find(|c| !seen.insert(c.clone())) {
            bail!(
                "model: gold would have two columns named {:?}; business_date, the grain, the attributes and the measures each name one column",
                crate::sanitize::for_terminal(&twice)
            );
        }
        // The lab keeps a model's parts in fixed columns: a model with more is refused here, by
        // `model` and `source check` as by `land`.
        use crate::store::model::{ATTRIBUTE_COLUMNS, GRAIN_COLUMNS, MEASURE_COLUMNS};
        for (what, n, max) in [
            ("model.grain", self.grain.len(), GRAIN_COLUMNS),
            ("model.attributes", self.attributes.len(), ATTRIBUTE_COLUMNS),
            ("model.measures", self.measures.len(), MEASURE_COLUMNS),
        ] {
            if n > max {
                bail!("{what}: {n} given; a lab keeps at most {max}");
            }
        }
        Ok(())
    }

    /// The keys whose values differ between two models, as `recount.toml` names them: what a
    /// lab that holds one says of a world that declares the other.
    pub fn differences(&self, other: &Model) -> Vec<String> {
        let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
            (serde_json::to_value(self), serde_json::to_value(other))
        else {
            return Vec::new();
        };
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).map(|k| format!("model.{k}")).collect()
    }

    fn validate_measures(&self) -> Result<()> {
        if self.measures.is_empty() {
            bail!("model.measures: a model needs at least one measure");
        }
        let mut seen = std::collections::HashSet::new();
        for m in &self.measures {
            if !name_ok_column(&m.name) || !seen.insert(m.name.as_str()) {
                bail!("model.measures: {:?} is not a column name, or names two measures", crate::sanitize::for_terminal(&m.name));
            }
            if !m.is_count() && !is_sum_path(&m.of) {
                bail!(
                    "model.measures.{}: of = {:?}; a measure is \"count\" or the integer field it sums",
                    m.name,
                    crate::sanitize::for_terminal(&m.of)
                );
            }
            match &m.currency {
                Some(c) if !self.attributes.contains(c) => {
                    bail!("model.measures.{}: its currency {:?} is not one of model.attributes", m.name, crate::sanitize::for_terminal(c))
                }
                Some(_) if m.is_count() => bail!("model.measures.{}: a count is not money, so it names no currency", m.name),
                None if looks_like_money(&m.name) => {
                    bail!("model.measures.{}: a money measure names its currency attribute (currency = \"…\")", m.name)
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Gold's columns in the fingerprint's order.
    pub fn gold_columns(&self) -> Vec<String> {
        let mut cols = vec!["business_date".to_string()];
        cols.extend(self.grain.iter().cloned());
        cols.extend(self.attributes.iter().cloned());
        cols.extend(self.measures.iter().map(|m| m.name.clone()));
        cols
    }
}

fn name_ok_column(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A measure named like money (`*_minor`, `revenue`, `amount`) that names no currency: the model
/// would show minor units as plain numbers.
fn looks_like_money(name: &str) -> bool {
    name.ends_with("_minor") || name.contains("revenue") || name.contains("amount")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_models_are_valid_and_their_gold_columns_are_the_contracts() {
        assert_eq!(retail().gold_columns(), ["business_date", "store_id", "country", "currency", "baskets", "revenue_minor"]);
        assert_eq!(
            manufacturing().gold_columns(),
            ["business_date", "plant_id", "line_id", "product_id", "records", "units_produced", "defect_count"]
        );
        for n in BUILT_IN {
            built_in(n).unwrap().validate().unwrap();
        }
        assert!(built_in("parcels").unwrap_err().to_string().contains("retail, manufacturing"));
    }

    #[test]
    fn a_model_that_cannot_work_is_an_error_that_names_its_key() {
        let bad = |f: &dyn Fn(&mut Model)| {
            let mut m = manufacturing();
            f(&mut m);
            m.validate().unwrap_err().to_string()
        };
        assert!(bad(&|m| m.grain = vec!["line_id".into()]).starts_with("model.grain"));
        assert!(bad(&|m| m.measures[1].of = "units + 1".into()).starts_with("model.measures.units_produced"));
        assert!(bad(&|m| m.measures.push(measure("revenue_minor", "amount", None))).contains("names its currency"));
        assert!(bad(&|m| m.measures[0].currency = Some("currency".into())).contains("not one of model.attributes"));
        assert!(bad(&|m| m.checks[2].rule = "defects < units".into()).starts_with("model.checks"));
        assert!(bad(&|m| m.business_date = Some("shift_date".into())).contains("not both"));
        assert!(bad(&|m| m.name = "m\u{1b}]2;PWN\u{7}".into()).starts_with("model.name"));
        assert!(bad(&|m| m.entity = "record\u{1b}[31m".into()).starts_with("model.entity"));
        assert!(bad(&|m| m.measures[1].name = "line_id".into()).contains("two columns named \"line_id\""));
        assert!(bad(&|m| m.measures[1].name = "business_date".into()).contains("two columns named \"business_date\""));
        assert!(bad(&|m| m.checks[0].name = "a b".into()).starts_with("model.checks"));
        assert!(bad(&|m| m.grain.extend(["a", "b"].map(String::from))).contains("model.grain: 5 given; a lab keeps at most 4"));
        assert!(
            bad(&|m| m.measures.extend((0..4).map(|i| measure(&format!("m{i}"), "count", None)))).starts_with("model.measures: 7 given")
        );
        let mut r = retail();
        r.attributes.push("co\u{1b}untry".into());
        assert!(r.validate().unwrap_err().to_string().starts_with("model.attributes"));
        let choice = |text: &str| toml::from_str::<std::collections::BTreeMap<String, ModelChoice>>(text).map_err(|e| e.to_string());
        let own = include_str!("../../../../examples/parcels/recount.toml");
        assert!(choice(own).is_ok());
        let err = choice(&own.replace("grain =", "grian =")).unwrap_err();
        assert!(err.contains("unknown field `grian`") && !err.contains("variant"), "{err}");
        assert!(choice("model = 7").unwrap_err().contains("a built-in model's name"));
        let mut changed = manufacturing();
        changed.grain.pop();
        changed.entity = "unit".into();
        assert_eq!(manufacturing().differences(&changed), ["model.entity", "model.grain"]);
    }
}
