//! htsim connection matrices (`connection_matrix` files) as flow lists.

use super::*;

/// Reads an htsim connection matrix (see [`WorkloadConfig::Htsim`]). Triggers become flow
/// dependencies: a flow with `trigger T` starts when T fires; T fires when every flow that
/// names it in `recv_done_trigger` (or `send_done_trigger`, with `send_done_as_recv_done`)
/// has been received. That is htsim's `barrier` with `count` equal to those flows, and its
/// `oneshot`/`multishot` with one such flow; other combinations (a trigger fired by the
/// first of several flows, a barrier count different from its flows, a flow firing two
/// triggers) are refused, as are `failure` lines (use `[[failures]]`).
pub fn read_htsim(
    path: &Path,
    n_hosts: usize,
    unit: CmStartUnit,
    send_done_as_recv: bool,
) -> Result<Vec<FlowSpec>, String> {
    let file = path.display().to_string();
    let text = crate::fileid::read_to_string(path)?;
    let mut header: std::collections::BTreeMap<String, u64> = Default::default();
    let mut flows: Vec<FlowSpec> = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    // Trigger id -> (kind, count, line); (flow index, trigger, line) it waits for / fires.
    let mut triggers: std::collections::BTreeMap<u64, (String, Option<u64>, usize)> =
        Default::default();
    let mut waits: Vec<(usize, u64, usize)> = Vec::new();
    let mut fires: Vec<(usize, u64, usize)> = Vec::new();
    // The line of each connection, for checks against the header.
    let mut conn_lines: Vec<usize> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let at = |m: String| format!("{file} line {ln}: {m}");
        let t: Vec<&str> = raw.split_whitespace().collect();
        if t.is_empty() || t[0].starts_with('#') {
            continue;
        }
        let num = |s: &str, what: &str| -> Result<u64, String> {
            s.parse::<u64>()
                .map_err(|_| at(format!("{what} `{s}` is not a non-negative integer")))
        };
        match t[0] {
            "Nodes" | "Connections" | "Triggers" | "Failures" => {
                let v = t
                    .get(1)
                    .ok_or_else(|| at(format!("`{}` needs a number", t[0])))?;
                header.insert(t[0].to_string(), num(v, t[0])?);
            }
            "failure" => {
                return Err(at(
                    "htsim failure lines are not imported: describe failures in [[failures]]"
                        .into(),
                ));
            }
            "trigger" => {
                let (mut id, mut kind, mut count) = (None, None, None);
                let mut k = 1;
                while k < t.len() {
                    match t[k] {
                        "id" | "count" => {
                            let v = t
                                .get(k + 1)
                                .ok_or_else(|| at(format!("`{}` needs a value", t[k])))?;
                            let v = num(v, t[k])?;
                            if t[k] == "id" {
                                id = Some(v);
                            } else {
                                count = Some(v);
                            }
                            k += 2;
                        }
                        "oneshot" | "multishot" | "barrier" => {
                            kind = Some(t[k].to_string());
                            k += 1;
                        }
                        other => return Err(at(format!("unknown trigger attribute `{other}`"))),
                    }
                }
                let id = id
                    .filter(|&x| x > 0)
                    .ok_or_else(|| at("a trigger needs `id` > 0".into()))?;
                let kind =
                    kind.ok_or_else(|| at("a trigger needs oneshot, multishot or barrier".into()))?;
                if triggers.insert(id, (kind, count, ln)).is_some() {
                    return Err(at(format!("trigger {id} is defined twice")));
                }
            }
            first if first.contains("->") => {
                let (a, b) = first.split_once("->").expect("contains ->");
                let (src, dst) = (num(a, "src")?, num(b, "dst")?);
                let (mut id, mut start, mut size, mut wait, mut fire) =
                    (None, None, None, None, None);
                let mut k = 1;
                while k < t.len() {
                    let key = t[k];
                    let v = t
                        .get(k + 1)
                        .ok_or_else(|| at(format!("`{key}` needs a value")))?;
                    match key {
                        "id" => id = Some(num(v, "id")?),
                        "size" => size = Some(num(v, "size")?),
                        "start" => {
                            let x: f64 = v
                                .parse()
                                .ok()
                                .filter(|x: &f64| x.is_finite() && *x >= 0.0 && *x < 1e18)
                                .ok_or_else(|| at(format!("start `{v}` is not a time")))?;
                            let ps = match unit {
                                CmStartUnit::Ps => x.round(),
                                CmStartUnit::Us => (x * 1e6).round(),
                            };
                            if ps > MAX_START.0 as f64 {
                                let u = match unit {
                                    CmStartUnit::Ps => "ps",
                                    CmStartUnit::Us => "us",
                                };
                                return Err(at(start_beyond(&format!("`{v}` ({u})"))));
                            }
                            start = Some(SimTime(ps as u64));
                        }
                        "trigger" => wait = Some(num(v, "trigger")?),
                        "recv_done_trigger" | "send_done_trigger" => {
                            if key == "send_done_trigger" && !send_done_as_recv {
                                return Err(at(
                                    "send_done_trigger: dcsim starts dependent flows when flows are received; set [workload] send_done_as_recv_done = true to accept that (one path delay later than htsim)".into(),
                                ));
                            }
                            if fire.is_some() {
                                return Err(at("a connection fires one trigger only here".into()));
                            }
                            fire = Some(num(v, key)?);
                        }
                        "prio" => {
                            num(v, "prio")?;
                        }
                        other => {
                            return Err(at(format!("unknown connection attribute `{other}`")));
                        }
                    }
                    k += 2;
                }
                if src as usize >= n_hosts || dst as usize >= n_hosts {
                    return Err(at(format!("hosts must be in 0..{n_hosts}")));
                }
                if src == dst {
                    return Err(at("src and dst are the same host".into()));
                }
                let size = size
                    .filter(|&x| x > 0)
                    .ok_or_else(|| at("a connection needs `size` > 0".into()))?;
                let start = match (start, wait) {
                    (Some(_), Some(_)) => {
                        return Err(at("both `start` and `trigger`: give one".into()));
                    }
                    (None, None) => return Err(at("no `start` and no `trigger`".into())),
                    (s, _) => s.unwrap_or(SimTime::ZERO),
                };
                let id = match id {
                    Some(0) => return Err(at("flow id 0 is not allowed (as in htsim)".into())),
                    Some(x) => x,
                    None if wait.is_some() => {
                        return Err(at("a triggered connection needs an `id`".into()));
                    }
                    None => ids.iter().next_back().map_or(1, |m| m + 1),
                };
                if id > u32::MAX as u64 || !ids.insert(id) {
                    return Err(at(format!("flow id {id} is duplicated or too large")));
                }
                if let Some(w) = wait {
                    waits.push((flows.len(), w, ln));
                }
                if let Some(f) = fire {
                    fires.push((flows.len(), f, ln));
                }
                flows.push(FlowSpec::new(
                    id as u32, src as u32, dst as u32, size, start,
                ));
                conn_lines.push(ln);
            }
            other => return Err(at(format!("unknown line start `{other}`"))),
        }
    }
    if flows.is_empty() {
        return Err(format!("{file}: no connections"));
    }
    if let Some(&n) = header.get("Nodes")
        && n as usize > n_hosts
    {
        return Err(format!(
            "{file}: Nodes {n}, but the topology has {n_hosts} hosts"
        ));
    }
    if let Some(&n) = header.get("Nodes")
        && let Some((f, ln)) = flows
            .iter()
            .zip(&conn_lines)
            .find(|(f, _)| f.src as u64 >= n || f.dst as u64 >= n)
    {
        return Err(format!(
            "{file} line {ln}: connection {}->{} names a node beyond the header's `Nodes {n}` (nodes 0..{n})",
            f.src, f.dst
        ));
    }
    for (key, count) in [("Connections", flows.len()), ("Triggers", triggers.len())] {
        if let Some(&n) = header.get(key)
            && n as usize != count
        {
            return Err(format!("{file}: `{key} {n}` but {count} found"));
        }
    }
    for (&tid, (kind, count, ln)) in &triggers {
        let firing = fires.iter().filter(|f| f.1 == tid).count();
        let at = |m: String| format!("{file} line {ln}: trigger {tid}: {m}");
        if firing == 0 {
            return Err(at("no connection fires it".into()));
        }
        match kind.as_str() {
            "barrier" => {
                let c = count.ok_or_else(|| at("a barrier needs `count`".into()))?;
                if c as usize != firing {
                    return Err(at(format!(
                        "count {c} but {firing} connections fire it: only a barrier over all its connections is modelled"
                    )));
                }
            }
            _ if firing > 1 => {
                return Err(at(format!(
                    "{kind} fired by {firing} connections fires at the first: not modelled (use a barrier)"
                )));
            }
            _ => {}
        }
    }
    for &(_, tid, ln) in waits.iter().chain(&fires) {
        if !triggers.contains_key(&tid) {
            return Err(format!("{file} line {ln}: trigger {tid} is not defined"));
        }
    }
    // Each trigger's firing connections form a group; its waiters wait for that group.
    let deps: Vec<(usize, usize, Vec<u64>)> = waits
        .iter()
        .map(|&(who, tid, ln)| {
            let members = fires
                .iter()
                .filter(|f| f.1 == tid)
                .map(|f| flows[f.0].id as u64)
                .collect();
            (who, ln, members)
        })
        .collect();
    link_dependencies(&mut flows, deps, &file, |l| format!("line {l}"))?;
    Ok(flows)
}
