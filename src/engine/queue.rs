//! Event queues keyed by `(time, tie)`: ties in time pop by a 64-bit tie key, by default the
//! insertion order.
//!
//! [`EventQueue`] is a timing wheel (a calendar queue with a fixed bucket width) with an
//! overflow heap, built for the event pattern of a packet simulator: thousands of pending
//! events packed into the next few microseconds (a serialization or a propagation delay ahead)
//! plus a few far-future timers.
//!
//! * Time is cut into slots of 2^[`SLOT_SHIFT`] ps (about 2 ns). The wheel holds the
//!   [`SLOTS`] slots that follow the current one (about 17 us); each slot is a linked list of
//!   nodes in one pool, reused last-in first-out so that the nodes being written are the ones
//!   still in cache; a two-level bitmap finds the next non-empty slot in O(1).
//! * When a slot becomes current its events are sorted by time (a slot holds few events)
//!   and consumed in order.
//! * Events beyond the wheel's horizon wait in a binary heap and move into the wheel as the
//!   current slot advances (invariant: every overflow event lies beyond the horizon).
//!
//! The key is `time << 64 | tie`. [`EventQueue::push`] gives each event the next insertion
//! sequence number as its tie (FIFO ties); [`EventQueue::push_tie`] takes the tie from the
//! caller (the partition-stable `(origin, per-origin sequence)` key of `engine::tie`), which
//! must keep keys unique. Keys are unique, so the pop order is exactly `(time, tie)`. One
//! queue uses one of the two, never both. [`HeapQueue`] is the plain binary-heap queue with
//! the same semantics, the reference the wheel is tested against.

use crate::units::SimTime;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// log2 of the slot width in picoseconds.
pub const SLOT_SHIFT: u32 = 11;
/// Number of slots in the wheel (a multiple of 64·64 is not needed; 64·128 here).
pub const SLOTS: usize = 8192;
const WORDS: usize = SLOTS / 64;
const SUMMARY: usize = WORDS.div_ceil(64);

#[inline]
fn key(time: SimTime, seq: u64) -> u128 {
    (time.0 as u128) << 64 | seq as u128
}

/// An overflow entry: ordered by `(time, seq)`.
#[derive(Clone, Copy)]
struct Item<E> {
    key: u128,
    ev: E,
}

impl<E> PartialEq for Item<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Item<E> {}
impl<E> PartialOrd for Item<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Item<E> {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key)
    }
}

const NIL: u32 = u32::MAX;

/// A wheel entry: an event, its key and the slot-list link.
#[derive(Clone, Copy)]
struct Node<E> {
    time: u64,
    tie: u64,
    prev: u32,
    ev: E,
}

