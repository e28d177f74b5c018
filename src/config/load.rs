//! Reading a config: TOML text to [`Config`] (with the default `kind`s filled in and errors
//! pointed at the right line), files, `--set` overrides, the embedded default.

use super::*;

/// Inserts the default `kind` into `[topology]`, `[workload]` and `[[workload.parts]]` tables
/// that do not set one (`leaf_spine`, `poisson`), so that every key is optional and an error
/// elsewhere in the table is reported as itself. Returns the text and the (1-based, patched)
/// numbers of the inserted lines.
pub(in crate::config) fn default_kinds(text: &str) -> (String, Vec<usize>) {
    let lines: Vec<&str> = text.lines().collect();
    let header = |l: &str| {
        let t = l.split('#').next().unwrap_or("").trim();
        t.starts_with('[').then(|| t.to_string())
    };
    let mut out = String::with_capacity(text.len() + 64);
    let mut inserted = Vec::new();
    let mut n_out = 0;
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        out.push('\n');
        n_out += 1;
        let default = match header(l).as_deref() {
            Some("[topology]") => "leaf_spine",
            Some("[workload]") | Some("[[workload.parts]]") => "poisson",
            _ => continue,
        };
        let has_kind = lines[i + 1..]
            .iter()
            .take_while(|m| header(m).is_none())
            .any(|m| {
                let t = m.trim_start();
                t.strip_prefix("kind")
                    .is_some_and(|r| r.trim_start().starts_with('='))
            });
        if !has_kind {
            out.push_str(&format!("kind = \"{default}\"\n"));
            n_out += 1;
            inserted.push(n_out);
        }
    }
    (out, inserted)
}

/// A `[workload]` of kind `mix` is read as one tagged value, so an error inside one of its
/// `[[workload.parts]]` points at `[workload]`'s header. When `line` is that header, the
/// header line of the first part that does not read on its own (None: not that case, or the
/// parts are written inline).
pub(in crate::config) fn part_header_line(text: &str, line: usize) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let bare = |l: &str| l.split('#').next().unwrap_or("").trim().to_string();
    if bare(lines.get(line.checked_sub(1)?)?) != "[workload]" {
        return None;
    }
    let table: toml::Table = toml::from_str(text).ok()?;
    let parts = table.get("workload")?.get("parts")?.as_array()?;
    let bad = parts.iter().position(|p| {
        let mut p = p.clone();
        if let Some(t) = p.as_table_mut() {
            t.entry("kind")
                .or_insert_with(|| toml::Value::String("poisson".into()));
        }
        crate::workload::WorkloadConfig::deserialize(p).is_err()
    })?;
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| bare(l) == "[[workload.parts]]")
        .nth(bad)
        .map(|(i, _)| i + 1)
}

