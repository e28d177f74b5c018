//! A partition's state at the end of a run, as bytes: what a process sends the process that
//! merges the run (rank 0 of an MPI run), which takes it into a replica of its own built
//! alike, so that the merge (`merge`) sees what it would have seen had every partition run
//! in one process.
//!
//! What crosses is what the merge takes from a partition's replica: every port and switch
//! (the merge picks the ones the partition owns, the wires whose far end it owns, and every
//! port's drops), every flow record, the transport (each flow's or message's sender and
//! receiver halves, and its counters), the run's counters, the packet captures, the
//! delay-attribution results and loss log, and the count of telemetry stacks live. Nothing
//! else of a replica is read once the run has ended.
//!
//! The format is MessagePack (`rmp_serde`, structs as arrays), not the messages' `postcard`:
//! a replica's state holds configuration values (a port's ECN marking, the RDMA scheme)
//! whose configuration form is an internally tagged enum, which only a self-describing
//! format can read back. It crosses once per run.
//!
//! Not here: the schedule of pending events (the run has ended), the routes and the
//! workload (every replica is built with the same), the time series (sampled by the
//! coordinator from every partition during the run).

use super::*;
use serde::{Deserialize, Serialize};

/// What a replica exports, borrowed for packing.
#[derive(Serialize)]
struct Export<'a> {
    ports: &'a [Port],
    switches: &'a [crate::net::Switch],
    flows: &'a [Flow],
    transport: &'a Transport,
    calcs: &'a [deps::CalcRun],
    counts: Counts,
    pcap: Option<Vec<crate::pcap::Deferred>>,
    attrib: Option<attrib::PartResults>,
    telemetry_live: Option<usize>,
}

/// What a replica imports: [`Export`], owned (the same fields, in the same order).
#[derive(Deserialize)]
struct Import {
    ports: Vec<Port>,
    switches: Vec<crate::net::Switch>,
    flows: Vec<Flow>,
    transport: Transport,
    calcs: Vec<deps::CalcRun>,
    counts: Counts,
    pcap: Option<Vec<crate::pcap::Deferred>>,
    attrib: Option<attrib::PartResults>,
    telemetry_live: Option<usize>,
}

/// The run's counters a replica keeps.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Counts {
    cons: Conservation,
    packet_hops: u64,
    failure_losses: u64,
    finished: usize,
    tag_finished: usize,
    started: usize,
    calcs_done: usize,
    /// Events handled, the run's own included.
    popped: u64,
    /// The run's own events handled (every partition handles them).
    run_events: u64,
    now: SimTime,
    ended: Option<EndReason>,
}

impl Sim {
    /// This replica's end-of-run state, packed (see the module). Takes the packet captures.
    pub(in crate::sim) fn export_part(&mut self) -> Vec<u8> {
        let counts = Counts {
            cons: self.cons,
            packet_hops: self.packet_hops,
            failure_losses: self.failure_losses,
            finished: self.finished,
            tag_finished: self.tag_finished,
            started: self.started,
            calcs_done: self.deps.calcs_done,
            popped: self.events(),
            run_events: self.run_events,
            now: self.now,
            ended: self.ended,
        };
        let e = Export {
            ports: &self.net.ports,
            switches: &self.net.switches,
            flows: &self.flows,
            transport: &self.transport,
            calcs: &self.deps.calcs,
            counts,
            pcap: self.pcap.as_mut().map(|w| w.take_deferred()),
            attrib: self.attrib.as_ref().map(|a| a.part_results()),
            telemetry_live: self.telemetry.as_ref().map(|t| t.live),
        };
        rmp_serde::to_vec(&e).expect("a partition's state packs (no type of its can fail to)")
    }

    /// Takes in another process's replica of the same partition (as [`Sim::export_part`]
    /// packed it) in place of this one's state: this replica, built alike and not run,
    /// then stands for it in the merge.
    pub(in crate::sim) fn import_part(&mut self, bytes: &[u8]) -> Result<(), String> {
        let i: Import = rmp_serde::from_slice(bytes)
            .map_err(|e| format!("a partition's end-of-run state did not unpack: {e}"))?;
        if i.ports.len() != self.net.ports.len() || i.switches.len() != self.net.switches.len() {
            return Err(format!(
                "a partition's end-of-run state has {} ports and {} switches, this process's \
                 network {} and {}: the processes did not build the same run",
                i.ports.len(),
                i.switches.len(),
                self.net.ports.len(),
                self.net.switches.len()
            ));
        }
        self.net.ports = i.ports;
        self.net.switches = i.switches;
        self.flows = i.flows;
        self.transport = i.transport;
        self.deps.calcs = i.calcs;
        let c = i.counts;
        self.cons = c.cons;
        self.packet_hops = c.packet_hops;
        self.failure_losses = c.failure_losses;
        self.finished = c.finished;
        self.tag_finished = c.tag_finished;
        self.started = c.started;
        self.deps.calcs_done = c.calcs_done;
        self.run_events = c.run_events;
        self.now = c.now;
        self.ended = c.ended;
        // The events it handled, for the run's count (this replica handled none).
        self.events_elsewhere = c.popped;
        if let (Some(w), Some(caps)) = (&mut self.pcap, i.pcap) {
            w.put_deferred(caps);
        }
        if let (Some(a), Some(r)) = (&mut self.attrib, i.attrib) {
            a.set_part_results(r);
        }
        if let (Some(t), Some(live)) = (&mut self.telemetry, i.telemetry_live) {
            t.live = live;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::net::port::{EcnConfig, MarkAt};
    use crate::units::Bytes;

    /// A configuration enum read back through serde's buffering of internally tagged enums
    /// (which calls itself human-readable) keeps its units' binary form.
    #[test]
    fn tagged_config_round_trips() {
        for e in [
            EcnConfig::None,
            EcnConfig::Step {
                k: Bytes(97_500),
                at: MarkAt::Enqueue,
            },
            EcnConfig::Red {
                kmin: Bytes(5_000),
                kmax: Bytes(u64::MAX),
                pmax: 0.1 + 0.2,
                at: MarkAt::Dequeue,
            },
        ] {
            let bytes = rmp_serde::to_vec(&e).unwrap();
            let back: EcnConfig = rmp_serde::from_slice(&bytes).unwrap();
            assert_eq!(back, e);
        }
    }

    /// Garbage is refused with an error, not a panic.
    #[test]
    fn garbage_is_refused() {
        let r: Result<EcnConfig, _> = rmp_serde::from_slice(&[0xc1, 0x00, 0xff]);
        assert!(r.is_err());
    }
}
