//! Flow files of other simulators: htsim connection matrices, HPCC ns-3 flow files, GOAL
//! schedules (LogGOPSim, ATLAHS), and dcsim's JSON flow list; and the dependency linking the formats with `after` lists share.
//! Each reader names the file and the line or entry in its errors.

use super::*;

pub(in crate::workload) mod goal;
pub(in crate::workload) mod hpcc;
pub(in crate::workload) mod htsim;
pub(in crate::workload) mod json;

pub use goal::read_goal;
pub(in crate::workload) use hpcc::*;
pub use hpcc::{HpccStream, read_hpcc};
pub use htsim::read_htsim;
pub use json::read_json;

/// Turns per-flow `after` lists into groups: each distinct set of flows waited for becomes a
/// group whose members are those flows, and the waiting flows start their `start` after the
/// group has been received. A flow may be waited for in one set only (ring and barrier
/// patterns); cycles are refused. `deps`: (index in `flows`, where it was read — a line, an
/// index — that `loc` names, flow ids). Errors name the file, the place and the flow's id.
pub(in crate::workload) fn link_dependencies(
    flows: &mut [FlowSpec],
    deps: Vec<(usize, usize, Vec<u64>)>,
    file: &str,
    loc: impl Fn(usize) -> String,
) -> Result<(), String> {
    if deps.is_empty() {
        return Ok(());
    }
    let index: std::collections::HashMap<u64, usize> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id as u64, i))
        .collect();
    let mut groups: std::collections::BTreeMap<Vec<u64>, u32> = std::collections::BTreeMap::new();
    let lines: std::collections::HashMap<usize, usize> =
        deps.iter().map(|&(who, line, _)| (who, line)).collect();
    for (who, line, mut list) in deps {
        list.sort_unstable();
        list.dedup();
        let at = format!("{file}: {} (flow {})", loc(line), flows[who].id);
        for id in &list {
            let Some(&j) = index.get(id) else {
                return Err(format!(
                    "{at}: `after` names flow {id}, which is not in the file"
                ));
            };
            if j == who {
                return Err(format!("{at}: a flow cannot wait for itself"));
            }
        }
        let next = groups.len() as u32;
        let g = *groups.entry(list.clone()).or_insert(next);
        for id in &list {
            let m = &mut flows[index[id]];
            match m.group {
                Some(h) if h != g => {
                    return Err(format!(
                        "{at}: flow {id} is already waited for with other flows; a flow may be in one `after` set only"
                    ));
                }
                _ => m.group = Some(g),
            }
        }
        flows[who].after = Some(g);
    }
    // Cycles: a flow that (transitively) waits for itself never starts.
    let n = flows.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the path, 2 done
    let members: Vec<Vec<usize>> = {
        let mut m = vec![Vec::new(); groups.len()];
        for (i, f) in flows.iter().enumerate() {
            if let Some(g) = f.group {
                m[g as usize].push(i);
            }
        }
        m
    };
    // Flows in an order where each comes after the flows it waits for (DFS post-order).
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, false)];
        while let Some((i, leaving)) = stack.pop() {
            if leaving {
                state[i] = 2;
                order.push(i);
                continue;
            }
            if state[i] == 2 {
                continue;
            }
            state[i] = 1;
            stack.push((i, true));
            if let Some(g) = flows[i].after {
                for &j in &members[g as usize] {
                    match state[j] {
                        1 => {
                            return Err(format!(
                                "{file}: flows {} and {} wait for each other (a dependency cycle)",
                                flows[i].id, flows[j].id
                            ));
                        }
                        0 => stack.push((j, false)),
                        _ => {}
                    }
                }
            }
        }
    }
    // The earliest a flow can start: its own start (for a waiting flow, its delay after the
    // flows it waits for) after the earliest start of those (their transfers take longer
    // still). A chain of delays beyond the horizon is refused here, with the flow's place,
    // rather than when the run gets there.
    let mut earliest = vec![SimTime::ZERO; n];
    for &i in &order {
        let before = flows[i].after.map_or(SimTime::ZERO, |g| {
            members[g as usize]
                .iter()
                .map(|&j| earliest[j])
                .max()
                .unwrap_or(SimTime::ZERO)
        });
        earliest[i] = before + flows[i].start;
        if earliest[i] > MAX_START {
            let at = lines
                .get(&i)
                .map_or(String::new(), |&l| format!(" {}", loc(l)));
            return Err(format!(
                "{file}:{at} (flow {}): it waits (through `after`) for flows that start at {before} at the earliest; {} later, it would start at {}, beyond the {MAX_ARRIVAL_SPAN_S} s of simulated time a run may span",
                flows[i].id, flows[i].start, earliest[i]
            ));
        }
    }
    Ok(())
}