/// A min-queue of events by `(time, tie)`: timing wheel plus overflow heap.
///
/// Wheel slots hold events in push order; when a slot becomes current it is sorted by
/// `(time, tie)`.
pub struct EventQueue<E> {
    /// Absolute slot number of the current slot.
    cur: u64,
    /// Events of the current slot in `(time, tie)` order; `current[head..]` are pending.
    current: Vec<(u128, E)>,
    head: usize,
    /// Per wheel slot, the most recently pushed node of its list (`NIL` when empty). Lists
    /// link each node to the one pushed before it.
    slot_last: Vec<u32>,
    /// Node pool; freed nodes are reused last-in first-out, so they stay in cache.
    nodes: Vec<Node<E>>,
    free: u32,
    /// Bit `i % 64` of `bits[i / 64]`: wheel slot index `i` is non-empty.
    bits: [u64; WORDS],
    /// Bit `w % 64` of `summary[w / 64]` set when `bits[w] != 0`.
    summary: [u64; SUMMARY],
    overflow: BinaryHeap<Reverse<Item<E>>>,
    len: usize,
    seq: u64,
    popped: u64,
    /// Time and tie of the last popped event (nothing may be pushed before it).
    last: u64,
    last_tie: u64,
    /// Fed by `push_tie` (caller-given ties) rather than `push` (FIFO ties).
    keyed: bool,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            cur: 0,
            current: Vec::with_capacity(64),
            head: 0,
            slot_last: vec![NIL; SLOTS],
            nodes: Vec::with_capacity(4096),
            free: NIL,
            bits: [0; WORDS],
            summary: [0; SUMMARY],
            overflow: BinaryHeap::new(),
            len: 0,
            seq: 0,
            popped: 0,
            last: 0,
            last_tie: 0,
            keyed: false,
        }
    }

    #[inline]
    fn set_bit(&mut self, i: usize) {
        self.bits[i / 64] |= 1 << (i % 64);
        self.summary[i / 4096] |= 1 << ((i / 64) % 64);
    }

    #[inline]
    fn clear_bit(&mut self, i: usize) {
        self.bits[i / 64] &= !(1 << (i % 64));
        if self.bits[i / 64] == 0 {
            self.summary[i / 4096] &= !(1 << ((i / 64) % 64));
        }
    }

    /// Places an event whose time is not before the current slot.
    #[inline(always)]
    fn place(&mut self, time: u64, tie: u64, ev: E) {
        let s = time >> SLOT_SHIFT;
        debug_assert!(time >= self.last, "event scheduled in the past");
        if s <= self.cur {
            // Rare: keep the current slot ordered by key. An event before the current slot
            // (a peek moved the wheel ahead to the next pending event, then an earlier one was
            // pushed: a flow's start, a message from another partition) joins it too: the
            // current events then span several slots, still in key order, all before the
            // wheel's.
            let k = key(SimTime(time), tie);
            let pos = self.head + self.current[self.head..].partition_point(|x| x.0 <= k);
            self.current.insert(pos, (k, ev));
        } else if s < self.cur + SLOTS as u64 {
            let i = (s % SLOTS as u64) as usize;
            let node = Node {
                time,
                tie,
                prev: self.slot_last[i],
                ev,
            };
            let n = if self.free != NIL {
                let n = self.free;
                self.free = self.nodes[n as usize].prev;
                self.nodes[n as usize] = node;
                n
            } else {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            };
            self.slot_last[i] = n;
            self.set_bit(i);
        } else {
            self.overflow.push(Reverse(Item {
                key: key(SimTime(time), tie),
                ev,
            }));
        }
    }

    /// Schedules `ev` at `time`, which must not precede the last popped (or peeked) event,
    /// after every event of equal time pushed before it (FIFO ties).
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, ev: E) {
        let seq = self.seq;
        self.seq += 1;
        self.len += 1;
        self.place(time.0, seq, ev);
    }

    /// Schedules `ev` at `time` (not before the last popped or peeked event) with tie key
    /// `tie`: among events of equal time, the smaller tie pops first. `(time, tie)` must be
    /// unique among pending events; a queue fed by `push_tie` is never fed by `push`.
    #[inline(always)]
    pub fn push_tie(&mut self, time: SimTime, tie: u64, ev: E) {
        self.keyed = true;
        self.len += 1;
        self.place(time.0, tie, ev);
    }

    /// First non-empty word index in `[from, WORDS)`.
    fn next_word(&self, from: usize) -> Option<usize> {
        let mut s = from / 64;
        let mut mask = !0u64 << (from % 64);
        while s < SUMMARY {
            let m = self.summary[s] & mask;
            if m != 0 {
                return Some(s * 64 + m.trailing_zeros() as usize);
            }
            s += 1;
            mask = !0;
        }
        None
    }

    /// Next non-empty wheel index strictly after wheel index `from`, searching circularly.
    fn next_set(&self, from: usize) -> Option<usize> {
        let start = (from + 1) % SLOTS;
        let (w, b) = (start / 64, start % 64);
        let here = self.bits[w] & (!0u64 << b);
        if here != 0 {
            return Some(w * 64 + here.trailing_zeros() as usize);
        }
        let word = self.next_word(w + 1).or_else(|| self.next_word(0))?;
        Some(word * 64 + self.bits[word].trailing_zeros() as usize)
    }

    /// Moves overflow events that now fall within the horizon into the wheel.
    fn migrate(&mut self) {
        let horizon = self.cur + SLOTS as u64;
        if self.overflow.is_empty() {
            return;
        }
        while let Some(Reverse(top)) = self.overflow.peek() {
            if ((top.key >> 64) as u64) >> SLOT_SHIFT >= horizon {
                break;
            }
            let Reverse(it) = self.overflow.pop().expect("peeked");
            self.place((it.key >> 64) as u64, it.key as u64, it.ev);
        }
    }

    /// Makes `current[head..]` hold the earliest events. Returns false when empty.
    #[inline(always)]
    fn settle(&mut self) -> bool {
        self.head < self.current.len() || self.next_slot()
    }

    /// Advances to the next non-empty slot (the slow path of `settle`).
    #[inline(never)]
    fn next_slot(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        self.current.clear();
        self.head = 0;
        let cur_idx = (self.cur % SLOTS as u64) as usize;
        match self.next_set(cur_idx) {
            Some(i) => {
                let dist = (i + SLOTS - cur_idx) % SLOTS;
                let dist = if dist == 0 { SLOTS } else { dist };
                self.cur += dist as u64;
            }
            None => {
                // The wheel is empty: jump to the first overflow event.
                let Reverse(top) = self.overflow.peek().expect("len > 0");
                self.cur = ((top.key >> 64) as u64) >> SLOT_SHIFT;
            }
        }
        let i = (self.cur % SLOTS as u64) as usize;
        let mut n = std::mem::replace(&mut self.slot_last[i], NIL);
        if n != NIL {
            self.clear_bit(i);
            // The list runs newest to oldest: collect, free, then restore push order.
            while n != NIL {
                let node = self.nodes[n as usize];
                self.current
                    .push((key(SimTime(node.time), node.tie), node.ev));
                self.nodes[n as usize].prev = self.free;
                self.free = n;
                n = node.prev;
            }
            if !self.keyed {
                // Push order for the stable sort below; keyed slots sort by the whole key.
                self.current.reverse();
            }
        }
        // With FIFO ties a slot receives its events in tie order (events migrating from the
        // overflow enter a slot before any event is pushed to it directly, because the
        // horizon only moves forward), so a stable sort by time gives `(time, tie)` order;
        // caller-given ties need the whole key. (Overflow events that migrate into this slot
        // are inserted in order by `place`.)
        if self.current.len() > 1 {
            if self.keyed {
                self.current.sort_unstable_by_key(|x| x.0);
            } else {
                self.current.sort_by_key(|x| (x.0 >> 64) as u64);
            }
        }
        self.migrate();
        debug_assert!(self.head < self.current.len());
        true
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if !self.settle() {
            return None;
        }
        let (k, ev) = self.current[self.head];
        let t = (k >> 64) as u64;
        self.head += 1;
        self.len -= 1;
        self.popped += 1;
        self.last = t;
        self.last_tie = k as u64;
        Some((SimTime(t), ev))
    }

    /// Removes and returns the earliest event if its time is before `limit`.
    #[inline]
    pub fn pop_before(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if self.head >= self.current.len() {
            // Enter the next slot only if it may hold a due event: a peek must not move the
            // wheel past events still to be pushed before it (another partition's, a start).
            match self.next_start() {
                Some(t) if t < limit.0 => {
                    self.next_slot();
                }
                _ => return None,
            }
        }
        let (k, ev) = self.current[self.head];
        let t = (k >> 64) as u64;
        if t >= limit.0 {
            return None;
        }
        self.head += 1;
        self.len -= 1;
        self.popped += 1;
        self.last = t;
        self.last_tie = k as u64;
        Some((SimTime(t), ev))
    }

    /// With the current slot consumed: the earliest time the next non-empty slot can hold
    /// (its first picosecond; the overflow's first event when the wheel is empty), None when
    /// the queue is empty. Moves nothing.
    fn next_start(&self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let cur_idx = (self.cur % SLOTS as u64) as usize;
        match self.next_set(cur_idx) {
            Some(i) => {
                let dist = (i + SLOTS - cur_idx) % SLOTS;
                let dist = if dist == 0 { SLOTS } else { dist };
                Some((self.cur + dist as u64) << SLOT_SHIFT)
            }
            None => self
                .overflow
                .peek()
                .map(|Reverse(top)| (top.key >> 64) as u64),
        }
    }

    /// The pending event `k` places after the next one, if the current slot holds it: a
    /// hint for prefetching what it will touch (an event pushed meanwhile into the current
    /// slot may still come first).
    #[inline(always)]
    pub fn peek_ahead(&self, k: usize) -> Option<&E> {
        self.current.get(self.head + k).map(|x| &x.1)
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.head < self.current.len() {
            return Some(SimTime((self.current[self.head].0 >> 64) as u64));
        }
        if self.len == 0 {
            return None;
        }
        // The earliest event of the next non-empty slot (its list is unsorted: a scan), or
        // the overflow's first; the wheel does not move (see `pop_before`).
        let cur_idx = (self.cur % SLOTS as u64) as usize;
        match self.next_set(cur_idx) {
            Some(i) => {
                let mut n = self.slot_last[i];
                let mut t = u64::MAX;
                while n != NIL {
                    let node = &self.nodes[n as usize];
                    t = t.min(node.time);
                    n = node.prev;
                }
                Some(SimTime(t))
            }
            None => self
                .overflow
                .peek()
                .map(|Reverse(top)| SimTime((top.key >> 64) as u64)),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The tie key of the last popped event.
    pub fn last_tie(&self) -> u64 {
        self.last_tie
    }

    /// Number of events popped so far (the run's "events processed").
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

/// The binary-heap reference queue (same API and order as [`EventQueue`]).
pub struct HeapQueue<E> {
    heap: BinaryHeap<Reverse<Item<E>>>,
    seq: u64,
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> HeapQueue<E> {
    pub fn new() -> Self {
        HeapQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
    pub fn push(&mut self, time: SimTime, ev: E) {
        let k = key(time, self.seq);
        self.seq += 1;
        self.heap.push(Reverse(Item { key: k, ev }));
    }
    pub fn push_tie(&mut self, time: SimTime, tie: u64, ev: E) {
        self.heap.push(Reverse(Item {
            key: key(time, tie),
            ev,
        }));
    }
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Reverse(e) = self.heap.pop()?;
        Some((SimTime((e.key >> 64) as u64), e.ev))
    }
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.0.key >> 64) as u64))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;

    #[test]
    fn peek_ahead_shows_the_current_slots_next_events_in_pop_order() {
        let mut q = EventQueue::new();
        // Four events in one slot (out of order), one in a later slot.
        for (t, e) in [
            (30u64, 'c'),
            (10, 'a'),
            (20, 'b'),
            (40, 'd'),
            (1 << 20, 'z'),
        ] {
            q.push(SimTime(t), e);
        }
        // Slot 0 is current from the start.
        assert_eq!(q.peek_ahead(0), Some(&'a'));
        assert_eq!(q.pop(), Some((SimTime(10), 'a')));
        assert_eq!(
            (q.peek_ahead(0), q.peek_ahead(1), q.peek_ahead(2)),
            (Some(&'b'), Some(&'c'), Some(&'d'))
        );
        for want in ['b', 'c', 'd'] {
            assert_eq!(q.peek_ahead(0), Some(&want));
            assert_eq!(q.pop().map(|x| x.1), Some(want));
        }
        // The later slot is not current yet: no hint, and it still pops.
        assert_eq!(q.peek_ahead(0), None);
        assert_eq!(q.pop(), Some((SimTime(1 << 20), 'z')));
    }

    /// A peek moves the wheel to the next pending event; events pushed afterwards between
    /// the last pop and that event (a flow's start, another partition's packet) still pop
    /// first, in key order, under either tie rule; checked against the heap at random.
    #[test]
    fn pushes_behind_a_peeked_slot_pop_in_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(1 << 30), 'z');
        assert_eq!(q.peek_time(), Some(SimTime(1 << 30)));
        q.push(SimTime(5_000), 'b');
        q.push(SimTime(70), 'a');
        q.push(SimTime(5_000), 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'z']);
        for keyed in [false, true] {
            let mut r = RngStream::new(11, "queue-behind-peek");
            let (mut a, mut b) = (EventQueue::new(), HeapQueue::new());
            let mut now = 0u64;
            for id in 0..20_000u64 {
                // Far events, a peek, then pushes anywhere between now and them.
                let t = now
                    + match r.below(4) {
                        0 => r.below(1 << 34),
                        1 => r.below(1 << 22),
                        _ => r.below(1 << 12),
                    };
                if keyed {
                    let k = r.below(1 << 20) << 40 | id;
                    a.push_tie(SimTime(t), k, id);
                    b.push_tie(SimTime(t), k, id);
                } else {
                    a.push(SimTime(t), id);
                    b.push(SimTime(t), id);
                }
                assert_eq!(a.peek_time(), b.peek_time());
                if r.below(3) == 0 {
                    let x = a.pop();
                    assert_eq!(x, b.pop(), "keyed {keyed}, id {id}");
                    now = x.map_or(now, |(t, _)| t.0);
                }
            }
            while let Some(x) = b.pop() {
                assert_eq!(a.pop(), Some(x));
            }
            assert!(a.is_empty());
        }
    }

    #[test]
    fn orders_by_time_then_fifo() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'a');
        q.push(SimTime(1), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(1), 'd');
        q.push(SimTime(3), 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'e', 'a', 'c']);
        assert_eq!(q.popped(), 5);
        assert!(q.is_empty());
    }

    #[test]
    fn many_ties_stay_fifo() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            q.push(SimTime(7), i);
        }
        for i in 0..1000u32 {
            assert_eq!(q.pop().unwrap().1, i);
        }
    }

    #[test]
    fn far_future_and_wraparound() {
        let mut q = EventQueue::new();
        let slot = 1u64 << SLOT_SHIFT;
        let times = [
            0,
            slot - 1,
            slot,
            slot * SLOTS as u64 - 1,
            slot * SLOTS as u64,
            slot * SLOTS as u64 * 3 + 17,
            u64::MAX / 4,
        ];
        for (i, &t) in times.iter().enumerate().rev() {
            q.push(SimTime(t), i);
        }
        for (i, &t) in times.iter().enumerate() {
            assert_eq!(q.peek_time(), Some(SimTime(t)));
            assert_eq!(q.pop(), Some((SimTime(t), i)));
        }
        assert_eq!(q.pop(), None);
    }

    /// A simulation-like workload: pops interleaved with pushes at `now + delay`, delays drawn
    /// from many scales (same-slot, in-wheel, beyond the horizon, ties). Both queues must
    /// agree on every pop.
    #[test]
    fn wheel_matches_binary_heap() {
        let mut r = RngStream::new(5, "queue-test");
        let mut a = EventQueue::new();
        let mut b = HeapQueue::new();
        let mut id = 0u32;
        for _ in 0..500 {
            let t = SimTime(r.below(1 << 30));
            a.push(t, id);
            b.push(t, id);
            id += 1;
        }
        let mut now = SimTime::ZERO;
        for step in 0..300_000 {
            if step % 7 == 0 {
                assert_eq!(a.peek_time(), b.peek_time());
            }
            let x = a.pop();
            assert_eq!(x, b.pop(), "step {step}");
            let Some((t, _)) = x else { break };
            assert!(t >= now);
            now = t;
            for _ in 0..r.below(3) {
                let d = match r.below(6) {
                    0 => 0,
                    1 => r.below(1 << SLOT_SHIFT),
                    2 => r.below(2_000_000),
                    3 => r.below(1 << (SLOT_SHIFT + 13)),
                    4 => r.below(1 << (SLOT_SHIFT + 15)),
                    _ => r.below(1 << 40),
                };
                a.push(now + SimTime(d), id);
                b.push(now + SimTime(d), id);
                id += 1;
            }
            assert_eq!(a.len(), b.len());
        }
    }

    /// Caller-given tie keys (`push_tie`), drawn at random so that same-time events arrive
    /// in any order relative to their keys, including same-time pushes while their instant
    /// is being popped: the wheel must pop exactly the heap's `(time, tie)` order.
    #[test]
    fn wheel_matches_binary_heap_with_tie_keys() {
        let mut r = RngStream::new(9, "queue-tie-test");
        let mut a = EventQueue::new();
        let mut b = HeapQueue::new();
        let mut id = 0u64;
        // Unique ties: random high bits, a counter below.
        let tie = |r: &mut RngStream, id: u64| r.below(1 << 20) << 40 | id;
        for _ in 0..500 {
            let t = SimTime(r.below(1 << 12) * 1000);
            let k = tie(&mut r, id);
            a.push_tie(t, k, id);
            b.push_tie(t, k, id);
            id += 1;
        }
        let mut now = SimTime::ZERO;
        let mut ties_seen = 0;
        for step in 0..300_000 {
            if step % 5 == 0 {
                assert_eq!(a.peek_time(), b.peek_time());
            }
            let x = a.pop();
            assert_eq!(x, b.pop(), "step {step}");
            let Some((t, _)) = x else { break };
            assert!(t >= now);
            ties_seen += (t == now) as u32;
            now = t;
            for _ in 0..r.below(3) {
                // Coarse delays make many equal times.
                let d = match r.below(5) {
                    0 => 0,
                    1 => r.below(4) * 1000,
                    2 => r.below(1 << 8) * 1000,
                    3 => r.below(1 << (SLOT_SHIFT + 14)) / 1000 * 1000,
                    _ => r.below(1 << 36) / 1000 * 1000,
                };
                let k = tie(&mut r, id);
                a.push_tie(now + SimTime(d), k, id);
                b.push_tie(now + SimTime(d), k, id);
                id += 1;
            }
            assert_eq!(a.len(), b.len());
        }
        assert!(ties_seen > 10_000, "only {ties_seen} same-time pops");
    }
}
