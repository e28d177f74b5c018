//! The host message schedulers' decisions, as pure functions: which queue pairs a host pair
//! gets, where an arriving message goes, which queue pair takes GPMP's next slice, which
//! message SRM serves next. They read state and decide; [`super::Rdma`] carries the decisions
//! out (creates the queue pairs, posts the work, wakes the queue pairs).
//!
//! What they do not model: per-message admission control or any scheduling inside the NIC
//! beyond the NIC class of each queue pair (the simulator's NIC serves classes in strict
//! priority and the queue pairs of a class round robin).

use crate::ids::FlowId;
use serde::Serialize;
use std::collections::VecDeque;

/// Which host message scheduler a scheme uses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostSched {
    SinglePath,
    PerMessage,
    Nem,
    Srm {
        chunk: u64,
    },
    Gpmp {
        paths: u32,
        slice: u64,
        limit: u64,
    },
    /// One MP-RDMA connection per host pair, messages FIFO.
    MpRdma,
}

/// The per-pair rotation of GPMP's path binding: low-priority QP `k` of pair `(src, dst)` is
/// bound to uplink `(k + path_offset) mod uplinks` [our choice; GPMP reconstruction §2.3 binds QP k to uplink
/// k for every pair, which with fewer QPs than uplinks would leave uplinks unused].
pub fn path_offset(src: u32, dst: u32, n_up: usize) -> usize {
    (crate::engine::rng::mix64((src as u64) << 32 | dst as u64) % n_up.max(1) as u64) as usize
}

/// The queue pairs a host pair gets on its first message, in order, as (NIC class, path to
/// bind to): `single_path`, `srm`, `per_message`, `mp_rdma` one (class 1, any path); `nem`
/// short (class 0) and long (class 1); `gpmp` the high-priority QP (class 0) and one
/// low-priority QP (class 1) bound to each of `paths` uplinks.
pub fn pair_layout(s: HostSched) -> Vec<(u8, Option<u32>)> {
    match s {
        HostSched::SinglePath
        | HostSched::Srm { .. }
        | HostSched::PerMessage
        | HostSched::MpRdma => {
            vec![(1, None)]
        }
        HostSched::Nem => vec![(0, None), (1, None)],
        HostSched::Gpmp { paths, .. } => std::iter::once((0, None))
            .chain((0..paths).map(|k| (1, Some(k))))
            .collect(),
    }
}

/// Where an arriving message goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Whole, on the pair's queue pair `i` (of [`pair_layout`]).
    Qp(usize),
    /// Whole, on a queue pair of its own (a new UDP source port, so a new ECMP path).
    NewQp,
    /// Into the pair's pending list, handed out in pieces (GPMP slices, SRM chunks).
    Pending,
}

/// Where a message goes on arrival (`short`: below the short-message threshold).
pub fn placement(s: HostSched, short: bool) -> Place {
    match s {
        HostSched::SinglePath | HostSched::MpRdma => Place::Qp(0),
        HostSched::PerMessage => Place::NewQp,
        HostSched::Nem => Place::Qp(if short { 0 } else { 1 }),
        HostSched::Srm { .. } => Place::Pending,
        HostSched::Gpmp { .. } if short => Place::Qp(0),
        HostSched::Gpmp { .. } => Place::Pending,
    }
}

/// GPMP: the low-priority queue pair with the fewest outstanding bytes (the first on ties)
/// takes the next slice (`min(slice, unposted)` bytes) if that keeps it within `limit`.
pub fn gpmp_next_slice(
    low: &[FlowId],
    outstanding: impl Fn(&FlowId) -> u64,
    unposted: u64,
    slice: u64,
    limit: u64,
) -> Option<(FlowId, u64)> {
    let mut best: Option<(u64, FlowId)> = None;
    for q in low {
        let out = outstanding(q);
        if best.is_none_or(|(b, _)| out < b) {
            best = Some((out, *q));
        }
    }
    let (out, qp) = best?;
    let s = slice.min(unposted);
    (out + s <= limit).then_some((qp, s))
}

/// SRM: the pending message with the fewest unposted bytes (ties: earliest arrival), as its
/// position in `pending` and its id.
pub fn srm_next(pending: &VecDeque<u32>, unposted: impl Fn(u32) -> u64) -> Option<(usize, u32)> {
    pending
        .iter()
        .enumerate()
        .min_by_key(|&(i, &m)| (unposted(m), i))
        .map(|(i, &m)| (i, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpmp_slice_goes_to_the_least_loaded_qp_within_the_limit() {
        let q = [FlowId(1), FlowId(2), FlowId(3)];
        let out = |f: &FlowId| [0, 40, 16, 16][f.idx()];
        // QP 2 and 3 tie at 16 KB: the first wins; a 16 KB slice fits a 32 KB limit.
        assert_eq!(gpmp_next_slice(&q, out, 100, 16, 32), Some((FlowId(2), 16)));
        // The last piece is what is left.
        assert_eq!(gpmp_next_slice(&q, out, 5, 16, 32), Some((FlowId(2), 5)));
        // 16 + 16 > 31: nothing until an ACK frees room.
        assert_eq!(gpmp_next_slice(&q, out, 100, 16, 31), None);
        assert_eq!(gpmp_next_slice(&[], out, 100, 16, 32), None);
    }

    #[test]
    fn srm_serves_the_fewest_bytes_left_then_the_earliest() {
        let left = |m: u32| [30, 10, 10, 50][m as usize];
        let p: VecDeque<u32> = [0, 3, 2, 1].into_iter().collect();
        assert_eq!(srm_next(&p, left), Some((2, 2)));
        assert_eq!(srm_next(&VecDeque::new(), left), None);
    }

    #[test]
    fn layouts_and_placements_agree() {
        let g = HostSched::Gpmp {
            paths: 4,
            slice: 16_000,
            limit: 64_000,
        };
        assert_eq!(pair_layout(g).len(), 5);
        assert_eq!(pair_layout(g)[3], (1, Some(2)));
        assert_eq!(placement(g, true), Place::Qp(0));
        assert_eq!(placement(g, false), Place::Pending);
        assert_eq!(placement(HostSched::Nem, false), Place::Qp(1));
        assert_eq!(pair_layout(HostSched::Nem).len(), 2);
        for s in [
            HostSched::SinglePath,
            HostSched::MpRdma,
            HostSched::Srm { chunk: 1 },
        ] {
            assert_eq!(pair_layout(s), vec![(1, None)]);
        }
    }
}
