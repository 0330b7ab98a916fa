//! The careful reader of an event line: any valid JSON, with each structural fault named in the
//! contract's words (`docs/data-contract.md`, "Reading a line"), never in a JSON library's. The
//! fast reader (`fast_line`) takes the usual line; this one decides every other. The Spark
//! driver's `recount_spark/parse.py` gives the same verdicts and texts; the shared corpus
//! (`tests/corpus/lines.jsonl`) holds the two together.
//!
//! The checks, in order: not one valid JSON value (serde_json's syntax, depth and number range),
//! not an object, a field the contract reads given twice (first in line order), a string field
//! of another type (in the contract's field order), tenders not an array, and for each tender in
//! turn: not an object, `method` or `amount_minor` given twice, `method` not a string,
//! `amount_minor` not a number. Fields the contract does not read are skipped unchecked.

use super::line::{Line, Tender};
use serde::Deserializer;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The contract's string fields, in its order.
const STRING_FIELDS: [&str; 7] = ["event_id", "basket_id", "store_id", "till_id", "event_ts", "uploaded_at", "currency"];

/// The line's fields, or the structural reason it is quarantined.
pub(super) fn read(line: &str) -> Result<Line<'_>, String> {
    // One valid JSON value, all of it read: serde_json's grammar, its depth limit (nesting 128
    // deep), numbers a double holds and no lone surrogate escape, in ignored fields too (the
    // reader below skips those without looking).
    if serde_json::from_str::<serde_json::Value>(line).is_err() {
        return Err("malformed JSON: not one valid JSON value".into());
    }
    let mut de = serde_json::Deserializer::from_str(line);
    let top = match de.deserialize_any(TopVisitor).and_then(|top| de.end().map(|()| top)) {
        Ok(top) => top,
        Err(_) => return Err("malformed JSON: not one valid JSON value".into()),
    };
    let Top::Object(top) = top else { return Err("malformed JSON: not an object".into()) };
    let top = *top;
    if let Some(name) = top.duplicate {
        return Err(format!("malformed JSON: duplicate field `{name}`"));
    }
    let mut line = Line::default();
    for (i, value) in top.strings.into_iter().enumerate() {
        let name = STRING_FIELDS[i];
        let slot = match i {
            0 => &mut line.event_id,
            1 => &mut line.basket_id,
            2 => &mut line.store_id,
            3 => &mut line.till_id,
            4 => &mut line.event_ts,
            5 => &mut line.uploaded_at,
            _ => &mut line.currency,
        };
        *slot = match value {
            Val::Absent | Val::Null => None,
            Val::Str(s) => Some(s),
            Val::Num(_) | Val::Other => return Err(format!("malformed JSON: {name} is not a string")),
        };
    }
    line.tenders = match top.tenders {
        Tenders::Absent | Tenders::Null => None,
        Tenders::NotArray => return Err("malformed JSON: tenders is not an array".into()),
        Tenders::Items(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, t) in items.into_iter().enumerate() {
                let n = i + 1;
                let TenderVal::Object { duplicate, method, amount } = t else {
                    return Err(format!("malformed JSON: tender {n} is not an object"));
                };
                if let Some(name) = duplicate {
                    return Err(format!("malformed JSON: tender {n} has a duplicate field `{name}`"));
                }
                let method = match method {
                    Val::Absent | Val::Null => None,
                    Val::Str(s) => Some(s),
                    _ => return Err(format!("malformed JSON: tender {n}: method is not a string")),
                };
                let amount_minor = match amount {
                    Val::Absent | Val::Null => None,
                    Val::Num(x) => Some(x),
                    _ => return Err(format!("malformed JSON: tender {n}: amount_minor is not a number")),
                };
                out.push(Tender { method, amount_minor });
            }
            Some(out)
        }
    };
    Ok(line)
}

