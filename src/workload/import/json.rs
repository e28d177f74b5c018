//! dcsim's JSON flow list.

use super::*;

/// Reads a JSON flow list (see [`WorkloadConfig::Json`]); errors name the file and the
/// entry (0-based index and id).
pub fn read_json(path: &Path, n_hosts: usize) -> Result<Vec<FlowSpec>, String> {
    use serde_json::Value;
    let file = path.display().to_string();
    let text = crate::fileid::read_to_string(path)?;
    // A byte-order mark is no part of the JSON (the CSV reader skips it likewise).
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let JsonFlows(list) = serde_json::from_str(text).map_err(|e| {
        let at = format!(" at line {} column {}", e.line(), e.column());
        let m = e.to_string();
        let m = m.strip_suffix(&at).unwrap_or(&m);
        format!("{file}: line {} column {}: {m}", e.line(), e.column())
    })?;
    if list.is_empty() {
        return Err(format!("{file}: no flows"));
    }
    let mut out = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    let mut deps = Vec::new();
    for (k, o) in list.iter().enumerate() {
        let at = |m: String| format!("{file}: flow [{k}]: {m}");
        for key in o.keys() {
            if ![
                "id", "src", "dst", "size", "start", "after", "prio", "deadline",
            ]
            .contains(&key.as_str())
            {
                return Err(at(format!(
                    "unknown key `{key}` (id, src, dst, size, start, after, prio, deadline)"
                )));
            }
        }
        let int = |key: &str| -> Result<u64, String> {
            o.get(key)
                .ok_or_else(|| at(format!("`{key}` is missing")))?
                .as_u64()
                .ok_or_else(|| at(format!("`{key}` must be a non-negative integer")))
        };
        // Sizes in bytes, times in ns, or strings with units.
        let sized = |key: &str, time: bool| -> Result<u64, String> {
            match o.get(key) {
                Some(Value::Number(n)) => n
                    .as_u64()
                    .ok_or_else(|| at(format!("`{key}` must be a non-negative integer"))),
                Some(Value::String(t)) if time => t
                    .parse::<SimTime>()
                    .map(|x| x.0 / 1000)
                    .map_err(|e| at(format!("`{key}` = \"{t}\": {e}"))),
                Some(Value::String(t)) => t
                    .parse::<Bytes>()
                    .map(|b| b.0)
                    .map_err(|e| at(format!("`{key}` = \"{t}\": {e}"))),
                Some(_) => Err(at(format!(
                    "`{key}` must be a number or a string with a unit"
                ))),
                None => Err(at(format!("`{key}` is missing"))),
            }
        };
        let id = int("id")?;
        let (src, dst) = (int("src")?, int("dst")?);
        let size = sized("size", false)?;
        let start = sized("start", true)?;
        if src as usize >= n_hosts || dst as usize >= n_hosts {
            return Err(at(format!("hosts must be in 0..{n_hosts}")));
        }
        if src == dst {
            return Err(at("src and dst are the same host".into()));
        }
        if size == 0 {
            return Err(at("size must be positive".into()));
        }
        if SimTime::from_ns(start.min(u64::MAX / 1000)) > MAX_START {
            return Err(at(start_beyond(&format!("`{}`", o["start"]))));
        }
        if id > u32::MAX as u64 || !ids.insert(id) {
            return Err(at(format!("id {id} is duplicated or too large")));
        }
        let mut spec = FlowSpec::new(
            id as u32,
            src as u32,
            dst as u32,
            size,
            SimTime::from_ns(start),
        );
        if o.contains_key("prio") {
            match int("prio")? {
                p if p < 8 => spec.prio = Some(p as u8),
                _ => return Err(at("prio must be in 0..8".into())),
            }
        }
        if o.contains_key("deadline") {
            spec.deadline = Some(SimTime::from_ns(sized("deadline", true)?));
        }
        if let Some(a) = o.get("after") {
            let list = a
                .as_array()
                .and_then(|l| l.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                .ok_or_else(|| at("`after` must be a list of flow ids".into()))?;
            if !list.is_empty() {
                deps.push((out.len(), k, list));
            }
        }
        out.push(spec);
    }
    link_dependencies(&mut out, deps, &file, |k| format!("flow [{k}]"))?;
    Ok(out)
}

/// A JSON flow file: an array of objects, each read with its keys checked for repeats
/// (`serde_json`'s own map keeps the last of a key given twice, silently).
pub(in crate::workload) struct JsonFlows(Vec<serde_json::Map<String, serde_json::Value>>);

impl<'de> Deserialize<'de> for JsonFlows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Flows;
        impl<'de> serde::de::Visitor<'de> for Flows {
            type Value = JsonFlows;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON array of flows")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<JsonFlows, A::Error> {
                let mut v = Vec::new();
                while let Some(JsonFlow(o)) = a.next_element()? {
                    v.push(o);
                }
                Ok(JsonFlows(v))
            }
        }
        d.deserialize_seq(Flows)
    }
}

/// One flow of a [`JsonFlows`] file: an object whose keys are each given once.
pub(in crate::workload) struct JsonFlow(serde_json::Map<String, serde_json::Value>);

impl<'de> Deserialize<'de> for JsonFlow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Flow;
        impl<'de> serde::de::Visitor<'de> for Flow {
            type Value = JsonFlow;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a flow (an object)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<JsonFlow, A::Error> {
                let mut o = serde_json::Map::new();
                while let Some(k) = a.next_key::<String>()? {
                    let v = a.next_value()?;
                    if o.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!("`{k}` is given twice")));
                    }
                    o.insert(k, v);
                }
                Ok(JsonFlow(o))
            }
        }
        d.deserialize_map(Flow)
    }
}
