use super::*;

/// Flow file workload `w` (8 hosts, under `base`) streamed with stop time `stop` gives the
/// flows its list gives before `stop`, read through `rest()` as well; returns them and the
/// stream's check.
fn streams_as_listed(
    w: &WorkloadConfig,
    base: &Path,
    stop: Option<SimTime>,
) -> (Vec<FlowSpec>, StreamCheck) {
    let rate = BitRate::from_gbps(10);
    let mut listed = w.generate(8, rate, 1, base).unwrap();
    listed.retain(|f| stop.is_none_or(|s| f.start < s));
    let (mut st, c) = w.stream(8, rate, 1, base, stop).unwrap().unwrap();
    assert_eq!(c.flows, listed.len());
    let head: Vec<FlowSpec> = st.by_ref().take(40).collect();
    let rest = st.rest();
    let tail: Vec<FlowSpec> = st.by_ref().collect();
    assert_eq!(rest, tail, "rest() reads what is still to come");
    assert_eq!([head, tail].concat(), listed);
    assert!(st.error().is_none());
    (listed, c)
}

/// A stream of flow file `name` (workload `w`, text `text`) whose second half is replaced by
/// `garbage` while it is read ends with an error.
fn a_change_under_the_run_is_an_error(
    w: &WorkloadConfig,
    base: &Path,
    name: &str,
    text: &str,
    garbage: &str,
) {
    let (mut st, _) = w
        .stream(8, BitRate::from_gbps(10), 1, base, None)
        .unwrap()
        .unwrap();
    st.next().unwrap();
    let mut broken = text.to_string();
    broken.replace_range(text.len() / 2.., garbage);
    std::fs::write(base.join(name), broken).unwrap();
    let _ = st.by_ref().count();
    assert!(
        st.error().is_some_and(|e| e.contains("changed")),
        "{:?}",
        st.error()
    );
}

#[test]
fn a_sorted_flow_file_streams_as_its_list_and_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap();
        WorkloadConfig::Csv { file: name.into() }
    };
    let mut text = String::from("\u{feff}flow_id,src,dst,size_bytes,start_ns,prio,deadline_ns\n");
    for i in 0..3000u32 {
        // Ties in start time ordered by id; blank lines skipped.
        let line = format!(
            "{},{},{},{},{},{},{}\n",
            i * 2,
            i % 7,
            (i % 7) + 1,
            1000 + i,
            i / 3 * 100,
            i % 3,
            5000
        );
        text.push_str(&line);
        if i % 50 == 0 {
            text.push('\n');
        }
    }
    let sorted = w("sorted.csv", &text);
    let rate = BitRate::from_gbps(10);
    let base = dir.path();
    for stop in [None, Some(SimTime::from_ns(4_000))] {
        let (listed, c) = streams_as_listed(&sorted, base, stop);
        // The first flow of priority at least 2, for a run with 2 queues.
        let first2 = listed.iter().find(|f| f.prio >= Some(2)).unwrap();
        assert_eq!(c.prio_at_least[2], Some((first2.id, 2)));
    }
    // Out of order, with a dependency, with an error: a list (which reports the error).
    let h = "flow_id,src,dst,size_bytes,start_ns\n";
    let unsorted = w("unsorted.csv", &format!("{h}0,0,1,100,50\n1,1,2,100,10\n"));
    assert!(unsorted.stream(8, rate, 1, base, None).unwrap().is_none());
    let dup = w("dup.csv", &format!("{h}3,0,1,100,10\n3,1,2,100,50\n"));
    assert!(dup.stream(8, rate, 1, base, None).unwrap().is_none());
    let dep = w(
        "dep.csv",
        "flow_id,src,dst,size_bytes,start_ns,after\n0,0,1,100,10,\n1,1,2,100,50,0\n",
    );
    assert!(dep.stream(8, rate, 1, base, None).unwrap().is_none());
    let bad = w("bad.csv", &format!("{h}0,0,1,100,10\n1,1,9,100,50\n"));
    assert!(bad.stream(8, rate, 1, base, None).unwrap().is_none());
    assert!(
        bad.generate(8, rate, 1, base)
            .unwrap_err()
            .contains("line 3")
    );
    // A file that changes under a run ends its stream with an error, not silently.
    a_change_under_the_run_is_an_error(&sorted, base, "sorted.csv", &text, "x,y\n");
}

