//! GOAL schedules (the text format of LogGOPSim and ATLAHS): per rank, `send`, `recv` and
//! `calc` operations and the dependencies between them, read into flows, compute steps and
//! joins.
//!
//! ```text
//! num_ranks 2
//! rank 0 {
//!   l1: calc 1000            // nanoseconds
//!   l2: send 4096b to 1 tag 7
//!   l2 requires l1
//! }
//! rank 1 {
//!   l1: recv 4096b from 0 tag 7
//!   l2: calc 500 cpu 0
//!   l2 requires l1
//! }
//! ```
//!
//! * A `send` on rank a to rank b and a `recv` on rank b from a with the same tag match in the
//!   order each appears in its rank's block (MPI's non-overtaking order), and become one flow
//!   (RDMA: one message) from a's host to b's host, of the send's size (a 0-byte message is sent
//!   as one byte: a flow needs one). The flow starts when the send's dependencies have
//!   completed (at the start of the run when it has none).
//! * A `recv` completes when its flow has arrived and its own dependencies have completed (a
//!   compute step of no length at the receiving host that waits for both); a `send` completes
//!   when its flow has arrived at its destination, as seen from the sender (the news takes one
//!   base latency back, as an acknowledgement would).
//! * A `calc` is a compute step of that many nanoseconds at the rank's host.
//! * `a requires b`: a starts once b has completed. `a irequires b`: a starts once b has
//!   started, read as: once what b waits for has completed (b itself starts without delay).
//!
//! Errors name the file and line. Not supported (refused with the line): a `recv` from any
//! source or with any tag (`-1`: matching would depend on timing), a send or receive left
//! without its match, dependencies that form a cycle.
//!
//! Not modelled: LogGP's per-message CPU overhead `o` and gaps `g`, `G` (the network model
//! replaces them), the `cpu` and `nic` annotations (read and ignored: compute steps of one
//! rank overlap unless the schedule chains them, as Schedgen's schedules do).

use super::*;
use crate::workload::collective::Graph;
use crate::workload::dag::Pred;
use std::collections::HashMap;

/// Per operation (rank, index): the operations it depends on, and whether only on their start.
type Preds = HashMap<(usize, usize), Vec<((usize, usize), bool)>>;

/// One operation of a rank, as read.
#[derive(Clone, Debug)]
enum Op {
    Send { peer: u32, size: u64, tag: u64 },
    Recv { peer: u32, size: u64, tag: u64 },
    Calc { ns: u64 },
}

/// A rank's block: its operations (with their lines) and dependencies.
#[derive(Default)]
struct Block {
    ops: Vec<(Op, usize)>,
    labels: HashMap<String, usize>,
    /// (op, op it depends on, start-only, line).
    deps: Vec<(usize, usize, bool, usize)>,
}

/// Reads a GOAL schedule: its ranks mapped onto `hosts` (rank i on `hosts[i]`; None: host
/// i), as a graph of flows, joins and compute steps starting at `start`.
pub fn read_goal(
    path: &Path,
    hosts: Option<&[u32]>,
    n_hosts: usize,
    start: SimTime,
) -> Result<Graph, String> {
    let text = crate::fileid::read_to_string(path)?;
    let file = path.display().to_string();
    let (n_ranks, blocks) = parse(&text).map_err(|(line, m)| format!("{file}:{line}: {m}"))?;
    let host_of: Vec<u32> = match hosts {
        Some(h) if h.len() != n_ranks => {
            return Err(format!(
                "{file}: {n_ranks} ranks, but {} hosts are listed for them",
                h.len()
            ));
        }
        Some(h) => h.to_vec(),
        None if n_ranks > n_hosts => {
            return Err(format!(
                "{file}: {n_ranks} ranks, but the topology has {n_hosts} hosts"
            ));
        }
        None => (0..n_ranks as u32).collect(),
    };
    if let Some(&h) = host_of.iter().find(|&&h| h as usize >= n_hosts) {
        return Err(format!("{file}: host {h} is not in 0..{n_hosts}"));
    }
    build(&file, &blocks, &host_of, start)
}

