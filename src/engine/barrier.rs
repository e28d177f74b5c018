//! A reusable barrier for the threads of one partitioned run: each window ends with every
//! thread at the barrier, so it is crossed thousands of times a second and must be cheap.
//!
//! Waiters spin (with the processor's spin-loop hint) for about a microsecond, which is all a
//! crossing costs when every thread has a core and the work was balanced; then yield the
//! processor a few dozen times, then park on a condition variable, so that a waiter does not
//! steal a core from the threads still working when there are more threads than cores (an
//! oversubscribed run, e.g. `-t 8` on two cores). The last thread to arrive starts the next
//! generation and wakes the parked ones. `std::sync::Barrier` always parks, at several
//! microseconds a crossing on a small virtual machine.
//!
//! Not here: fairness between waiters, timeouts, or poisoning (a thread that panics aborts the
//! run anyway: the scope it runs in re-raises the panic).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Spins before yielding, in spin-loop hints (a hint is tens to a hundred-odd cycles: a
/// microsecond or so in all), then yields the processor this many times before parking.
const SPINS: u32 = 128;
const YIELDS: u32 = 64;

/// A barrier for `n` threads, reusable for any number of crossings.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    /// Threads arrived in the current generation.
    arrived: AtomicUsize,
    /// The generation: bumped by the last thread to arrive.
    generation: AtomicUsize,
    lock: Mutex<()>,
    cond: Condvar,
}

impl SpinBarrier {
    /// A barrier for `n` threads (at least one).
    pub fn new(n: usize) -> Self {
        assert!(n > 0, "a barrier for no thread");
        SpinBarrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cond: Condvar::new(),
        }
    }

    /// Waits until all `n` threads have called `wait` in this generation. Everything a thread
    /// wrote before its call is visible to every thread after theirs.
    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            // Under the lock, so that a thread about to park cannot miss the wake-up.
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.generation.fetch_add(1, Ordering::AcqRel);
            self.cond.notify_all();
            return;
        }
        for _ in 0..SPINS {
            if self.generation.load(Ordering::Acquire) != generation {
                return;
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS {
            if self.generation.load(Ordering::Acquire) != generation {
                return;
            }
            std::thread::yield_now();
        }
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.generation.load(Ordering::Acquire) == generation {
            g = self.cond.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Threads (more than cores, so some park) cross the barrier many times; between two
    /// crossings each adds to a counter, and after each crossing every thread sees every
    /// other's addition of the round before.
    #[test]
    fn every_thread_sees_every_round() {
        for threads in [1, 2, 3, 8] {
            let b = SpinBarrier::new(threads);
            let sum = AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        for round in 0..2000u64 {
                            sum.fetch_add(1, Ordering::Relaxed);
                            b.wait();
                            assert_eq!(sum.load(Ordering::Relaxed), (round + 1) * threads as u64);
                            b.wait();
                        }
                    });
                }
            });
        }
    }
}
