//! Rail-optimised fabrics for AI training: servers of several GPUs, each GPU with its own NIC,
//! NIC `i` of every server on rail switch `i`, the rail switches joined by a spine tier; as
//! options, a switch inside each server joining its GPUs at their own rate (NVLink-like),
//! NICs whose ports spread over independent planes, and NIC ports on two ToRs (dual-ToR).
//!
//! A host is a GPU: host `h` is GPU `h % gpus` of server `h / gpus`. Its ports, in order: one
//! per (plane, ToR) of its NIC (plane 0's first ToR first: the host's primary port), then its
//! port on the server's switch. A multi-homed host sends each flow from the port whose switch
//! is closest to the destination (another GPU of its server: the server's switch; any other
//! host: its NIC), over its planes or ToRs by a hash of the flow when several are as close
//! (`net::routing`).
//!
//! Switches, numbered after the hosts: per plane, per group of `servers_per_group` servers,
//! the rail switches (`gpus` of them, or `2·gpus` with dual ToRs: rail `i`'s two ToRs are
//! `2i` and `2i+1`), then the plane's spines; then, with `nvlink_rate`, one switch per server.
//! Every rail switch of a plane links to every spine of that plane; planes share nothing but
//! the hosts.
//!
//! With `wiring = "tor"` the same switches and links are wired by server instead of by rail:
//! a group's first-tier switch `i` takes every NIC of the servers `k` of the group with
//! `⌊k · gpus / servers_per_group⌋ = i` (`servers_per_group / gpus` whole servers each) (the classic two-tier leaf-spine of servers, a "2-tier fat-tree"), to compare a
//! rail design with on the same hardware.
//!
//! Not modelled: NVLink's own protocol (the server switch is a switch like the others, with
//! `[switch]`'s buffer, ECN and PFC, and transfers through it run the scheme's transport),
//! PCIe between GPU and NIC, NCCL's PXN (a transfer to another rail crosses the spines here;
//! NCCL would first move it over NVLink to the GPU on the destination's rail).

use super::{LinkSpec, SwitchSpec, TopoSpec, link};
use crate::units::{BitRate, SimTime};
use serde::{Deserialize, Serialize};

fn d_servers() -> u32 {
    4
}
fn d_gpus() -> u32 {
    8
}
fn d_spines() -> u32 {
    8
}
fn d_one() -> u32 {
    1
}
fn d_nic() -> BitRate {
    BitRate::from_gbps(400)
}
fn d_delay() -> SimTime {
    SimTime::from_us(1)
}
fn d_nvlink_delay() -> SimTime {
    SimTime::from_ns(100)
}

/// How NICs are wired to the first tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wiring {
    /// NIC `i` of every server of a group on the group's rail switch `i`.
    #[default]
    Rail,
    /// Every NIC of a server on one of the group's first-tier switches, which take
    /// `servers_per_group / gpus` servers each.
    Tor,
}

/// `[topology] kind = "rail"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RailConfig {
    /// Servers, 1..=4096. Default 4.
    #[serde(default = "d_servers")]
    pub servers: u32,
    /// GPUs per server, each with its own NIC (and rail), 1..=64. Default 8.
    #[serde(default = "d_gpus")]
    pub gpus: u32,
    /// Servers whose NICs share a set of rail switches, 1..=servers, dividing `servers`.
    /// Default: every server (one group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers_per_group: Option<u32>,
    /// Spine switches per plane, joining every rail switch of the plane, 1..=1024. Default 8.
    #[serde(default = "d_spines")]
    pub spines: u32,
    /// NIC port rate. Default 400Gbps.
    #[serde(default = "d_nic")]
    pub nic_rate: BitRate,
    /// Rail–spine link rate. Default: `nic_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_rate: Option<BitRate>,
    /// Rate of each GPU's link to a switch inside its server (NVLink-like); none (the
    /// default): no such switch, and GPUs of a server reach each other through the rails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_rate: Option<BitRate>,
    /// Propagation delay of the GPU–server-switch links. Default 100ns.
    #[serde(default = "d_nvlink_delay")]
    pub nvlink_delay: SimTime,
    /// Independent planes, 1..=8: each NIC has a port on each (a copy of the rail switches
    /// and spines). Default 1.
    #[serde(default = "d_one")]
    pub planes: u32,
    /// Each NIC port on two ToRs of its rail (both linked to the plane's spines). Default
    /// false.
    #[serde(default)]
    pub dual_tor: bool,
    /// Propagation delay of NIC and fabric links. Default 1us.
    #[serde(default = "d_delay")]
    pub link_delay: SimTime,
    /// "rail" (default) or "tor": every NIC of a server on one first-tier switch (ToR), each
    /// taking `servers_per_group / gpus` whole servers.
    #[serde(default)]
    pub wiring: Wiring,
}