#[test]
fn a_sorted_hpcc_flow_file_streams_as_its_list_and_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap();
        WorkloadConfig::Hpcc {
            file: name.into(),
            start_offset: SimTime::from_secs_f64(2.0),
            hosts: FileHostIds::default(),
        }
    };
    let mut text = String::from("3000\n");
    for i in 0..3000u32 {
        // Ties in start time (ids are the line order); blank lines skipped.
        let t = format!("2.{:09}", i / 3 * 100);
        text += &format!("{} {} 3 100 {} {t}\n", i % 7, (i % 7) + 1, 1000 + i);
        if i % 50 == 0 {
            text.push('\n');
        }
    }
    let sorted = w("sorted.txt", &text);
    let (rate, base) = (BitRate::from_gbps(10), dir.path());
    assert!(sorted.file_streams(base, 8, BitRate::from_gbps(10)));
    for stop in [None, Some(SimTime::from_ns(4_000))] {
        streams_as_listed(&sorted, base, stop);
    }
    // Out of order, a wrong count, a bad line: a list (which reports the error).
    let unsorted = w("unsorted.txt", "2\n0 1 3 100 100 2.5\n1 2 3 100 100 2.1\n");
    assert!(unsorted.stream(8, rate, 1, base, None).unwrap().is_none());
    assert!(!unsorted.file_streams(base, 8, BitRate::from_gbps(10)));
    assert_eq!(unsorted.generate(8, rate, 1, base).unwrap().len(), 2);
    let short = w("short.txt", "3\n0 1 3 100 100 2.1\n1 2 3 100 100 2.5\n");
    assert!(short.stream(8, rate, 1, base, None).unwrap().is_none());
    let e = short.generate(8, rate, 1, base).unwrap_err();
    assert!(e.contains("2 flow lines, the first line says 3"), "{e}");
    let long = w("long.txt", "1\n0 1 3 100 100 2.1\n1 2 3 100 100 2.5\n");
    let e = long.generate(8, rate, 1, base).unwrap_err();
    assert!(e.contains("more than 1 flow lines"), "{e}");
    let bad = w("bad.txt", "2\n0 1 3 100 100 2.1\n1 9 3 100 100 2.5\n");
    assert!(bad.stream(8, rate, 1, base, None).unwrap().is_none());
    let e = bad.generate(8, rate, 1, base).unwrap_err();
    assert!(
        e.contains("line 3") && e.contains("node 9 is not a host: hosts are 0..8"),
        "{e}"
    );
    // A file that changes under a run ends its stream with an error, not silently.
    a_change_under_the_run_is_an_error(&sorted, base, "sorted.txt", &text, "x y\n");
}