/// The parse: `num_ranks` and each rank's block; errors as (line, message).
fn parse(text: &str) -> Result<(usize, Vec<Block>), (usize, String)> {
    let mut n_ranks: Option<usize> = None;
    let mut blocks: Vec<Option<Block>> = Vec::new();
    let mut cur: Option<(usize, Block)> = None;
    let mut in_comment = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        // Comments: `//` to the end of the line, `/* ... */` across lines.
        let mut l = String::new();
        let mut rest = raw;
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(k) => {
                        rest = &rest[k + 2..];
                        in_comment = false;
                    }
                    None => break,
                }
            } else {
                let c = rest.find("/*");
                let d = rest.find("//");
                match (c, d) {
                    (Some(c), d) if d.is_none_or(|d| c < d) => {
                        l.push_str(&rest[..c]);
                        rest = &rest[c + 2..];
                        in_comment = true;
                    }
                    (_, Some(d)) => {
                        l.push_str(&rest[..d]);
                        break;
                    }
                    _ => {
                        l.push_str(rest);
                        break;
                    }
                }
            }
        }
        let words: Vec<&str> = l.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let err = |m: String| Err((line, m));
        match words[0] {
            "num_ranks" => {
                let n = words
                    .get(1)
                    .and_then(|w| w.parse::<usize>().ok())
                    .filter(|&n| (1..=1 << 20).contains(&n));
                match (n, words.len()) {
                    (Some(n), 2) if n_ranks.is_none() => {
                        n_ranks = Some(n);
                        blocks.resize_with(n, || None);
                    }
                    (Some(_), 2) => return err("`num_ranks` given twice".into()),
                    _ => return err("expected `num_ranks N` (N in 1..=1048576)".into()),
                }
                continue;
            }
            "rank" => {
                if cur.is_some() {
                    return err("`rank` inside a rank's block (missing `}`?)".into());
                }
                let Some(n) = n_ranks else {
                    return err("`rank` before `num_ranks`".into());
                };
                let r = words.get(1).and_then(|w| w.parse::<usize>().ok());
                match (r, words.get(2), words.len()) {
                    (Some(r), Some(&"{"), 3) if r < n => {
                        if blocks[r].is_some() {
                            return err(format!("rank {r} has a second block"));
                        }
                        cur = Some((r, Block::default()));
                    }
                    (Some(r), Some(&"{"), 3) => {
                        return err(format!("rank {r} is not in 0..{n} (num_ranks)"));
                    }
                    _ => return err("expected `rank R {`".into()),
                }
                continue;
            }
            "}" if words.len() == 1 => match cur.take() {
                Some((r, b)) => {
                    blocks[r] = Some(b);
                    continue;
                }
                None => return err("`}` outside a rank's block".into()),
            },
            _ => {}
        }
        let Some((rank, block)) = cur.as_mut() else {
            return err(format!("`{}` outside a rank's block", words[0]));
        };
        let n = n_ranks.expect("a block needs num_ranks");
        // `a requires b` / `a irequires b`.
        if words.len() == 3 && (words[1] == "requires" || words[1] == "irequires") {
            let find = |w: &str| {
                block.labels.get(w).copied().ok_or((
                    line,
                    format!("label `{w}` is not defined (above, in rank {rank})"),
                ))
            };
            let (a, b) = (find(words[0])?, find(words[2])?);
            if a == b {
                return err(format!("`{}` cannot depend on itself", words[0]));
            }
            block.deps.push((a, b, words[1] == "irequires", line));
            continue;
        }
        // `[label:] op ...`
        let (label, op_words) = match words[0].strip_suffix(':') {
            Some(lab) => (Some(lab), &words[1..]),
            None => match words.get(1) {
                Some(&":") => (Some(words[0]), &words[2..]),
                _ => (None, &words[..]),
            },
        };
        let op = parse_op(op_words, n).map_err(|m| (line, m))?;
        if let Some(lab) = label {
            if !lab.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                || !lab.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return err(format!(
                    "`{lab}` is not a label (a letter, then letters, digits, _)"
                ));
            }
            if block
                .labels
                .insert(lab.to_string(), block.ops.len())
                .is_some()
            {
                return err(format!("label `{lab}` is defined twice in rank {rank}"));
            }
        }
        if let Op::Send { peer, .. } | Op::Recv { peer, .. } = op
            && peer as usize == *rank
        {
            return err(format!("rank {rank} sends to or receives from itself"));
        }
        block.ops.push((op, line));
    }
    if in_comment {
        return Err((text.lines().count(), "a `/*` comment is not closed".into()));
    }
    if let Some((r, _)) = cur {
        return Err((
            text.lines().count(),
            format!("rank {r}'s block is not closed (`}}`)"),
        ));
    }
    let Some(n) = n_ranks else {
        return Err((1, "no `num_ranks` line".into()));
    };
    let blocks = blocks
        .into_iter()
        .map(|b| b.unwrap_or_default())
        .collect::<Vec<_>>();
    Ok((n, blocks))
}

