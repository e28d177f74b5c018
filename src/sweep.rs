//! Parameter sweeps: `[sweep] axes` expand an experiment into runs, one per combination of
//! axis values, per scheme, per seed.
//!
//! An axis names a config key by its dotted path (`"workload.load"`, `"gpmp.paths"`) and lists
//! values in the key's own form (numbers, or strings with units). Each combination is applied
//! to the experiment's TOML and the result is parsed and validated like a hand-written config,
//! so an axis value that is out of range fails before anything runs, naming the axis.

use serde::{Deserialize, Serialize};

/// One sweep axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Dotted config key, e.g. "workload.load".
    pub key: String,
    /// Values, in the key's own form.
    #[serde(default)]
    pub values: Vec<toml::Value>,
    /// Instead of `values`: `from`, `to` (inclusive) and `step`, as numbers or as strings
    /// with one unit (`{ from = "20KB", to = "100KB", step = "20KB" }`); expanded into
    /// `values` when the config is read.
    #[serde(default, skip_serializing)]
    pub range: Option<Range>,
}

/// An axis range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub from: toml::Value,
    pub to: toml::Value,
    pub step: toml::Value,
}

/// Splits `"2.5KB"` into (2.5, "KB").
fn split_unit(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(s.len());
    // An exponent marker only counts when a digit follows it.
    let end = if end > 0 && s[..end].ends_with('e') {
        end - 1
    } else {
        end
    };
    let x: f64 = s[..end].parse().ok()?;
    Some((x, s[end..].trim()))
}

/// Expands a range into its values (at most 10 000).
pub fn expand_range(r: &Range) -> Result<Vec<toml::Value>, String> {
    use toml::Value as V;
    fn num(v: &toml::Value) -> Option<(f64, &str)> {
        match v {
            toml::Value::Integer(i) => Some((*i as f64, "")),
            toml::Value::Float(f) => Some((*f, "")),
            toml::Value::String(s) => split_unit(s),
            _ => None,
        }
    }
    let (Some((a, ua)), Some((b, ub)), Some((st, us))) = (num(&r.from), num(&r.to), num(&r.step))
    else {
        return Err("from, to and step must be numbers or strings such as \"20KB\"".into());
    };
    if ua != ub || ua != us {
        return Err(format!(
            "from, to and step must share one unit (got `{ua}`, `{ub}`, `{us}`)"
        ));
    }
    if st.is_nan() || st <= 0.0 || b < a || !a.is_finite() || !b.is_finite() {
        return Err(format!(
            "need step > 0 and from <= to (from {a}, to {b}, step {st})"
        ));
    }
    let n = ((b - a) / st * (1.0 + 1e-12) + 1e-9).floor() as u64 + 1;
    if n > 10_000 {
        return Err(format!("{n} values; at most 10000"));
    }
    let ints = matches!(
        (&r.from, &r.to, &r.step),
        (V::Integer(_), V::Integer(_), V::Integer(_))
    );
    let is_str = matches!(r.from, V::String(_));
    Ok((0..n)
        .map(|k| {
            let x = a + k as f64 * st;
            // Twelve significant decimals: 0.1 + 2 * 0.1 is 0.3, not 0.30000000000000004.
            let x: f64 = format!("{x:.12}").parse().unwrap_or(x);
            if ints {
                V::Integer(x.round() as i64)
            } else if is_str {
                V::String(format!("{x}{ua}"))
            } else {
                V::Float(x)
            }
        })
        .collect())
}

impl Axis {
    /// Expands `range` into `values` (once; then `range` is cleared).
    pub fn expand(&mut self) -> Result<(), String> {
        if let Some(r) = self.range.take() {
            if !self.values.is_empty() {
                return Err("give either values or range, not both".into());
            }
            self.values = expand_range(&r)?;
        }
        Ok(())
    }

    /// Column name for outputs: the last path segment (`load` for `workload.load`).
    pub fn column(&self) -> String {
        axis_column(&self.key)
    }
}