#[test]
fn a_streamed_poisson_workload_is_the_generated_one() {
    let rate = BitRate::from_gbps(100);
    for (interarrival, until, stop) in [
        (Interarrival::Exponential, None, None),
        (Interarrival::Lognormal, Some(SimTime::from_us(300)), None),
        (
            Interarrival::Exponential,
            Some(SimTime::from_us(300)),
            Some(SimTime::from_us(200)),
        ),
        (Interarrival::Exponential, None, Some(SimTime::from_us(100))),
    ] {
        let w = WorkloadConfig::Poisson {
            size_cdf: "web_search".into(),
            load: 0.4,
            flows: 5_000,
            start: SimTime::from_us(3),
            until,
            tag: FlowTag::Background,
            interarrival,
            sigma: Some(2.0),
            on: None,
            off: None,
        };
        let mut listed = w.generate(32, rate, 9, Path::new(".")).unwrap();
        // The run's stop time drops later arrivals from a list (experiment::build_sim).
        listed.retain(|f| stop.is_none_or(|s| f.start < s));
        let (st, c) = w
            .stream(32, rate, 9, Path::new("."), stop)
            .unwrap()
            .unwrap();
        let streamed: Vec<FlowSpec> = st.collect();
        let n = c.flows;
        assert_eq!(n, listed.len());
        assert!(n > 10, "{n} flows");
        assert_eq!(streamed, listed);
    }
    // On/off sources come as a list.
    let w = WorkloadConfig::Poisson {
        size_cdf: "web_search".into(),
        load: 0.4,
        flows: 100,
        start: SimTime::ZERO,
        until: None,
        tag: FlowTag::Flow,
        interarrival: Interarrival::Exponential,
        sigma: None,
        on: Some(SimTime::from_us(10)),
        off: Some(SimTime::from_us(10)),
    };
    assert!(
        w.stream(32, rate, 9, Path::new("."), None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn poisson_rate_matches_load() {
    let w = WorkloadConfig::Poisson {
        size_cdf: "web_search".into(),
        load: 0.5,
        flows: 20_000,
        start: SimTime::ZERO,
        until: None,
        tag: FlowTag::Flow,
        interarrival: Interarrival::Exponential,
        sigma: None,
        on: None,
        off: None,
    };
    let rate = BitRate::from_gbps(10);
    let v = w.generate(16, rate, 1, Path::new(".")).unwrap();
    assert_eq!(v.len(), 20_000);
    let span = v.last().unwrap().start.as_secs_f64();
    let bytes: u64 = v.iter().map(|f| f.size).sum();
    let load = bytes as f64 * 8.0 / span / (16.0 * 1e10);
    assert!((load - 0.5).abs() < 0.05, "offered load {load}");
    assert!(v.iter().all(|f| f.src != f.dst));
    assert!(v.windows(2).all(|w| w[0].start <= w[1].start));
}

#[test]
fn partition_aggregate_queries_chain_in_closed_loop() {
    let w = WorkloadConfig::PartitionAggregate {
        fan_in: 8,
        queries: 5,
        response_size: Bytes(2_000),
        response_size_max: Bytes(50_000),
        deadline_mean: SimTime::from_ms(20),
        deadline_means: vec![],
        deadline_per_query: false,
        query_rate: None,
        jitter: SimTime::ZERO,
        start: SimTime::from_us(5),
    };
    let v = w
        .generate(16, BitRate::from_gbps(1), 3, Path::new("."))
        .unwrap();
    assert_eq!(v.len(), 40);
    // Query 0 starts on its own; query q waits for group q - 1.
    for f in &v {
        let q = f.group.unwrap();
        assert_eq!(f.after, q.checked_sub(1));
        assert!(f.size >= 2_000 && f.size <= 50_000);
        assert_eq!(f.tag, FlowTag::Query);
        assert!(f.deadline.is_some());
        assert_ne!(f.src, f.dst);
    }
    // All responses of a query go to one aggregator.
    for q in 0..5 {
        let aggs: std::collections::BTreeSet<u32> = v
            .iter()
            .filter(|f| f.group == Some(q))
            .map(|f| f.dst)
            .collect();
        assert_eq!(aggs.len(), 1);
    }
    assert!(
        v[..8]
            .iter()
            .all(|f| f.after.is_none() && f.start == SimTime::from_us(5))
    );
}

#[test]
fn sequential_workflows_alternate_requests_and_responses() {
    let w = WorkloadConfig::Sequential {
        rate: 1000.0,
        workflows: 3,
        requests: 4,
        request_size: Bytes(1_000),
        response_size: Bytes(2_000),
        response_size_max: Bytes(32_000),
        deadline_mean: SimTime::from_ms(20),
        deadline_means: vec![SimTime::from_ms(20), SimTime::from_ms(40)],
        start: SimTime::ZERO,
    };
    let mut v = w
        .generate(16, BitRate::from_gbps(1), 9, Path::new("."))
        .unwrap();
    assert_eq!(v.len(), 3 * 4 * 2);
    v.sort_by_key(|f| f.id);
    for wf in v.chunks(8) {
        let front = wf[0].src;
        for (i, pair) in wf.chunks(2).enumerate() {
            let (req, resp) = (&pair[0], &pair[1]);
            assert_eq!((req.tag, resp.tag), (FlowTag::Request, FlowTag::Workflow));
            assert_eq!((req.src, resp.dst), (front, front));
            assert_eq!(req.dst, resp.src);
            assert_eq!(resp.after, req.group, "a response waits for its request");
            assert!(resp.deadline.is_some() && req.deadline.is_none());
            if i > 0 {
                assert_eq!(
                    req.after,
                    wf[2 * i - 1].group,
                    "request i+1 waits for response i"
                );
            }
        }
    }
}
