//! What a run will cost in wall time, known before it runs: the packet-hops its workload
//! makes (its bytes over the MTU, one ACK per packet, over host-to-host paths of two links up
//! to the topology's longest path) as a range, and the wall time that takes at a calibrated
//! rate of packet-hops per second, also a range; and warnings for settings that make a run
//! long for nothing (a retransmission timeout below the base round trip).
//!
//! Deliberately rough and labelled as such: it does not model retransmissions, the flows a
//! `stop_time` leaves unfinished (only the line-rate bound on what it lets through), queueing
//! or the simulator's cost per event beyond packet-hops. The calibration, [`HOPS_PER_SEC`], is
//! what `dcsim bench` measures for one core of this machine class (docs/performance.md):
//! 6–9 M packet-hops/s for the TCP family, slower with RDMA, delay attribution and telemetry;
//! the range's low end leaves room for those.

use crate::config::Config;
use crate::scheme::{Scheme, TransportKind};
use crate::units::SimTime;
use std::path::Path;

/// Packet-hops one run simulates per wall-clock second, slowest and fastest.
pub const HOPS_PER_SEC: (f64, f64) = (2.0e6, 9.0e6);

/// A run whose low estimate exceeds this (10 minutes) is announced with a warning.
pub const LONG_RUN_S: f64 = 600.0;

/// The estimated work of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Payload bytes its flows carry.
    pub bytes: f64,
    /// Packet-hops, least and most.
    pub hops: (f64, f64),
    /// Wall-clock seconds, least and most.
    pub wall_s: (f64, f64),
}

/// The work of one run of `cfg`; None if its workload's size cannot be told (an unreadable
/// file: validation reports it).
pub fn estimate(cfg: &Config, base: &Path) -> Option<Work> {
    let n_hosts = cfg.topology.n_hosts();
    let host_rate = cfg.topology.host_rate();
    let mut bytes = cfg.workload.expected_bytes(base, n_hosts, host_rate)?;
    if let Some(stop) = cfg.stop_time {
        // No more than every host's link can send by then.
        let line = n_hosts as f64 * host_rate.bps() as f64 / 8.0 * stop.as_secs_f64();
        bytes = bytes.min(line);
    }
    let pkts = (bytes / cfg.packet.mss.0 as f64).max(0.0);
    let longest = cfg.topology.longest_path().len().max(2) as f64;
    let hops = (pkts * 2.0, pkts * 2.0 * longest);
    Some(Work {
        bytes,
        hops,
        wall_s: (hops.0 / HOPS_PER_SEC.1, hops.1 / HOPS_PER_SEC.0),
    })
}

/// A duration in seconds, for people: "40 s", "12 min", "3.5 h".
pub fn human(s: f64) -> String {
    if s < 1.0 {
        "under 1 s".into()
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Warnings about `cfg` that do not make it wrong but make its runs long or odd: timeouts
/// below the base round trip (every packet in flight times out, over and over).
pub fn warnings(cfg: &Config) -> Vec<String> {
    let rtt = cfg.base_rtt();
    let mut out = Vec::new();
    let below = |what: &str, t: SimTime| -> Option<String> {
        (t < rtt).then(|| {
            format!(
                "{what} = {t} is below the base round trip ({:.2} us over the topology's longest path): packets still in flight will time out and be resent over and over",
                rtt.as_us_f64()
            )
        })
    };
    let kinds: Vec<TransportKind> = cfg
        .schemes
        .iter()
        .filter_map(|n| Scheme::builtin(n))
        .map(|s| s.transport)
        .collect();
    let tcp = kinds.iter().any(|k| k.is_window());
    if tcp {
        out.extend(below("tcp.rto_min", cfg.tcp.rto_min));
        out.extend(below("tcp.rto_max", cfg.tcp.rto_max));
    }
    if kinds.contains(&TransportKind::Rdma)
        && let Some(t) = cfg.rdma.rto
    {
        out.extend(below("rdma.rto", t));
    }
    if kinds.iter().any(|k| k.is_pfabric())
        && let Some(t) = cfg.pfabric.rto
    {
        out.extend(below("pfabric.rto", t));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human(0.2), "under 1 s");
        assert_eq!(human(40.0), "40 s");
        assert_eq!(human(720.0), "12 min");
        assert_eq!(human(6.0 * 3600.0), "6.0 h");
    }
}
