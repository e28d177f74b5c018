//! Per-scheme configuration: the defaults that depend on a scheme's transport, and
//! `[per_scheme.<scheme>]` overrides.
//!
//! A key the experiment does not set takes the default of the transport that runs it: an RDMA
//! scheme gets RoCEv2 framing (and HPCC's or PowerTCP's in-band telemetry on the wire), the
//! RED marking DCQCN was designed with, a shared buffer sized as HPCC's simulator sizes it,
//! and PFC; TCP-family schemes keep the TCP defaults. Each default names its source
//! ([`TransportDefault::source`]); `dcsim validate` prints the ones a run will use, and every
//! run's manifest records its resolved config. A key the experiment sets (in the file, with
//! `--set`, or as a sweep axis) is never replaced.
//!
//! `[per_scheme.<scheme>]` then sets keys for one scheme only (HPCC's header beside DCQCN's),
//! from the sections that describe end hosts and switches; the workload, topology, failures,
//! metrics and run controls stay common, so schemes still compare on identical runs.
//!
//! Not done: defaults that depend on more than the transport and the host rate (per-switch
//! buffers follow the topology file when it gives them, not these defaults).

use super::{Config, ConfigError};
use crate::net::buffer::BufferKind;
use crate::net::port::EcnConfig;
use crate::scheme::{Marking, RateCcKind, Scheme, TransportKind};
use crate::units::Bytes;
use std::collections::BTreeSet;

/// The dotted keys of the values an experiment sets itself (`switch.ecn.kmin`, `seed`; tables
/// are walked, arrays are values). It takes no part in comparisons or serialization: two
/// configs with the same values are equal however they were written.
#[derive(Clone, Debug, Default)]
pub struct ExplicitKeys(pub BTreeSet<String>);

impl PartialEq for ExplicitKeys {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl ExplicitKeys {
    /// The keys of a parsed TOML table.
    pub fn of(table: &toml::Table) -> ExplicitKeys {
        fn walk(t: &toml::Table, prefix: &str, out: &mut BTreeSet<String>) {
            for (k, v) in t {
                let path = dotted(prefix, k);
                match v {
                    toml::Value::Table(sub) if !sub.is_empty() => walk(sub, &path, out),
                    _ => {
                        out.insert(path);
                    }
                }
            }
        }
        let mut out = BTreeSet::new();
        walk(table, "", &mut out);
        ExplicitKeys(out)
    }

    /// Adds `key` as set (a sweep axis, an override).
    pub fn insert(&mut self, key: &str) {
        self.0.insert(key.to_string());
    }

    /// Whether the experiment set `key`: itself, a value above it (`switch.ecn` covers
    /// `switch.ecn.kmin`) or a value inside it (`switch.ecn.kmin` covers `switch.ecn`).
    pub fn covers(&self, key: &str) -> bool {
        self.0.iter().any(|k| {
            k == key
                || key
                    .strip_prefix(k.as_str())
                    .is_some_and(|r| r.starts_with('.'))
                || k.strip_prefix(key).is_some_and(|r| r.starts_with('.'))
        })
    }
}

/// A default that depends on the transport of the scheme that runs.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportDefault {
    /// Dotted key, as in the config file.
    pub key: &'static str,
    /// The value, as TOML text would write it.
    pub value: String,
    /// Where it comes from.
    pub source: &'static str,
}

/// The top-level sections `[per_scheme.<scheme>]` may set.
pub const PER_SCHEME_SECTIONS: &[&str] = &[
    "packet",
    "switch",
    "tcp",
    "dctcp",
    "d2tcp",
    "pdtcp",
    "cubic",
    "pfabric",
    "am",
    "flowlet",
    "quirks",
    "nic",
    "hpcc",
    "timely",
    "dctcp_rdma",
    "powertcp",
    "irn",
    "swift",
    "udp",
    "priorities",
    "rdma",
    "gpmp",
    "srm",
    "mprdma",
];

/// RoCEv2 framing: Ethernet 14 + IPv4 20 + UDP 8 + InfiniBand BTH 12 + ICRC 4 + FCS 4, plus
/// preamble and inter-frame gap 20.
pub const ROCE_HEADER: u64 = 82;
/// In-band telemetry as the HPCC ns-3 simulator carries it: 8 bytes for each of up to 5 hops
/// and a 2-byte hop count.
pub const INT_BYTES: u64 = 42;
/// RoCEv2's payload on a 1500 B Ethernet MTU: the largest InfiniBand MTU that fits.
pub const ROCE_MSS: u64 = 1024;

