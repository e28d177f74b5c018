//! The discrete-event engine: a time-ordered event queue, the partition-stable tie keys, named,
//! seeded random-number streams, and the barrier the threads of a partitioned run meet at.
//!
//! Events are small `Copy` values ordered by `(time, tie)`. The simulator's ties come from
//! [`tie`], `(π(origin), sequence of the origin)`, which needs no run-wide counter; the queue
//! also offers insertion-order ties (nexosim's epoch rule) for other uses. The queue does
//! not support cancellation: components cancel lazily by generation number (a timer event
//! whose generation no longer matches its owner's is ignored), and keep at most one pending
//! event each (a port's transmitter, a link's head packet, a flow's timer), so the queue holds
//! O(ports + links + flows) entries, not O(packets).
//!
//! Randomness comes only from [`rng::RngStream`]s derived from the master seed and a stream
//! name; no component draws from a shared generator, so adding a consumer of randomness in one
//! place does not perturb draws elsewhere.

pub mod barrier;
pub mod queue;
pub mod rng;
pub mod tie;
pub mod timer;

pub use queue::EventQueue;
pub use rng::RngStream;
pub use timer::{Fired, LazyTimer};