/// One operation's words after its label.
fn parse_op(w: &[&str], n_ranks: usize) -> Result<Op, String> {
    let size = |s: &str| -> Result<u64, String> {
        s.strip_suffix('b')
            .and_then(|x| x.parse::<u64>().ok())
            .ok_or(format!(
                "`{s}`: a size is a byte count with `b` (e.g. 4096b)"
            ))
    };
    let peer = |s: &str| -> Result<u32, String> {
        if s == "-1" {
            return Err("a receive from any source (-1) is not supported: name the sender".into());
        }
        match s.parse::<usize>() {
            Ok(p) if p < n_ranks => Ok(p as u32),
            _ => Err(format!("`{s}` is not a rank in 0..{n_ranks}")),
        }
    };
    // Optional `tag T`, `cpu C`, `nic N` after the fixed words.
    let options = |rest: &[&str]| -> Result<u64, String> {
        let mut tag = 0;
        let mut k = 0;
        while k < rest.len() {
            let v = rest
                .get(k + 1)
                .ok_or(format!("`{}` needs a number", rest[k]))?;
            match rest[k] {
                "tag" if *v == "-1" => {
                    return Err("any tag (-1) is not supported: give the tag".into());
                }
                "tag" => {
                    tag = v
                        .parse()
                        .map_err(|_| format!("tag `{v}` is not a number"))?
                }
                "cpu" | "nic" => {
                    v.parse::<u64>()
                        .map_err(|_| format!("{} `{v}` is not a number", rest[k]))?;
                }
                other => return Err(format!("unexpected `{other}` (tag, cpu or nic)")),
            }
            k += 2;
        }
        Ok(tag)
    };
    match w {
        ["send", s, "to", p, rest @ ..] => Ok(Op::Send {
            size: size(s)?,
            peer: peer(p)?,
            tag: options(rest)?,
        }),
        ["recv", s, "from", p, rest @ ..] => Ok(Op::Recv {
            size: size(s)?,
            peer: peer(p)?,
            tag: options(rest)?,
        }),
        ["calc", t, rest @ ..] => {
            let ns = t
                .parse::<u64>()
                .map_err(|_| format!("`calc {t}`: a duration in nanoseconds"))?;
            if ns > super::MAX_CSV_TIME_NS {
                return Err(format!(
                    "`calc {t}`: longer than {} ns",
                    super::MAX_CSV_TIME_NS
                ));
            }
            options(rest)?;
            Ok(Op::Calc { ns })
        }
        _ => Err(format!(
            "expected `send SIZEb to R`, `recv SIZEb from R`, `calc NS` or `a requires b`, got `{}`",
            w.join(" ")
        )),
    }
}

