//! Building a run's [`Sim`] from a config, a scheme and a seed: the topology, the lowered
//! transport and switch parameters, the workload (as a list or a stream), failures, pins and
//! what is observed.

use super::*;

/// Builds the simulation of one run, ready to run.
pub fn build_sim(cfg: &Config, base: &Path, plan: &RunPlan) -> Result<Sim, String> {
    build_sim_with(cfg, base, plan, true)
}

/// Whether runs of `cfg` may release flow state as flows finish (`sim::Retire`): nothing reads
/// flows by slot and the ideal FCTs do not need the end's routes. The transport (TCP family or
/// UDP) and the workload (no dependencies) are checked when the simulation is built.
pub fn retires(cfg: &Config) -> bool {
    cfg.failures.is_empty()
        && cfg.routing.pin.is_none()
        && cfg.pcap.is_none()
        && cfg.timeseries.is_none()
        && cfg.probe.is_none()
        && cfg.end_when.is_none()
        && cfg.nic.order != crate::config::NicOrder::Index
        && !cfg.workload.has_collectives()
}

/// [`build_sim`], choosing whether flows are released as they finish (`retire`; honoured
/// only where [`build_sim`] would: the outputs are the same either way).
pub fn build_sim_with(
    cfg: &Config,
    base: &Path,
    plan: &RunPlan,
    retire: bool,
) -> Result<Sim, String> {
    let n_hosts = cfg.topology.n_hosts();
    let retire = retire && retires(cfg);
    // A run that releases its flows pulls a generated workload as its flows start.
    let stream = match retire {
        true => cfg.workload.stream(
            n_hosts,
            cfg.topology.host_rate(),
            plan.seed,
            base,
            cfg.stop_time,
        )?,
        false => None,
    };
    // The file streamed is the one the run's identity (and manifest) names.
    if let (Some((_, check)), Some(file)) = (&stream, cfg.workload.input_files().first())
        && let (Some(read), Some(planned)) = (
            &check.file,
            crate::provenance::input_hash(&plan.identity, file),
        )
        && read.hex() != planned
    {
        return Err(format!(
            "{}: the file changed after the run was planned (hash {planned} then, {} now); its results would not be this file's",
            file.display(),
            read.hex()
        ));
    }
    let crate::workload::Graphed {
        flows: specs,
        dag,
        collectives,
        training,
    } = match stream {
        Some(_) => Default::default(),
        None => cfg
            .workload
            .generate_graph(n_hosts, cfg.topology.host_rate(), plan.seed, base)?,
    };
    // Flows that would arrive after the stop time never happen: they are not generated.
    let specs = match cfg.stop_time {
        Some(stop) => specs
            .into_iter()
            .filter(|f| f.after.is_some() || f.start < stop)
            .collect(),
        None => specs,
    };
    let endpoints: Option<std::collections::HashMap<u32, (u32, u32)>> = cfg
        .routing
        .pin
        .as_ref()
        .map(|_| specs.iter().map(|f| (f.id, (f.src, f.dst))).collect());
    let topo = cfg.topology.build();
    let transport = crate::lower::transport(cfg, &plan.scheme);
    let switch = cfg.switch_for(&plan.scheme);
    let build = BuildOpts {
        switch: &switch,
        lb: crate::lower::load_balancer(cfg, &plan.scheme),
        seed: plan.seed,
        max_packet: cfg.packet.mss.0 + cfg.packet.header.0,
        ns_floor: cfg.quirks.ns_floor,
    };
    let mut sim = Sim::new(SimSetup {
        topo: &topo,
        build,
        transport,
        flows: specs,
        dag,
        retire,
        stream,
        data_prio: cfg.priorities.data,
        ack_prio: cfg.priorities.ack,
        stop_time: cfg.stop_time,
        seed: plan.seed,
        end_when: cfg.end_when,
        grid: cfg.run.grid,
    })?;
    sim.collectives = collectives;
    sim.training = training;
    if cfg.quirks.int_units {
        sim.quantize_telemetry();
    }
    if cfg.nic.order == crate::config::NicOrder::Index {
        let nq = sim.net.nq as usize;
        sim.nic_rr_last = Some(vec![vec![u32::MAX; nq]; sim.net.n_slots()]);
    }
    if cfg.nic.qdisc == crate::config::Qdisc::Fifo {
        sim.use_host_fifo(match cfg.nic.tsq {
            crate::config::WindowSpec::Bytes(b) => b.0,
            _ => u64::MAX,
        });
    }
    if !cfg.failures.is_empty() {
        let spec = cfg.topology.build();
        let map = cfg.topology.node_map();
        for f in &cfg.failures {
            let links = f.links(&spec, &map)?;
            // Link i of the topology is ports 2i and 2i + 1 (Network::build).
            let ports = links
                .iter()
                .flat_map(|&i| {
                    [
                        crate::ids::PortId(2 * i as u32),
                        crate::ids::PortId(2 * i as u32 + 1),
                    ]
                })
                .collect();
            sim.add_failure(
                f.at,
                ports,
                crate::lower::fail_kind(f),
                cfg.routing.convergence,
            );
        }
    }
    if let (Some(pin), Some(endpoints)) = (&cfg.routing.pin, endpoints) {
        let pins = crate::net::pin::Pins::load(
            &base.join(pin),
            &sim.net,
            &endpoints,
            &cfg.topology.node_map(),
        )
        .map_err(|m| format!("routing.pin: {m}"))?;
        sim.set_pins(pins);
    }
    if cfg.metrics.attribution {
        let units = match sim.transport.messages() {
            Some(m) => m.len(),
            None => sim.flows.len(),
        };
        let mut a = crate::sim::attrib::Attrib::new(
            sim.net.n_slots(),
            sim.net.ports.len(),
            sim.net.nq as usize,
            units,
        );
        a.track_waits = sim.transport.messages().is_none();
        sim.attrib = Some(Box::new(a));
    }
    if let Some(tc) = &cfg.timeseries {
        let nodes: Vec<usize> = match &tc.nodes {
            Some(v) => v.iter().map(|&n| n as usize).collect(),
            None => (topo.n_hosts..topo.n_hosts + topo.switches.len()).collect(),
        };
        let ports: Vec<usize> = (0..sim.net.ports.len())
            .filter(|&p| nodes.contains(&sim.net.ports[p].node.idx()))
            .collect();
        let mut tc = tc.clone();
        if sim.transport.messages().is_none() {
            // TCP-family flows are named by their workload id; sample them by index.
            let mut idx = Vec::with_capacity(tc.flows.len());
            for id in &tc.flows {
                let Some(i) = sim.flows.iter().position(|f| f.ext_id == *id) else {
                    return Err(format!(
                        "`timeseries.flows`: flow {id} is not in the workload"
                    ));
                };
                idx.push(i as u32);
            }
            tc.flows = idx;
        }
        let sp = crate::sim::timeseries::Sampler::new(&tc, ports, sim.net.nq as usize);
        sim.sample_at = sp.next;
        sim.sampler = Some(Box::new(sp));
    }
    if let Some(pc) = &cfg.pcap {
        let proto = crate::lower::pcap_proto(&plan.scheme);
        sim.pcap = Some(Box::new(crate::pcap::PcapWriter::new(
            pc,
            proto,
            topo.n_hosts + topo.switches.len(),
        )));
    }
    sim.observe();
    Ok(sim)
}
