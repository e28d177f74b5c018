//! A lazily cancelled timer: the one mechanism behind every per-flow timer (retransmission,
//! pacing).
//!
//! The event queue cannot cancel, so a timer keeps at most one pending event and a generation
//! number. Arming for an earlier time than the pending event pushes a new event (the old one
//! becomes stale by generation); arming for a later time only moves the deadline, and the
//! pending event, when it fires, re-arms for it; cancelling only clears the deadline. A timer
//! re-armed on every ACK therefore costs one queue entry, not one per ACK.
//!
//! It does not know what it times: its owner pushes the event it asks for and acts on
//! [`Fired::Due`].

use crate::units::SimTime;

/// A timer with one pending event at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LazyTimer {
    /// When it is due (MAX: not armed).
    deadline: SimTime,
    /// Time of the pending event (MAX: none).
    event: SimTime,
    /// Generation of the pending event; a popped event of another generation is stale.
    generation: u32,
}

/// What a popped timer event means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// An older event: ignore it.
    Stale,
    /// The timer was cancelled.
    Idle,
    /// The deadline moved later: re-arm for it.
    Later(SimTime),
    /// The timer is due now.
    Due,
}

impl Default for LazyTimer {
    fn default() -> Self {
        Self::IDLE
    }
}

impl LazyTimer {
    pub const IDLE: LazyTimer = LazyTimer {
        deadline: SimTime::MAX,
        event: SimTime::MAX,
        generation: 0,
    };

    #[inline(always)]
    pub fn armed(&self) -> bool {
        self.deadline != SimTime::MAX
    }

    /// An idle timer for the next user of this one's owner slot: its generations continue this
    /// one's, so that an event this one left in the queue finds it [`Fired::Stale`].
    pub fn successor(&self) -> LazyTimer {
        LazyTimer {
            generation: self.generation,
            ..LazyTimer::IDLE
        }
    }

    /// Whether an event of this timer is still in the event queue (stale or not).
    #[inline(always)]
    pub fn pending(&self) -> bool {
        self.event != SimTime::MAX
    }

    #[inline(always)]
    pub fn deadline(&self) -> SimTime {
        self.deadline
    }

    /// Disarms the timer (its pending event, if any, will find it idle).
    #[inline(always)]
    pub fn cancel(&mut self) {
        self.deadline = SimTime::MAX;
    }

    /// Arms the timer for `at`; returns the generation of the event the owner must push at
    /// `at`, when one is needed (no pending event, or a later one).
    #[inline(always)]
    pub fn arm(&mut self, at: SimTime) -> Option<u32> {
        self.deadline = at;
        if self.event == SimTime::MAX || self.event > at {
            self.generation = self.generation.wrapping_add(1);
            self.event = at;
            Some(self.generation)
        } else {
            None
        }
    }

    /// The event of generation `generation` fired at `now`. The timer stays armed when due:
    /// the owner cancels it once it has acted.
    #[inline]
    pub fn fire(&mut self, generation: u32, now: SimTime) -> Fired {
        if generation != self.generation {
            return Fired::Stale;
        }
        self.event = SimTime::MAX;
        if self.deadline == SimTime::MAX {
            Fired::Idle
        } else if self.deadline > now {
            Fired::Later(self.deadline)
        } else {
            Fired::Due
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pending_event_and_lazy_moves() {
        let us = SimTime::from_us;
        let mut t = LazyTimer::IDLE;
        assert!(!t.armed() && !t.pending());
        let g1 = t.arm(us(10)).expect("first arm pushes");
        // Later deadlines ride on the pending event.
        assert_eq!(t.arm(us(20)), None);
        assert_eq!(t.arm(us(15)), None);
        // An earlier one needs a new event; the old one is then stale.
        let g2 = t.arm(us(5)).expect("earlier arm pushes");
        assert_ne!(g1, g2);
        assert_eq!(t.fire(g1, us(10)), Fired::Stale);
        assert_eq!(t.fire(g2, us(5)), Fired::Due);
        t.cancel();
        // Re-armed later while its event was pending: the event asks to re-arm.
        let g3 = t.arm(us(30)).unwrap();
        t.arm(us(40));
        assert_eq!(t.fire(g3, us(30)), Fired::Later(us(40)));
        let g4 = t.arm(us(40)).expect("no pending event after firing");
        t.cancel();
        // Cancelled, but its event is still queued until it fires.
        assert!(!t.armed() && t.pending());
        assert_eq!(t.fire(g4, us(40)), Fired::Idle);
        assert!(!t.pending());
        // A successor never takes an event its predecessor left queued.
        let g5 = t.arm(us(50)).unwrap();
        t.cancel();
        let mut s = t.successor();
        assert!(!s.armed() && !s.pending());
        let g6 = s.arm(us(60)).expect("a successor's first arm pushes");
        assert_ne!(g5, g6);
        assert_eq!(s.fire(g5, us(50)), Fired::Stale);
        assert_eq!(s.fire(g6, us(60)), Fired::Due);
    }
}
