//! The end of a partitioned run: its replicas merged into one run, as the unpartitioned
//! kernel would hold it.

use super::*;

/// Merges the replicas into the first (see the module): ports and switches from their
/// owners, wires from the node at their far end, flows' halves from their hosts' partitions,
/// counters summed.
pub(super) fn merge(parts: Vec<Sim>, map: &PartitionMap) -> Sim {
    let mut parts = parts;
    let owner = &map.owner;
    // Each port's wire from the partition of its far end, the rest from its node's.
    let n_ports = parts[0].net.ports.len();
    let mut wires = Vec::with_capacity(n_ports);
    for p in 0..n_ports {
        let k = owner[parts[0].net.ports[p].peer_node.idx()] as usize;
        // Losses on the wire (a failed link, random loss) are counted against the port
        // where the wire ends, by the partition that owns it: drops are summed.
        let drops: u64 = parts.iter().map(|s| s.net.ports[p].stats.drops).sum();
        let drop_bytes: u64 = parts.iter().map(|s| s.net.ports[p].stats.drop_bytes).sum();
        let port = &mut parts[k].net.ports[p];
        wires.push((
            std::mem::take(&mut port.wire),
            port.wire_bytes,
            drops,
            drop_bytes,
        ));
    }
    let (first, rest) = parts.split_at_mut(1);
    let base = &mut first[0];
    for (p, (wire, bytes, drops, drop_bytes)) in wires.into_iter().enumerate() {
        let k = owner[base.net.ports[p].node.idx()] as usize;
        if k > 0 {
            std::mem::swap(&mut base.net.ports[p], &mut rest[k - 1].net.ports[p]);
        }
        let port = &mut base.net.ports[p];
        port.wire = wire;
        port.wire_bytes = bytes;
        port.stats.drops = drops;
        port.stats.drop_bytes = drop_bytes;
    }
    for s in 0..base.net.switches.len() {
        let k = owner[base.net.n_hosts + s] as usize;
        if k > 0 {
            std::mem::swap(&mut base.net.switches[s], &mut rest[k - 1].net.switches[s]);
        }
    }
    // Flows (RDMA: connections, numbered by sending host, which other replicas may lack).
    let n_flows = std::iter::once(&*base)
        .chain(rest.iter())
        .map(|s| s.flows.len())
        .max()
        .unwrap_or(0);
    let n = base.flows.len();
    base.flows
        .extend((n..n_flows).map(|i| Flow::placeholder(FlowId(i as u32))));
    for f in 0..n_flows {
        let Some((src, dst)) = std::iter::once(&*base)
            .chain(rest.iter())
            .filter_map(|s| s.flows.get(f))
            .find(|x| !x.is_placeholder())
            .map(|x| {
                (
                    owner[x.src as usize] as usize,
                    owner[x.dst as usize] as usize,
                )
            })
        else {
            continue;
        };
        let drops: u64 = std::iter::once(&*base)
            .chain(rest.iter())
            .filter_map(|s| s.flows.get(f))
            .map(|x| x.stats.drops)
            .sum();
        let id = FlowId(f as u32);
        let rcv = match dst {
            0 => base.flows[f].clone(),
            k => rest[k - 1]
                .flows
                .get(f)
                .cloned()
                .unwrap_or(Flow::placeholder(id)),
        };
        if src > 0 {
            base.flows[f] = rest[src - 1].flows[f].clone();
            base.transport.adopt(&mut rest[src - 1].transport, id, true);
        }
        if dst > 0 {
            base.transport
                .adopt(&mut rest[dst - 1].transport, id, false);
        }
        let fl = &mut base.flows[f];
        fl.rcv_finish = rcv.rcv_finish;
        fl.finish = fl.finish.or(rcv.finish);
        fl.stats.ce_rcvd = rcv.stats.ce_rcvd;
        fl.stats.drops = drops;
    }
    // RDMA messages: the sender's half from its source's partition, the receiver's from its
    // destination's; what every partition counted, summed.
    let ends: Vec<(usize, usize)> = base.transport.messages().map_or(Vec::new(), |m| {
        m.iter()
            .map(|m| {
                (
                    owner[m.src as usize] as usize,
                    owner[m.dst as usize] as usize,
                )
            })
            .collect()
    });
    for (m, &(src, dst)) in ends.iter().enumerate() {
        if src > 0 {
            base.transport
                .adopt_message(&mut rest[src - 1].transport, m, true);
        }
        if dst > 0 {
            base.transport
                .adopt_message(&mut rest[dst - 1].transport, m, false);
        }
    }
    for o in rest.iter() {
        base.transport.add_counts(&o.transport);
    }
    for o in rest.iter() {
        base.cons.sent_pkts += o.cons.sent_pkts;
        base.cons.sent_bytes += o.cons.sent_bytes;
        base.cons.delivered_pkts += o.cons.delivered_pkts;
        base.cons.delivered_bytes += o.cons.delivered_bytes;
        base.cons.dropped_pkts += o.cons.dropped_pkts;
        base.cons.dropped_bytes += o.cons.dropped_bytes;
        base.packet_hops += o.packet_hops;
        base.failure_losses += o.failure_losses;
        base.finished += o.finished;
        base.tag_finished += o.tag_finished;
        base.started += o.started;
        base.deps.calcs_done += o.deps.calcs_done;
        // The run's own events were handled by every partition: counted once.
        base.events_elsewhere += o.events() - o.run_events;
    }
    // Compute steps: each from the partition of its host.
    for c in 0..base.deps.calcs.len() {
        let k = owner[base.deps.calcs[c].host as usize] as usize;
        if k > 0 {
            base.deps.calcs[c] = rest[k - 1].deps.calcs[c].clone();
        }
    }
    // Packet traces: every partition's captures, in the run's order.
    if base.pcap.is_some() {
        let mut caps = Vec::new();
        for s in std::iter::once(&mut *base).chain(rest.iter_mut()) {
            if let Some(w) = &mut s.pcap {
                caps.extend(w.take_deferred());
            }
        }
        base.pcap.as_mut().expect("pcap").write_merged(caps);
    }
    // Delay attribution: each unit's result from the partition that finished it (its
    // sender's), with the losses every partition saw before the finish.
    if base.attrib.is_some() {
        let srcs: Vec<u32> = match base.transport.messages() {
            Some(m) => m.iter().map(|m| m.src).collect(),
            None => base.flows.iter().map(|f| f.src).collect(),
        };
        let merged: Vec<Option<attrib::Attribution>> = {
            let all: Vec<&Sim> = std::iter::once(&*base).chain(rest.iter()).collect();
            let logs: Vec<&[_]> = all
                .iter()
                .map(|s| s.attrib.as_ref().map_or(&[][..], |a| a.losses()))
                .collect();
            srcs.iter()
                .enumerate()
                .map(|(u, &src)| {
                    let k = owner[src as usize] as usize;
                    all[k]
                        .attrib
                        .as_ref()
                        .and_then(|a| a.merged_result(u, &logs))
                })
                .collect()
        };
        if let Some(a) = &mut base.attrib {
            a.results = merged;
        }
    }
    if let Some(t) = &mut base.telemetry {
        t.live += rest
            .iter()
            .map(|o| o.telemetry.as_ref().map_or(0, |t| t.live))
            .sum::<usize>();
    }
    base.part = None;
    parts.swap_remove(0)
}