impl Config {
    /// The defaults `scheme`'s transport gives keys the experiment does not set, in the order
    /// they apply. Empty for the TCP family, UDP and pFabric, whose defaults are the plain ones.
    pub fn transport_defaults(&self, scheme: &Scheme) -> Vec<TransportDefault> {
        if scheme.transport != TransportKind::Rdma {
            return Vec::new();
        }
        let rate = self.topology.host_rate();
        let scaled =
            |bytes_per_gbps: f64| Bytes((bytes_per_gbps * rate.0 as f64 / 1e9).round() as u64);
        let int = scheme.rate_cc.is_some_and(RateCcKind::telemetry);
        let mut v = vec![
            TransportDefault {
                key: "packet.mss",
                value: format!("\"{}\"", Bytes(ROCE_MSS)),
                source: "RoCEv2 on a 1500 B Ethernet MTU: the largest InfiniBand MTU that fits",
            },
            TransportDefault {
                key: "packet.header",
                value: format!(
                    "\"{}\"",
                    Bytes(ROCE_HEADER + if int { INT_BYTES } else { 0 })
                ),
                source: if int {
                    "RoCEv2 framing (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble and gap 20) plus in-band telemetry, 42 B as the HPCC ns-3 simulator carries it (5 hops of 8 B and a hop count)"
                } else {
                    "RoCEv2 framing: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble and gap 20"
                },
            },
        ];
        let ecn = if scheme.rate_cc.map(RateCcKind::marking) == Some(Marking::Step) {
            let k = scaled(3_000.0);
            (
                format!("{{ kind = \"step\", k = \"{k}\", at = \"dequeue\" }}"),
                "the HPCC ns-3 simulator's DCTCP marking (one threshold, 300 KB at 100 Gbps), scaled with the host rate",
            )
        } else {
            let (kmin, kmax) = (scaled(4_000.0), scaled(16_000.0));
            (
                format!(
                    "{{ kind = \"red\", kmin = \"{kmin}\", kmax = \"{kmax}\", pmax = 0.2, at = \"dequeue\" }}"
                ),
                "the HPCC ns-3 simulator's DCQCN marking (run.py: K_min 100 KB and K_max 400 KB per 25 Gbps of host rate, P_max 0.2, at dequeue)",
            )
        };
        v.push(TransportDefault {
            key: "switch.ecn",
            value: ecn.0,
            source: ecn.1,
        });
        v.push(TransportDefault {
            key: "switch.buffer.kind",
            value: "\"shared\"".into(),
            source: "shared-buffer switches with dynamic thresholds, as RoCE fabrics run (HPCC ns-3 simulator)",
        });
        v.push(TransportDefault {
            key: "switch.buffer.size",
            value: format!("\"{}\"", scaled(320_000.0)),
            source: "the HPCC ns-3 simulator's buffer scaling (run.py: 16 MB per 50 Gbps of host rate; 32 MB at 100 Gbps)",
        });
        v.push(TransportDefault {
            key: "switch.pfc.enabled",
            value: "true".into(),
            source: "RoCEv2's go-back-N assumes a lossless fabric (PFC); IRN schemes turn it off",
        });
        v
    }

    /// The config `scheme` runs with: the transport defaults of keys the experiment does not
    /// set, then `[per_scheme.<name>]`. The result has no `per_scheme` and counts every key it
    /// was given as set. `file` names the config in errors.
    pub fn for_scheme(
        &self,
        name: &str,
        scheme: &Scheme,
        file: &str,
    ) -> Result<Config, ConfigError> {
        let defaults: Vec<TransportDefault> = self
            .transport_defaults(scheme)
            .into_iter()
            .filter(|d| !self.explicit.covers(d.key))
            .collect();
        let overrides = self.per_scheme.get(name);
        if defaults.is_empty() && overrides.is_none() {
            let mut c = self.clone();
            c.per_scheme.clear();
            return Ok(c);
        }
        let err = |key: String, msg: String| ConfigError {
            file: file.to_string(),
            key,
            msg,
        };
        let mut c = self.clone();
        c.per_scheme.clear();
        for d in &defaults {
            apply_default(&mut c, d).map_err(|m| err(d.key.to_string(), m))?;
        }
        if let Some(t) = overrides {
            let mut table =
                toml::Table::try_from(&c).map_err(|e| err(String::new(), e.to_string()))?;
            let keys = ExplicitKeys::of(t);
            for (k, v) in leaves(t, "") {
                crate::sweep::set_key(&mut table, &k, v)
                    .map_err(|m| err(format!("per_scheme.{name}.{k}"), m))?;
            }
            let text = toml::to_string(&table).map_err(|e| err(String::new(), e.to_string()))?;
            let explicit = c.explicit.clone();
            c = Config::parse(&text, file).map_err(|e| {
                let msg = match e.msg.strip_prefix("line ") {
                    Some(r) => r.split_once(": ").map_or(r, |(_, m)| m).to_string(),
                    None => e.msg,
                };
                err(format!("per_scheme.{name}"), msg)
            })?;
            c.explicit = explicit;
            // Not settable per scheme, and they hold what validation loaded (the topology
            // file, the flow file's host ids), which the text does not carry.
            c.topology = self.topology.clone();
            c.workload = self.workload.clone();
            for k in keys.0 {
                c.explicit.insert(&k);
            }
        }
        for d in &defaults {
            c.explicit.insert(d.key);
        }
        Ok(c)
    }

