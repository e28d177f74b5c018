//! The discrete-event engine: a time-ordered event queue, the partition-stable tie keys, and
//! named, seeded random-number streams.
//!
//! Events are small `Copy` values ordered by `(time, tie)`. By default the tie is the insertion
//! sequence, so two events at the same picosecond run in the order they were scheduled
//! (nexosim's epoch rule); [`tie`] builds the keyed alternative, `(π(origin), sequence of the
//! origin)`, which needs no run-wide counter. The queue does
//! not support cancellation: components cancel lazily by generation number (a timer event
//! whose generation no longer matches its owner's is ignored), and keep at most one pending
//! event each (a port's transmitter, a link's head packet, a flow's timer), so the queue holds
//! O(ports + links + flows) entries, not O(packets).
//!
//! Randomness comes only from [`rng::RngStream`]s derived from the master seed and a stream
//! name; no component draws from a shared generator, so adding a consumer of randomness in one
//! place does not perturb draws elsewhere.

pub mod queue;
pub mod rng;
pub mod tie;
pub mod timer;

pub use queue::EventQueue;
pub use rng::RngStream;
pub use timer::{Fired, LazyTimer};
