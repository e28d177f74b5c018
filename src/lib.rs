//! # dcsim
//!
//! A fast, deterministic, packet-level discrete-event simulator of data-center networks.
//!
//! ```text
//!  workload ──▶ flows (transport state) ──pull──▶ host NIC port ──wire──▶ switch
//!                    ▲                                                  │ route (ECMP/spray)
//!                    │ ACKs                                             │ MMU admit / PFC
//!                    │                                                  ▼
//!  host ◀──wire── switch egress port ◀── scheduler (SP / DWRR / SP+min-BW), ECN marking
//! ```
//!
//! * [`units`]: `SimTime` (integer picoseconds), `Bytes`, `BitRate`, parsed with units.
//! * [`engine`]: event queue with FIFO ties, named RNG streams.
//! * [`net`]: packets, ports (queues, schedulers, ECN, serializer, wire), the switch MMU
//!   (static or shared dynamic-threshold buffers, PFC), routing, load balancers.
//! * [`transport`]: TCP NewReno/SACK with Reno or DCTCP, constant-rate UDP.
//! * [`topology`]: leaf-spine, fat-tree, dumbbell.
//! * [`workload`]: size CDFs, Poisson arrivals at a target load, CSV flow lists, incast.
//! * [`sim`]: one run's event loop. [`experiment`]: runs × seeds in parallel.
//! * [`metrics`], [`report`]: per-flow records, ideal FCT, summaries, output files.
//! * [`config`]: the TOML experiment schema. [`cli`]: the `dcsim` command.
//!
//! Determinism: one master seed, named random streams, `(time, insertion)` event order, no
//! iteration over hash maps, parallelism only across independent runs. The same config and
//! seed give byte-identical outputs whatever the thread count.

pub mod budget;
pub mod cli;
pub mod columns;
pub mod config;
pub mod engine;
pub mod experiment;
pub mod ids;
pub mod lower;
pub mod metrics;
pub mod net;
pub mod pcap;
pub mod plot;
pub mod probe;
pub mod provenance;
pub mod report;
pub mod scheme;
pub mod sim;
pub mod sweep;
pub mod topology;
pub mod transport;
pub mod units;
pub mod workload;