/// The graph of parsed blocks.
fn build(file: &str, blocks: &[Block], host_of: &[u32], start: SimTime) -> Result<Graph, String> {
    let mut g = Graph::new(start);
    // Match sends and receives: the k-th send a -> b with tag t and the k-th receive on b
    // from a with tag t.
    let mut sends: HashMap<(u32, u32, u64), Vec<(usize, usize)>> = HashMap::new();
    let mut recvs: HashMap<(u32, u32, u64), Vec<(usize, usize)>> = HashMap::new();
    for (r, b) in blocks.iter().enumerate() {
        for (i, (op, _)) in b.ops.iter().enumerate() {
            match *op {
                Op::Send { peer, tag, .. } => {
                    sends.entry((r as u32, peer, tag)).or_default().push((r, i))
                }
                Op::Recv { peer, tag, .. } => {
                    recvs.entry((peer, r as u32, tag)).or_default().push((r, i))
                }
                Op::Calc { .. } => {}
            }
        }
    }
    // Per (rank, op): the recv matched with a send, and the send with a recv.
    let mut partner: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    let mut keys: Vec<_> = sends.keys().chain(recvs.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    for k in keys {
        let s = sends.get(&k).map_or(&[][..], |v| v);
        let r = recvs.get(&k).map_or(&[][..], |v| v);
        if s.len() != r.len() {
            let (a, b, tag) = k;
            let (extra, what) = match s.len() > r.len() {
                true => (s[r.len()], "send"),
                false => (r[s.len()], "receive"),
            };
            return Err(format!(
                "{file}:{}: this {what} has no match: rank {a} sends {} message(s) to rank {b} with tag {tag}, rank {b} receives {}",
                blocks[extra.0].ops[extra.1].1,
                s.len(),
                r.len()
            ));
        }
        for (&x, &y) in s.iter().zip(r) {
            if let (Op::Send { size: a, .. }, Op::Recv { size: b, .. }) =
                (&blocks[x.0].ops[x.1].0, &blocks[y.0].ops[y.1].0)
                && a != b
            {
                return Err(format!(
                    "{file}:{}: rank {} sends {a} B, but the receive it matches (line {}) expects {b} B",
                    blocks[x.0].ops[x.1].1, x.0, blocks[y.0].ops[y.1].1
                ));
            }
            partner.insert(x, y);
            partner.insert(y, x);
        }
    }
    // Operations in an order where each comes after what it depends on: its own block's
    // dependencies, and a receive after its matching send (across ranks). A cycle is refused.
    let id = |r: usize, i: usize| (r, i);
    let mut preds: Preds = HashMap::new();
    for (r, b) in blocks.iter().enumerate() {
        for &(a, d, start_only, _) in &b.deps {
            preds
                .entry(id(r, a))
                .or_default()
                .push((id(r, d), start_only));
        }
    }
    let mut order = Vec::new();
    let mut state: HashMap<(usize, usize), u8> = HashMap::new();
    for (r, b) in blocks.iter().enumerate() {
        for i in 0..b.ops.len() {
            let mut stack = vec![(id(r, i), false)];
            while let Some((x, leaving)) = stack.pop() {
                if leaving {
                    state.insert(x, 2);
                    order.push(x);
                    continue;
                }
                match state.get(&x) {
                    Some(2) => continue,
                    Some(1) => {
                        return Err(format!(
                            "{file}:{}: rank {}'s operation is part of a dependency cycle",
                            blocks[x.0].ops[x.1].1, x.0
                        ));
                    }
                    _ => {}
                }
                state.insert(x, 1);
                stack.push((x, true));
                let mut next: Vec<(usize, usize)> = preds
                    .get(&x)
                    .map_or(Vec::new(), |v| v.iter().map(|p| p.0).collect());
                if matches!(blocks[x.0].ops[x.1].0, Op::Recv { .. }) {
                    next.push(partner[&x]);
                }
                for y in next {
                    match state.get(&y) {
                        Some(1) => {
                            return Err(format!(
                                "{file}:{}: rank {}'s operation is part of a dependency cycle",
                                blocks[y.0].ops[y.1].1, y.0
                            ));
                        }
                        Some(2) => {}
                        _ => stack.push((y, false)),
                    }
                }
            }
        }
    }
    // Build in that order: per operation, what its start waits for and what its completion is.
    let mut waits: HashMap<(usize, usize), Vec<Pred>> = HashMap::new();
    let mut done: HashMap<(usize, usize), Pred> = HashMap::new();
    let mut flow_of: HashMap<(usize, usize), Pred> = HashMap::new();
    for x in order {
        let mut w: Vec<Pred> = Vec::new();
        for &(y, start_only) in preds.get(&x).map_or(&[][..], |v| v) {
            match start_only {
                false => w.push(done[&y]),
                true => w.extend(waits[&y].iter().copied()),
            }
        }
        w.sort_unstable();
        w.dedup();
        let host = host_of[x.0];
        match blocks[x.0].ops[x.1].0 {
            Op::Send { peer, size, .. } => {
                let f = g.send(host, host_of[peer as usize], size.max(1), &w);
                flow_of.insert(x, f);
                done.insert(x, f);
            }
            Op::Recv { .. } => {
                let f = flow_of[&partner[&x]];
                let mut all = w.clone();
                all.push(f);
                let j = g.dag.join(host, all);
                let c = g.dag.calc(host, SimTime::ZERO, SimTime::ZERO, Some(j));
                done.insert(x, Pred::Calc(c));
            }
            Op::Calc { ns } => {
                let c = match w.is_empty() {
                    true => g.dag.calc(host, SimTime::from_ns(ns), start, None),
                    false => {
                        let j = g.dag.join(host, w.clone());
                        g.dag
                            .calc(host, SimTime::from_ns(ns), SimTime::ZERO, Some(j))
                    }
                };
                done.insert(x, Pred::Calc(c));
            }
        }
        waits.insert(x, w);
    }
    Ok(g)
}
