//! The partition-stable tie key: how two events of the same picosecond are ordered without a
//! global insertion sequence.
//!
//! FIFO ties (the queue's insertion order) need one counter for the whole run, which no
//! partition of a parallel run can keep. The keyed order gives every event the key
//! `(time, class, π(origin), sequence of the origin)` instead:
//!
//! * the **class** puts the run's own events (failures, repairs, route recomputations: they
//!   act on the whole network, so every partition handles them) before every node's events
//!   of the same picosecond, so that they meet the same state in any partitioning;
//! * the **origin** is what produced a node event: the node whose handler pushed it, the link
//!   that carries a packet (for arrivals, whoever pushes them), or the host a workload flow
//!   starts at (for its start); one 23-bit namespace, [`ORIGIN_BITS`];
//! * the **sequence** counts the origin's events (40 bits): events of one origin keep their
//!   order (FIFO per origin); a flow's start takes its place in the workload instead;
//! * **π** is a seeded bijection of the origin space, drawn anew for every picosecond, so that
//!   no origin (low node numbers, say) wins every tie it takes part in.
//!
//! An event's key depends only on its origin's own history, never on which partition pushed
//! it or when it reached the queue, so any partitioning of the nodes yields the same order
//! (the argument is in `docs/architecture.md`). Not done here: choosing origins (the
//! simulator's [`crate::sim`] does).

use crate::engine::rng::mix64;
use crate::units::SimTime;

/// Bits of the origin in a tie key.
pub const ORIGIN_BITS: u32 = 23;
/// Bits of the per-origin sequence number.
pub const SEQ_BITS: u32 = 40;
/// Number of distinct origins.
pub const MAX_ORIGINS: u64 = 1 << ORIGIN_BITS;
/// Largest per-origin sequence number plus one.
pub const MAX_SEQ: u64 = 1 << SEQ_BITS;
const MASK: u64 = MAX_ORIGINS - 1;
/// The class bit of node events (the run's own events have it clear and come first).
const NODE_CLASS: u64 = 1 << 63;

/// Builds tie keys for one run.
#[derive(Clone, Copy, Debug)]
pub struct TieKeys {
    seed: u64,
}

impl TieKeys {
    /// Keys for the run seeded `seed` (its tie permutations follow from it).
    pub fn new(seed: u64) -> Self {
        TieKeys {
            seed: mix64(seed ^ 0x7469_652d_6b65_7973),
        }
    }

    /// π at time `t`: a bijection of `[0, 2^23)` (xor with a constant, multiplication by an odd
    /// number and xor-shift are each bijections modulo 2^23), keyed by the seed and `t`
    /// through one multiplicative hash (the high bits of a key, which decide a comparison,
    /// depend on every bit of the origin).
    #[inline(always)]
    pub fn permute(&self, t: SimTime, origin: u32) -> u32 {
        debug_assert!(
            (origin as u64) < MAX_ORIGINS,
            "origin {origin} out of range"
        );
        let k = (self.seed ^ t.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut x = (origin as u64 ^ (k >> 41)) & MASK;
        x = x.wrapping_mul((k >> 16) | 1) & MASK;
        x ^= x >> 11;
        x as u32
    }

    /// The tie key of node event number `seq` of `origin`, at time `t`.
    #[inline(always)]
    pub fn tie(&self, t: SimTime, origin: u32, seq: u64) -> u64 {
        debug_assert!(seq < MAX_SEQ, "origin {origin} pushed 2^40 events");
        NODE_CLASS | (self.permute(t, origin) as u64) << SEQ_BITS | seq
    }

    /// The tie key of the run's own event number `seq`: before every node event of its time.
    #[inline(always)]
    pub fn run_tie(seq: u64) -> u64 {
        debug_assert!(seq < NODE_CLASS, "the run pushed 2^63 events");
        seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// π is a bijection of the whole origin space at any time (checked exhaustively at three
    /// instants and two seeds), and different at different instants.
    #[test]
    fn the_permutation_is_a_bijection_that_changes_with_time() {
        for seed in [1, 42] {
            let k = TieKeys::new(seed);
            for t in [0, 1, 123_456_789] {
                let mut seen = vec![false; MAX_ORIGINS as usize];
                for o in 0..MAX_ORIGINS as u32 {
                    let p = k.permute(SimTime(t), o) as usize;
                    assert!(!seen[p], "seed {seed}, t {t}: {o} collides");
                    seen[p] = true;
                }
            }
            let a: Vec<u32> = (0..64).map(|o| k.permute(SimTime(5), o)).collect();
            let b: Vec<u32> = (0..64).map(|o| k.permute(SimTime(6), o)).collect();
            assert_ne!(a, b);
        }
    }

    /// Over many instants, the lower of two origins wins about half of their ties (no fixed
    /// bias towards low node numbers), and one origin's keys keep its sequence order.
    #[test]
    fn ties_favour_no_origin_and_keep_each_origins_order() {
        let k = TieKeys::new(7);
        let n = 20_000;
        let wins = (0..n)
            .filter(|&t| k.tie(SimTime(t * 1000), 3, 0) < k.tie(SimTime(t * 1000), 4, 0))
            .count();
        assert!(
            (n * 45 / 100..n * 55 / 100).contains(&(wins as u64)),
            "{wins} of {n}"
        );
        let t = SimTime(99);
        assert!(k.tie(t, 10, 5) < k.tie(t, 10, 6));
        assert_ne!(k.tie(t, 10, 5), k.tie(t, 11, 5));
    }

    /// The run's own events come before every node event of their time, in their order.
    #[test]
    fn run_events_come_first() {
        let k = TieKeys::new(3);
        for t in 0..1000 {
            for o in [0, 1, MASK as u32] {
                assert!(TieKeys::run_tie(u32::MAX as u64) < k.tie(SimTime(t), o, 0));
            }
        }
        assert!(TieKeys::run_tie(1) < TieKeys::run_tie(2));
    }
}