    /// `[per_scheme]`: each key a listed scheme, each section one that describes end hosts or
    /// switches, no key also a sweep axis.
    pub(super) fn check_per_scheme(&self, file: &str) -> Result<(), ConfigError> {
        let err = |key: String, msg: String| ConfigError {
            file: file.to_string(),
            key,
            msg,
        };
        for (name, t) in &self.per_scheme {
            if !self.schemes.contains(name) {
                return Err(err(
                    format!("per_scheme.{name}"),
                    format!(
                        "`{name}` is not in `schemes` ({}); a per-scheme table names one of them",
                        self.schemes.join(", ")
                    ),
                ));
            }
            for (k, v) in t {
                if !PER_SCHEME_SECTIONS.contains(&k.as_str()) {
                    return Err(err(
                        format!("per_scheme.{name}.{k}"),
                        format!(
                            "a per-scheme table sets end-host and switch sections only ({}); the workload, topology, failures, metrics and run controls stay common to every scheme",
                            PER_SCHEME_SECTIONS.join(", ")
                        ),
                    ));
                }
                if !v.is_table() {
                    return Err(err(
                        format!("per_scheme.{name}.{k}"),
                        format!("must be a table of `{k}` keys"),
                    ));
                }
            }
            for (k, _) in leaves(t, "") {
                if let Some(a) = self.sweep.axes.iter().find(|a| {
                    a.key == k
                        || a.key.starts_with(&format!("{k}."))
                        || k.starts_with(&format!("{}.", a.key))
                }) {
                    return Err(err(
                        format!("per_scheme.{name}.{k}"),
                        format!("`{}` is also a sweep axis: set it one way", a.key),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Key `k` under the dotted path `prefix` ("" at the top).
fn dotted(prefix: &str, k: &str) -> String {
    if prefix.is_empty() {
        k.to_string()
    } else {
        format!("{prefix}.{k}")
    }
}

/// The leaf keys of a table, dotted, with their values (inline tables such as `ecn = {...}`
/// stay whole: they are one value).
fn leaves(t: &toml::Table, prefix: &str) -> Vec<(String, toml::Value)> {
    let mut out = Vec::new();
    for (k, v) in t {
        let path = dotted(prefix, k);
        match v {
            toml::Value::Table(sub) if !sub.contains_key("kind") => {
                out.extend(leaves(sub, &path));
            }
            _ => out.push((path, v.clone())),
        }
    }
    out
}

/// Sets one transport default on `c`.
fn apply_default(c: &mut Config, d: &TransportDefault) -> Result<(), String> {
    let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", d.value))
        .map_err(|e| e.to_string())?
        .remove("v")
        .expect("v");
    let bytes = |v: &toml::Value| -> Result<Bytes, String> {
        v.as_str()
            .ok_or("not a string")?
            .parse::<Bytes>()
            .map_err(|e| e.to_string())
    };
    match d.key {
        "packet.mss" => c.packet.mss = bytes(&value)?,
        "packet.header" => c.packet.header = bytes(&value)?,
        "switch.ecn" => {
            c.switch.ecn = value.try_into::<EcnConfig>().map_err(|e| e.to_string())?;
        }
        "switch.buffer.kind" => {
            c.switch.buffer.kind = value.try_into::<BufferKind>().map_err(|e| e.to_string())?;
        }
        "switch.buffer.size" => c.switch.buffer.size = bytes(&value)?,
        "switch.pfc.enabled" => c.switch.pfc.enabled = value.as_bool().ok_or("not a bool")?,
        k => unreachable!("no transport default for {k}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::port::MarkAt;

    fn cfg(text: &str) -> Config {
        let c = Config::parse(text, "t.toml").unwrap();
        c.validate("t.toml", std::path::Path::new(".")).unwrap();
        c
    }

    fn scheme(name: &str) -> Scheme {
        Scheme::builtin(name).unwrap()
    }

    #[test]
    fn rdma_schemes_get_roce_defaults_and_tcp_keeps_its_own() {
        let c = cfg(
            "schemes = [\"DCTCP\", \"DCQCN\", \"HPCC\"]\n[topology]\nhost_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\n",
        );
        let tcp = c.for_scheme("DCTCP", &scheme("DCTCP"), "t.toml").unwrap();
        assert_eq!(tcp, c, "TCP's config changed");
        assert_eq!(tcp.packet.header, Bytes(78));
        let d = c.for_scheme("DCQCN", &scheme("DCQCN"), "t.toml").unwrap();
        assert_eq!((d.packet.mss, d.packet.header), (Bytes(1024), Bytes(82)));
        assert_eq!(
            d.switch.ecn,
            EcnConfig::Red {
                kmin: Bytes(400_000),
                kmax: Bytes(1_600_000),
                pmax: 0.2,
                at: MarkAt::Dequeue
            }
        );
        assert_eq!(d.switch.buffer.kind, BufferKind::Shared);
        assert_eq!(d.switch.buffer.size, Bytes(32_000_000));
        assert!(d.switch.pfc.enabled);
        let h = c.for_scheme("HPCC", &scheme("HPCC"), "t.toml").unwrap();
        assert_eq!(
            h.packet.header,
            Bytes(124),
            "HPCC's telemetry is not on the wire"
        );
    }

    #[test]
    fn keys_the_experiment_sets_are_kept_and_overrides_apply_to_one_scheme() {
        let c = cfg(
            "schemes = [\"DCQCN\", \"HPCC\"]\n[packet]\nheader = \"90B\"\n[switch]\necn = { kind = \"step\", k = \"30KB\" }\n[switch.buffer]\nalpha = 0.25\n[per_scheme.HPCC.packet]\nheader = \"132B\"\n[per_scheme.HPCC.hpcc]\neta = 0.9\n",
        );
        let d = c.for_scheme("DCQCN", &scheme("DCQCN"), "t.toml").unwrap();
        assert_eq!(d.packet.header, Bytes(90));
        assert!(matches!(d.switch.ecn, EcnConfig::Step { .. }));
        assert_eq!(
            d.switch.buffer.kind,
            BufferKind::Shared,
            "an unset key kept TCP's"
        );
        assert_eq!(d.switch.buffer.alpha, 0.25);
        assert_eq!(d.hpcc.eta, 0.95);
        let h = c.for_scheme("HPCC", &scheme("HPCC"), "t.toml").unwrap();
        assert_eq!((h.packet.header, h.hpcc.eta), (Bytes(132), 0.9));
        assert!(h.per_scheme.is_empty());
        assert_eq!(h.packet.mss, Bytes(1024));
    }

    #[test]
    fn bad_per_scheme_tables_are_refused_naming_the_key() {
        for (text, key) in [
            (
                "schemes = [\"DCQCN\"]\n[per_scheme.HPCC.packet]\nheader = \"100B\"\n",
                "per_scheme.HPCC",
            ),
            (
                "schemes = [\"DCQCN\"]\n[per_scheme.DCQCN.workload]\nflows = 3\n",
                "per_scheme.DCQCN.workload",
            ),
            (
                "schemes = [\"DCQCN\"]\n[per_scheme.DCQCN.packet]\nheader = \"2B\"\n",
                "packet.header",
            ),
            (
                "schemes = [\"DCQCN\"]\n[per_scheme.DCQCN.packet]\nheadr = \"90B\"\n",
                "per_scheme.DCQCN",
            ),
            (
                "schemes = [\"DCQCN\"]\n[per_scheme.DCQCN.packet]\nheader = \"90B\"\n[sweep]\naxes = [{ key = \"packet.header\", values = [\"90B\", \"100B\"] }]\n",
                "per_scheme.DCQCN.packet.header",
            ),
        ] {
            let e = Config::parse(text, "t.toml")
                .and_then(|c| c.validate("t.toml", std::path::Path::new(".")))
                .expect_err(text);
            assert_eq!(e.key, key, "{text}: {e}");
        }
    }

    #[test]
    fn explicit_keys_cover_their_children() {
        let t: toml::Table =
            toml::from_str("[switch]\nqueues = 3\necn = { kind = \"red\", kmin = \"1KB\" }\n")
                .unwrap();
        let mut k = ExplicitKeys::of(&t);
        assert!(k.covers("switch.ecn") && k.covers("switch.ecn.kmin") && k.covers("switch"));
        assert!(!k.covers("switch.buffer.size") && !k.covers("switch.pfc"));
        assert!(
            !k.covers("switch.ecnx"),
            "a key that only starts like a set one"
        );
        k.insert("switch.buffer");
        assert!(k.covers("switch.buffer.size"));
    }
}