/// A visitor's answers for the scalar kinds it does not take (booleans, numbers, strings): each
/// is read through (a number checked to be finite) and answers `$other`.
macro_rules! scalars_are {
    ($value:ty, $other:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$value, E> {
            Ok($other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$value, E> {
            Ok($other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<$value, E> {
            ValVisitor.visit_f64(v).map(|_| $other)
        }
        fn visit_str<E>(self, _: &str) -> Result<$value, E> {
            Ok($other)
        }
    };
}

/// One value as the contract sees it.
enum Val<'a> {
    Absent,
    Null,
    Str(Cow<'a, str>),
    Num(serde_json::Number),
    /// A boolean, an array or an object (read through, checked to be valid JSON).
    Other,
}

struct ValVisitor;

impl<'de> Visitor<'de> for ValVisitor {
    type Value = Val<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Val<'de>, E> {
        Ok(Val::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Val<'de>, E> {
        Ok(Val::Other)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Val<'de>, E> {
        Ok(Val::Num(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Val<'de>, E> {
        Ok(Val::Num(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Val<'de>, E> {
        serde_json::Number::from_f64(v).map(Val::Num).ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Val<'de>, E> {
        Ok(Val::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Val<'de>, E> {
        Ok(Val::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Val<'de>, E> {
        Ok(Val::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Val::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Val::Other)
    }
}

impl<'de> de::Deserialize<'de> for Val<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValVisitor)
    }
}

/// A map key, borrowed where the line has no escape in it.
struct MapKey<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for MapKey<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_str(ValVisitor)? {
            Val::Str(s) => Ok(MapKey(s)),
            _ => Err(de::Error::custom("a key is a string")),
        }
    }
}

enum Tenders<'a> {
    Absent,
    Null,
    NotArray,
    Items(Vec<TenderVal<'a>>),
}

enum TenderVal<'a> {
    NotObject,
    Object { duplicate: Option<&'static str>, method: Val<'a>, amount: Val<'a> },
}

impl<'de> de::Deserialize<'de> for Tenders<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TendersVisitor;
        impl<'de> Visitor<'de> for TendersVisitor {
            type Value = Tenders<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("the tenders")
            }
            fn visit_unit<E>(self) -> Result<Tenders<'de>, E> {
                Ok(Tenders::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tenders<'de>, A::Error> {
                let mut items = Vec::new();
                while let Some(t) = seq.next_element::<TenderVal>()? {
                    items.push(t);
                }
                Ok(Tenders::Items(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Tenders<'de>, A::Error> {
                ValVisitor.visit_map(map).map(|_| Tenders::NotArray)
            }
            scalars_are!(Tenders<'de>, Tenders::NotArray);
        }
        d.deserialize_any(TendersVisitor)
    }
}

impl<'de> de::Deserialize<'de> for TenderVal<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TenderVisitor;
        impl<'de> Visitor<'de> for TenderVisitor {
            type Value = TenderVal<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tender")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TenderVal<'de>, A::Error> {
                let (mut duplicate, mut method, mut amount) = (None, Val::Absent, Val::Absent);
                while let Some(MapKey(k)) = map.next_key::<MapKey>()? {
                    let (name, slot) = match &*k {
                        "method" => ("method", &mut method),
                        "amount_minor" => ("amount_minor", &mut amount),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    let v = map.next_value::<Val>()?;
                    if matches!(slot, Val::Absent) {
                        *slot = v;
                    } else {
                        duplicate.get_or_insert(name);
                    }
                }
                Ok(TenderVal::Object { duplicate, method, amount })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TenderVal<'de>, A::Error> {
                ValVisitor.visit_seq(seq).map(|_| TenderVal::NotObject)
            }
            fn visit_unit<E>(self) -> Result<TenderVal<'de>, E> {
                Ok(TenderVal::NotObject)
            }
            scalars_are!(TenderVal<'de>, TenderVal::NotObject);
        }
        d.deserialize_any(TenderVisitor)
    }
}

/// The whole line: an object with its contract fields, or any other JSON value.
enum Top<'a> {
    Object(Box<TopObject<'a>>),
    NotObject,
}

struct TopObject<'a> {
    duplicate: Option<&'static str>,
    strings: [Val<'a>; 7],
    tenders: Tenders<'a>,
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
        let mut top = TopObject { duplicate: None, strings: std::array::from_fn(|_| Val::Absent), tenders: Tenders::Absent };
        while let Some(MapKey(k)) = map.next_key::<MapKey>()? {
            if &*k == "tenders" {
                let t = map.next_value::<Tenders>()?;
                if matches!(top.tenders, Tenders::Absent) {
                    top.tenders = t;
                } else {
                    top.duplicate.get_or_insert("tenders");
                }
                continue;
            }
            let Some(i) = STRING_FIELDS.iter().position(|f| *f == &*k) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let v = map.next_value::<Val>()?;
            if matches!(top.strings[i], Val::Absent) {
                top.strings[i] = v;
            } else {
                top.duplicate.get_or_insert(STRING_FIELDS[i]);
            }
        }
        Ok(Top::Object(Box::new(top)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top<'de>, A::Error> {
        ValVisitor.visit_seq(seq).map(|_| Top::NotObject)
    }
    fn visit_unit<E>(self) -> Result<Top<'de>, E> {
        Ok(Top::NotObject)
    }
    scalars_are!(Top<'de>, Top::NotObject);
}
