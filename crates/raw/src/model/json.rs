//! A JSON value whose objects keep their keys as written, duplicates included: the careful
//! model reader (`read`) refuses a field given twice rather than take serde_json's last copy.

/// A JSON value whose objects keep their keys as written, duplicates included (serde_json's
/// `Value` keeps the last), so a reader can refuse a field given twice rather than guess.
#[derive(Debug)]
pub(super) enum Json {
    Null,
    Bool,
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Json, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Json, E> {
                Ok(Json::Bool)
            }
            fn visit_i64<E>(self, n: i64) -> std::result::Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> std::result::Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> std::result::Result<Json, E> {
                serde_json::Number::from_f64(n).map(Json::Number).ok_or_else(|| E::custom("a number that is not finite"))
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> std::result::Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element()? {
                    out.push(v);
                }
                Ok(Json::Array(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = map.next_entry()? {
                    out.push(kv);
                }
                Ok(Json::Object(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// What a path finds in a value: nothing, one value, or a key of the path given twice.
pub(super) enum Lookup<'v> {
    No,
    One(&'v Json),
    Twice,
}

pub(super) fn at<'v>(v: &'v Json, path: &str) -> Lookup<'v> {
    let mut here = v;
    for k in path.split('.') {
        let Json::Object(pairs) = here else { return Lookup::No };
        let mut hits = pairs.iter().filter(|(key, _)| key == k);
        match (hits.next(), hits.next()) {
            (None, _) => return Lookup::No,
            (Some(_), Some(_)) => return Lookup::Twice,
            (Some((_, v)), None) => here = v,
        }
    }
    Lookup::One(here)
}