/// The `summary.csv` column of a sweep axis: the last segment of its dotted key (two axes
/// with the same last segment are rejected by validation).
pub fn axis_column(key: &str) -> String {
    key.rsplit('.').next().unwrap_or(key).to_string()
}

/// `[sweep]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SweepConfig {
    /// Axes, outermost first.
    pub axes: Vec<Axis>,
}

/// A value as it appears in run ids and CSV cells.
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Sets `key` (dotted; a numeric segment indexes an array, as in `workload.parts.0.fan_in`)
/// in `table` to `v`, creating intermediate tables.
pub fn set_key(table: &mut toml::Table, key: &str, v: toml::Value) -> Result<(), String> {
    let segs: Vec<&str> = key.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(format!("malformed key `{key}`"));
    }
    let mut cur = table
        .entry(segs[0].to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if segs.len() == 1 {
        *cur = v;
        return Ok(());
    }
    for (i, seg) in segs.iter().enumerate().skip(1) {
        let last = i + 1 == segs.len();
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(seg.to_string(), v);
                    return Ok(());
                }
                t.entry(seg.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let idx: usize = seg
                    .parse()
                    .map_err(|_| format!("`{seg}` in `{key}` must index an array"))?;
                let n = a.len();
                let slot = a
                    .get_mut(idx)
                    .ok_or_else(|| format!("index {idx} in `{key}` is beyond {n} entries"))?;
                if last {
                    *slot = v;
                    return Ok(());
                }
                slot
            }
            _ => return Err(format!("`{}` in `{key}` is not a table", segs[i - 1])),
        };
    }
    unreachable!("the loop returns at the last segment")
}

/// Every combination of axis values, outermost axis slowest.
pub fn combinations(axes: &[Axis]) -> Vec<Vec<toml::Value>> {
    let mut out: Vec<Vec<toml::Value>> = vec![Vec::new()];
    for a in axes {
        let mut next = Vec::with_capacity(out.len() * a.values.len());
        for prefix in &out {
            for v in &a.values {
                let mut p = prefix.clone();
                p.push(v.clone());
                next.push(p);
            }
        }
        out = next;
    }
    out
}

#[cfg(test)]
mod range_tests {
    use super::*;

    fn r(a: toml::Value, b: toml::Value, s: toml::Value) -> Result<Vec<String>, String> {
        expand_range(&Range {
            from: a,
            to: b,
            step: s,
        })
        .map(|v| v.iter().map(value_text).collect())
    }

    #[test]
    fn ranges_with_and_without_units() {
        use toml::Value::{Float as F, Integer as I, String as S};
        assert_eq!(r(I(1), I(7), I(2)).unwrap(), ["1", "3", "5", "7"]);
        assert_eq!(
            r(F(0.3), F(0.8), F(0.1)).unwrap(),
            ["0.3", "0.4", "0.5", "0.6", "0.7", "0.8"]
        );
        assert_eq!(
            r(S("20KB".into()), S("100KB".into()), S("40KB".into())).unwrap(),
            ["20KB", "60KB", "100KB"]
        );
        assert_eq!(
            r(S("0.5us".into()), S("2us".into()), S("0.5us".into())).unwrap(),
            ["0.5us", "1us", "1.5us", "2us"]
        );
        assert!(r(S("20KB".into()), S("1MB".into()), S("20KB".into())).is_err());
        assert!(r(I(5), I(1), I(1)).is_err());
        assert!(r(I(1), I(5), I(0)).is_err());
        assert!(r(F(0.0), F(1.0), F(1e-6)).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_are_outermost_first() {
        let axes = vec![
            Axis {
                key: "a.x".into(),
                values: vec![1.into(), 2.into()],
                range: None,
            },
            Axis {
                key: "b".into(),
                values: vec!["p".into(), "q".into(), "r".into()],
                range: None,
            },
        ];
        let c = combinations(&axes);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], vec![toml::Value::from(1), toml::Value::from("p")]);
        assert_eq!(c[5], vec![toml::Value::from(2), toml::Value::from("r")]);
        assert_eq!(axes[0].column(), "x");
    }
}
