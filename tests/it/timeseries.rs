//! Time series: the sampled queues, links and flows agree with the run's own counters.

use crate::common::{cfg, run};

/// Two DCTCP flows of 5 MB from the left to the right of a 10 Gbps dumbbell (nodes: hosts
/// 0..4, then switches 4 and 5; K = 20 packets).
const BASE: &str = "schemes = [\"DCTCP\"]\n\
     [topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\n\
     [switch]\necn = { kind = \"step\", k = \"30760B\" }\n\
     [workload]\nkind = \"flows\"\nflows = [\n\
       { src = 0, dst = 2, size = \"5MB\" },\n\
       { src = 1, dst = 3, size = \"5MB\" },\n]\n";

fn config(extra: &str) -> dcsim::config::Config {
    cfg(&format!(
        "{BASE}[timeseries]\ninterval = \"1us\"\nnodes = [4]\nflows = [0, 1]\n{extra}"
    ))
}

fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

#[test]
fn samples_agree_with_the_run() {
    let c = config("on_change = false\n");
    let r = run(&c, "DCTCP");
    let [q, l, f] = r.timeseries_csv.clone().expect("time series");
    // The bottleneck is switch 4's port towards switch 5: the one with the most bytes.
    let bn = r
        .ports
        .iter()
        .filter(|p| p.node_id == 4)
        .max_by_key(|p| p.tx_bytes)
        .unwrap();
    let links: Vec<_> = rows(&l)
        .into_iter()
        .filter(|r| r[1] == bn.port.to_string())
        .collect();
    // Every interval has a row (on_change off); their bytes add up to what the port sent
    // before the last sample, within one interval's worth (1250 B at 10 Gbps).
    let sum: u64 = links.iter().map(|r| r[3].parse::<u64>().unwrap()).sum();
    assert!(
        sum <= bn.tx_bytes && bn.tx_bytes - sum <= 1250 + 1538,
        "{sum} vs {}",
        bn.tx_bytes
    );
    let times: Vec<u64> = links.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[1] - w[0] == 1_000_000));
    // Two long DCTCP flows keep the bottleneck busy: mean utilisation above 95 % once started.
    let util: Vec<f64> = links[20..links.len() - 20]
        .iter()
        .map(|r| r[4].parse().unwrap())
        .collect();
    let mean = util.iter().sum::<f64>() / util.len() as f64;
    assert!(mean > 0.95, "mean bottleneck utilisation {mean}");
    // The queue oscillates around K = 20 packets: it crosses 30 760 B and stays within the
    // port's peak.
    let qb: Vec<u64> = rows(&q)
        .into_iter()
        .filter(|r| r[1] == bn.port.to_string())
        .map(|r| r[4].parse().unwrap())
        .collect();
    let peak = *qb.iter().max().unwrap();
    assert!(
        peak > 30_760 && peak <= bn.max_queue_bytes,
        "{peak} vs {}",
        bn.max_queue_bytes
    );
    // Both flows are sampled, with DCTCP's alpha in [0, 1] and a window of at least 1.
    let fl = rows(&f);
    for id in ["0", "1"] {
        let mine: Vec<_> = fl.iter().filter(|r| r[1] == id).collect();
        assert!(mine.len() > 100);
        for r in mine {
            let a: f64 = r[3].parse().unwrap();
            assert!((0.0..=1.0).contains(&a));
            assert!(r[2].parse::<f64>().unwrap() >= 1.0);
        }
    }
}

#[test]
fn on_change_decimates_and_max_rows_bounds() {
    let all = run(&config("on_change = false\n"), "DCTCP");
    let dec = run(&config(""), "DCTCP");
    let n = |r: &dcsim::experiment::RunResult| r.timeseries.unwrap().rows;
    assert!(n(&dec) < n(&all), "{} vs {}", n(&dec), n(&all));
    let capped = run(&config("max_rows = 1000\n"), "DCTCP");
    assert_eq!(n(&capped), 1000);
    assert!(capped.timeseries.unwrap().truncated);
    // Sampling never changes the simulation itself.
    let plain = run(&cfg(BASE), "DCTCP");
    assert!(plain.timeseries.is_none());
    let fcts =
        |r: &dcsim::experiment::RunResult| r.records.iter().map(|x| x.fct_ps).collect::<Vec<_>>();
    assert_eq!(fcts(&all), fcts(&plain));
    assert_eq!(fcts(&capped), fcts(&plain));
}