impl Default for RailConfig {
    fn default() -> Self {
        RailConfig {
            servers: d_servers(),
            gpus: d_gpus(),
            servers_per_group: None,
            spines: d_spines(),
            nic_rate: d_nic(),
            fabric_rate: None,
            nvlink_rate: None,
            nvlink_delay: d_nvlink_delay(),
            planes: 1,
            dual_tor: false,
            link_delay: d_delay(),
            wiring: Wiring::Rail,
        }
    }
}

impl RailConfig {
    fn group(&self) -> u32 {
        self.servers_per_group.unwrap_or(self.servers)
    }
    fn groups(&self) -> u32 {
        self.servers / self.group()
    }
    fn tors(&self) -> u32 {
        if self.dual_tor { 2 } else { 1 }
    }
    fn fabric(&self) -> BitRate {
        self.fabric_rate.unwrap_or(self.nic_rate)
    }
    /// First-tier switches of a group: a rail switch (or ToR) per GPU of a server, times two
    /// with dual ToRs.
    fn leaves(&self) -> u32 {
        self.gpus * self.tors()
    }
    /// Switches of one plane.
    fn per_plane(&self) -> u32 {
        self.groups() * self.leaves() + self.spines
    }

    /// Checks ranges; `(key, message)` on error.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let range = |k: &str, v: u32, lo: u32, hi: u32| {
            if v < lo || v > hi {
                Err((k.to_string(), format!("must be in {lo}..={hi}, got {v}")))
            } else {
                Ok(())
            }
        };
        range("servers", self.servers, 1, 4096)?;
        range("gpus", self.gpus, 1, 64)?;
        range("spines", self.spines, 1, 1024)?;
        range("planes", self.planes, 1, 8)?;
        if let Some(g) = self.servers_per_group {
            range("servers_per_group", g, 1, self.servers)?;
            if !self.servers.is_multiple_of(g) {
                return Err((
                    "servers_per_group".into(),
                    format!("must divide servers ({}), got {g}", self.servers),
                ));
            }
        }
        if self.servers * self.gpus < 2 {
            return Err(("servers".into(), "need at least 2 GPUs in all".into()));
        }
        let mut rates = vec![("nic_rate", self.nic_rate), ("fabric_rate", self.fabric())];
        rates.extend(self.nvlink_rate.map(|r| ("nvlink_rate", r)));
        for (k, r) in rates {
            if r < BitRate::from_mbps(1) || r > BitRate::from_gbps(100_000) {
                return Err((k.into(), format!("must be in 1Mbps..=100Tbps, got {r}")));
            }
        }
        for (k, d) in [
            ("link_delay", self.link_delay),
            ("nvlink_delay", self.nvlink_delay),
        ] {
            if d > SimTime::from_ms(1000) {
                return Err((k.into(), format!("must be at most 1s, got {d}")));
            }
        }
        Ok(())
    }

    pub fn n_hosts(&self) -> usize {
        (self.servers * self.gpus) as usize
    }

    pub fn n_switches(&self) -> usize {
        let nv = if self.nvlink_rate.is_some() {
            self.servers
        } else {
            0
        };
        (self.planes * self.per_plane() + nv) as usize
    }

    /// The most ports a switch has, the fastest link and the longest delay.
    pub fn extremes(&self) -> (usize, BitRate, SimTime) {
        // A rail switch takes a NIC of each of the group's servers; a ToR every NIC of
        // group / gpus servers: as many.
        let rail = self.group() + self.spines;
        let spine = self.groups() * self.leaves();
        let nv = if self.nvlink_rate.is_some() {
            self.gpus
        } else {
            0
        };
        let mut rate = self.nic_rate.max(self.fabric());
        let mut delay = self.link_delay;
        if let Some(r) = self.nvlink_rate {
            rate = rate.max(r);
            delay = delay.max(self.nvlink_delay);
        }
        (rail.max(spine).max(nv) as usize, rate, delay)
    }

    /// Between rails: NIC, rail switch, spine, rail switch, NIC.
    pub fn longest_path(&self) -> Vec<(BitRate, SimTime)> {
        let (n, f) = (
            (self.nic_rate, self.link_delay),
            (self.fabric(), self.link_delay),
        );
        vec![n, f, f, n]
    }

    /// The uplinks of a rail switch (GPMP's path count).
    pub fn uplinks(&self) -> u32 {
        self.spines
    }

    pub fn build(&self) -> TopoSpec {
        let (g, gpus, tors) = (self.group(), self.gpus, self.tors());
        let n_hosts = self.n_hosts();
        let per_plane = self.per_plane() as usize;
        let rails_per_group = self.leaves() as usize;
        // The first-tier switch of a group a NIC hangs off: its rail, or its server's ToR.
        let wired = |server: u32, gpu: u32| match self.wiring {
            Wiring::Rail => gpu,
            Wiring::Tor => (server % g) * gpus / g,
        };
        let rail = |plane: u32, group: u32, slot: u32, tor: u32| {
            n_hosts
                + plane as usize * per_plane
                + group as usize * rails_per_group
                + (slot * tors + tor) as usize
        };
        let spine = |plane: u32, s: u32| {
            n_hosts
                + plane as usize * per_plane
                + self.groups() as usize * rails_per_group
                + s as usize
        };
        let nv = |server: u32| n_hosts + self.planes as usize * per_plane + server as usize;
        let mut links: Vec<LinkSpec> = Vec::new();
        // Every host's ports, in order: its NIC's (plane, ToR) ports, then the server's switch.
        for h in 0..n_hosts as u32 {
            let (server, gpu) = (h / gpus, h % gpus);
            for plane in 0..self.planes {
                for tor in 0..tors {
                    let r = rail(plane, server / g, wired(server, gpu), tor);
                    links.push(link(h as usize, r, self.nic_rate, self.link_delay));
                }
            }
            if let Some(rate) = self.nvlink_rate {
                links.push(link(h as usize, nv(server), rate, self.nvlink_delay));
            }
        }
        for plane in 0..self.planes {
            for group in 0..self.groups() {
                for gpu in 0..gpus {
                    for tor in 0..tors {
                        for s in 0..self.spines {
                            links.push(link(
                                rail(plane, group, gpu, tor),
                                spine(plane, s),
                                self.fabric(),
                                self.link_delay,
                            ));
                        }
                    }
                }
            }
        }
        let prefix = |plane: u32| {
            if self.planes > 1 {
                format!("p{plane}.")
            } else {
                String::new()
            }
        };
        let mut switches = Vec::with_capacity(self.n_switches());
        let sw = |name: String, tier: u8| SwitchSpec {
            name,
            tier,
            buffer: None,
        };
        for plane in 0..self.planes {
            for group in 0..self.groups() {
                for gpu in 0..gpus {
                    for tor in 0..tors {
                        let side = match (self.dual_tor, tor) {
                            (false, _) => "",
                            (true, 0) => "a",
                            (true, _) => "b",
                        };
                        let name = match self.wiring {
                            Wiring::Rail => format!("rail{gpu}"),
                            Wiring::Tor => format!("tor{gpu}"),
                        };
                        switches.push(sw(format!("{}g{group}.{name}{side}", prefix(plane)), 1));
                    }
                }
            }
            for s in 0..self.spines {
                switches.push(sw(format!("{}spine{s}", prefix(plane)), 2));
            }
        }
        if self.nvlink_rate.is_some() {
            for server in 0..self.servers {
                switches.push(sw(format!("server{server}"), 0));
            }
        }
        TopoSpec {
            n_hosts,
            switches,
            links,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degree(t: &TopoSpec, n: usize) -> usize {
        t.links
            .iter()
            .filter(|l| l.a.idx() == n || l.b.idx() == n)
            .count()
    }

    #[test]
    fn rail_shapes() {
        // 4 servers of 8 GPUs, 2 groups, 4 spines, NVLink, 2 planes, dual ToRs.
        let c = RailConfig {
            servers: 4,
            gpus: 8,
            servers_per_group: Some(2),
            spines: 4,
            nvlink_rate: Some(BitRate::from_gbps(3600)),
            planes: 2,
            dual_tor: true,
            ..Default::default()
        };
        c.validate().unwrap();
        let t = c.build();
        assert_eq!(t.n_hosts, 32);
        // Per plane: 2 groups x 8 rails x 2 ToRs + 4 spines = 36; 2 planes; 4 server switches.
        assert_eq!(t.switches.len(), 2 * 36 + 4);
        assert_eq!(c.n_switches(), t.switches.len());
        for h in 0..32 {
            // 2 planes x 2 ToRs + the server switch.
            assert_eq!(degree(&t, h), 5, "host {h}");
        }
        // GPU 3 of server 2 (host 19): its first port on plane 0, group 1, rail 3, ToR a.
        let first = t.links.iter().find(|l| l.a.idx() == 19).unwrap();
        assert_eq!(t.switches[first.b.idx() - 32].name, "p0.g1.rail3a");
        // A rail switch: its 2 servers' NICs and 4 spines; a spine: 32 rail switches; a
        // server switch: 8 GPUs.
        let idx = |name: &str| 32 + t.switches.iter().position(|s| s.name == name).unwrap();
        assert_eq!(degree(&t, idx("p1.g0.rail7b")), 2 + 4);
        assert_eq!(degree(&t, idx("p1.spine3")), 32);
        assert_eq!(degree(&t, idx("server3")), 8);
        assert_eq!(c.extremes().0, 32);
        // The plain rail fabric: one port per GPU.
        let c = RailConfig::default();
        let t = c.build();
        assert_eq!((t.n_hosts, t.switches.len()), (32, 8 + 8));
        assert!((0..32).all(|h| degree(&t, h) == 1));
        // ToR wiring: 16 servers of 8 GPUs, each of the 8 ToRs taking 2 whole servers; the
        // same switches and port counts as the rail wiring.
        let (rail, tor) = (
            RailConfig {
                servers: 16,
                ..Default::default()
            },
            RailConfig {
                servers: 16,
                wiring: Wiring::Tor,
                ..Default::default()
            },
        );
        tor.validate().unwrap();
        let (tr, tt) = (rail.build(), tor.build());
        assert_eq!(tr.switches.len(), tt.switches.len());
        assert_eq!(tt.switches[3].name, "g0.tor3");
        for s in 0..tt.switches.len() {
            assert_eq!(degree(&tr, 128 + s), degree(&tt, 128 + s));
        }
        // Servers 6 and 7 (hosts 48..64) on ToR 3.
        for h in 48..64 {
            let l = tt.links.iter().find(|l| l.a.idx() == h).unwrap();
            assert_eq!(l.b.idx(), 128 + 3, "host {h}");
        }
        // Fewer servers than ToRs: each whole on its own, the others empty.
        let few = RailConfig {
            wiring: Wiring::Tor,
            ..Default::default()
        };
        let t = few.build();
        let tor_of = |h: usize| t.links.iter().find(|l| l.a.idx() == h).unwrap().b.idx() - 32;
        assert_eq!(
            (0..4).map(|s| tor_of(s * 8)).collect::<Vec<_>>(),
            [0, 2, 4, 6]
        );
        assert!((0..32).all(|h| tor_of(h) == tor_of(h / 8 * 8)));
    }

    #[test]
    fn bad_rail_configs_name_the_key() {
        let bad = [
            (
                RailConfig {
                    servers_per_group: Some(3),
                    ..Default::default()
                },
                "servers_per_group",
            ),
            (
                RailConfig {
                    planes: 9,
                    ..Default::default()
                },
                "planes",
            ),
            (
                RailConfig {
                    servers: 1,
                    gpus: 1,
                    ..Default::default()
                },
                "servers",
            ),
        ];
        for (c, key) in bad {
            assert_eq!(c.validate().unwrap_err().0, key);
        }
    }
}
