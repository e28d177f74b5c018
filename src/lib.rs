//! # dcsim
//!
//! A fast, deterministic, packet-level discrete-event simulator of data-center networks.
//!
//! ```text
//!  workload ──▶ flows (transport state) ──pull──▶ host NIC port ──wire──▶ switch
//!                    ▲                                                  │ route (load balancer)
//!                    │ ACKs                                             │ MMU admit / PFC
//!                    │                                                  ▼
//!  host ◀──wire── switch egress port ◀── scheduler (SP / DWRR / SP+min-BW), ECN marking
//! ```
//!
//! * [`units`]: `SimTime` (integer picoseconds), `Bytes`, `BitRate`, parsed with units.
//! * [`engine`]: event queue with FIFO ties, named RNG streams, lazily cancelled timers.
//! * [`net`]: packets, ports (queues, schedulers, ECN, serializer, wire), the switch MMU
//!   (static or shared dynamic-threshold buffers, PFC), routing, load balancers (ECMP, WCMP,
//!   spraying, round robin, PDTCP's adaptive multipath, flowlet switching), in-band telemetry.
//! * [`transport`]: every end-host protocol behind the `Protocol` trait, each congestion
//!   controller one row of `transport::registry`: TCP NewReno/SACK with the window controllers
//!   of `transport::cc` (Reno, DCTCP, D2TCP, PDTCP, Swift, CUBIC) and pFabric's end host;
//!   constant-rate UDP; RoCEv2 queue pairs with the rate controllers (DCQCN, HPCC, TIMELY,
//!   DCTCP-rate, PowerTCP), IRN's selective repeat, MP-RDMA, and the host message schedulers
//!   (SP-RDMA, NEM-like, SRM-like, GPMP).
//! * [`topology`]: leaf-spine, fat-tree, dumbbell, and topology files (dcsim's, HPCC's).
//! * [`workload`]: size CDFs, Poisson arrivals at a target load, CSV flow lists, incast,
//!   partition-aggregate, collectives and dependent-sequential deadline workloads, imports of
//!   htsim, HPCC and JSON traffic.
//! * [`sim`]: one run's event loop, the switch pipeline, the NIC, host services, failures,
//!   delay attribution, time series. [`experiment`]: runs × sweep points × seeds in parallel.
//! * [`config`], [`scheme`], [`columns`]: the TOML schema, the scheme registry, the output
//!   columns. [`lower`]: config and scheme to model parameters. [`cli`]: the `dcsim` command.
//! * [`metrics`], [`report`], [`plot`], [`sweep`], [`pcap`], [`probe`]: per-flow records,
//!   ideal FCT, summaries, output files, figures, packet capture, the DCTCP sawtooth probe.
//!
//! `docs/architecture.md` walks a packet through these layers and lists what adding a
//! protocol, a congestion control, a load balancer or a column touches.
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
pub mod fileid;
pub mod ids;
pub mod interrupt;
pub mod io;
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
pub mod source_hash;
pub mod sweep;
pub mod topology;
pub mod transport;
pub mod units;
pub mod work;
pub mod workload;