/// When a parse error points at a table's header line, the line within that table the error
/// is about: the key an "unknown field" names, or the value an "invalid type/value" quotes.
pub(in crate::config) fn refine_line(text: &str, line: usize, msg: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    if !lines
        .get(line.wrapping_sub(1))
        .is_some_and(|l| l.trim_start().starts_with('['))
    {
        return line;
    }
    let between = |m: &str, a: &str, b: &str| -> Option<String> {
        let i = m.find(a)? + a.len();
        let j = m[i..].find(b)? + i;
        Some(m[i..j].to_string())
    };
    let matches: Box<dyn Fn(&str) -> bool> = if let Some(key) = between(msg, "unknown field `", "`")
    {
        Box::new(move |l: &str| {
            l.split(['{', ',']).any(|part| {
                part.trim_start()
                    .strip_prefix(key.as_str())
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
        })
    } else if let Some(v) =
        between(msg, "string \"", "\"").or_else(|| between(msg, "unknown variant `", "`"))
    {
        let q = format!("\"{v}\"");
        Box::new(move |l: &str| l.contains(&q))
    } else if let Some(v) =
        between(msg, "integer `", "`").or_else(|| between(msg, "floating point `", "`"))
    {
        Box::new(move |l: &str| {
            l.split('=')
                .skip(1)
                .any(|r| r.trim_start().starts_with(v.as_str()))
        })
    } else {
        return line;
    };
    for (i, l) in lines.iter().enumerate().skip(line) {
        if l.trim_start().starts_with('[') {
            break;
        }
        if matches(l) {
            return i + 1;
        }
    }
    line
}

impl Config {
    /// Parses TOML text; `file` names the source in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let mut c = Self::parse_raw(text, file)?;
        for (i, a) in c.sweep.axes.iter_mut().enumerate() {
            a.expand().map_err(|msg| ConfigError {
                file: file.to_string(),
                key: format!("sweep.axes[{i}].range"),
                msg,
            })?;
        }
        Ok(c)
    }

    pub(in crate::config) fn parse_raw(text: &str, file: &str) -> Result<Config, ConfigError> {
        let (patched, inserted) = default_kinds(text);
        let mut c = toml::from_str::<Config>(&patched).map_err(|e| {
            let msg = e.message().to_string();
            let loc = e
                .span()
                .map(|s| {
                    let line = patched[..s.start.min(patched.len())].matches('\n').count() + 1;
                    // Back to the user's numbering, then from a table header to the line the
                    // error is about (tagged tables report their header).
                    let line = line - inserted.iter().filter(|&&l| l < line).count();
                    let line = part_header_line(text, line).unwrap_or(line);
                    format!("line {}: ", refine_line(text, line, &msg))
                })
                .unwrap_or_default();
            ConfigError {
                file: file.to_string(),
                key: String::new(),
                msg: format!("{loc}{msg}"),
            }
        })?;
        if let Ok(t) = toml::from_str::<toml::Table>(text) {
            c.explicit = ExplicitKeys::of(&t);
        }
        Ok(c)
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text = crate::fileid::read_to_string(path).map_err(|msg| ConfigError {
            file: file.clone(),
            key: String::new(),
            msg,
        })?;
        let c = Config::parse(&text, &file)?;
        c.validate(&file, &Config::base_dir(path))?;
        Ok(c)
    }

    /// Loads `path` (None: the embedded default experiment) with `--set key=value` overrides
    /// applied before validation. Keys are dotted, as sweep axes' (`workload.load`,
    /// `switch.buffer.size`, `workload.parts.0.fan_in`); a value is read as TOML (`0.5`,
    /// `true`, `["DCTCP"]`) and otherwise as a string (`100Gbps`).
    pub fn load_with(path: Option<&Path>, sets: &[String]) -> Result<Config, ConfigError> {
        let (file, text, base) = match path {
            Some(p) => {
                let file = p.display().to_string();
                let text = crate::fileid::read_to_string(p).map_err(|msg| ConfigError {
                    file: file.clone(),
                    key: String::new(),
                    msg,
                })?;
                (file, text, Config::base_dir(p))
            }
            None => (
                "<embedded default>".to_string(),
                DEFAULT_CONFIG.to_string(),
                PathBuf::from("."),
            ),
        };
        if sets.is_empty() {
            let c = Config::parse(&text, &file)?;
            c.validate(&file, &base)?;
            return Ok(c);
        }
        // The file must stand on its own first, so that its errors keep their line numbers.
        Config::parse(&text, &file)?;
        let (patched, _) = default_kinds(&text);
        let mut table: toml::Table = toml::from_str(&patched).map_err(|e| ConfigError {
            file: file.clone(),
            key: String::new(),
            msg: e.message().to_string(),
        })?;
        let mut keys = Vec::new();
        for set in sets {
            let (k, v) = parse_set(set).map_err(|msg| ConfigError {
                file: file.clone(),
                key: "--set".into(),
                msg,
            })?;
            crate::sweep::set_key(&mut table, &k, v).map_err(|msg| ConfigError {
                file: file.clone(),
                key: k.clone(),
                msg: format!("{msg} (--set {set})"),
            })?;
            keys.push(k);
        }
        let with = format!("with --set {}", sets.join(", --set "));
        let named = |e: ConfigError| {
            // The generated text's line numbers mean nothing to the user: name the overrides.
            let msg = match e.msg.strip_prefix("line ") {
                Some(r) => r.split_once(": ").map_or(r, |(_, m)| m).to_string(),
                None => e.msg,
            };
            ConfigError {
                msg: format!("{msg} ({with})"),
                ..e
            }
        };
        let generated = toml::to_string(&table).map_err(|e| ConfigError {
            file: file.clone(),
            key: String::new(),
            msg: e.to_string(),
        })?;
        let mut c = Config::parse(&generated, &file).map_err(named)?;
        c.validate(&file, &base).map_err(named)?;
        c.overrides = sets.to_vec();
        Ok(c)
    }

    /// Directory against which relative paths in a config resolve.
    pub fn base_dir(path: &Path) -> PathBuf {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// The embedded default experiment.
    pub fn default_experiment() -> Config {
        let c = Config::parse(DEFAULT_CONFIG, "<embedded default>")
            .expect("the embedded default config parses");
        c.validate("<embedded default>", Path::new("."))
            .expect("the embedded default config is valid");
        c
    }
}
