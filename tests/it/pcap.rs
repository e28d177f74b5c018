//! Packet traces: the pcap a run writes is read back by a real tool, `tshark` (installed by
//! `.ci/run`; the tests are skipped with a notice where it is missing, except under CI).

use crate::common;
use std::process::Command;

/// `tshark -r FILE -T fields -e F...` as rows of fields, or None when tshark is missing.
fn tshark(file: &std::path::Path, fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let mut args = vec!["-r".to_string(), file.display().to_string()];
    args.extend(["-T", "fields", "-E", "separator=,"].map(String::from));
    for f in fields {
        args.push("-e".into());
        args.push(f.to_string());
    }
    let out = match Command::new("tshark").args(&args).output() {
        Ok(o) => o,
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "tshark is missing under CI (.ci/run installs it)"
            );
            eprintln!("tshark not installed: skipping the pcap check");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    Some(
        text.lines()
            .map(|l| l.split(',').map(String::from).collect())
            .collect(),
    )
}

const DUMBBELL: &str = r#"
name = "pcap"
[topology]
kind = "dumbbell"
left = 2
right = 2
host_rate = "10Gbps"
bottleneck_rate = "10Gbps"
link_delay = "1us"
[workload]
kind = "flows"
flows = [{ src = 0, dst = 2, size = "20000B" }, { src = 1, dst = 3, size = "20000B", start = "3us" }]
"#;

fn write_run(c: &dcsim::config::Config, scheme: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let r = common::run(c, scheme);
    let tmp = tempfile::tempdir().unwrap();
    let dir = dcsim::report::write_run(tmp.path(), c, &r).unwrap();
    assert!(r.pcap.unwrap().packets > 0);
    (tmp, dir.join("trace.pcap"))
}

#[test]
fn tcp_trace_reads_back_in_tshark() {
    // Capture only host 0: it sends exactly the 20,000 bytes of its flow, in 14 segments.
    let c = common::cfg(&format!("{DUMBBELL}[pcap]\nnodes = [0]\n"));
    let (_tmp, file) = write_run(&c, "DCTCP");
    let Some(rows) = tshark(
        &file,
        &[
            "frame.time_epoch",
            "ip.src",
            "ip.dst",
            "tcp.seq_raw",
            "tcp.len",
            "ip.dsfield.ecn",
            "frame.len",
        ],
    ) else {
        return;
    };
    assert_eq!(rows.len(), 14, "{rows:?}");
    let mut bytes = 0u64;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[1], "10.0.0.0");
        assert_eq!(r[2], "10.0.0.2");
        assert_eq!(
            r[3].parse::<u64>().unwrap(),
            1460 * i as u64,
            "sequence numbers"
        );
        bytes += r[4].parse::<u64>().unwrap();
        assert_eq!(r[5], "2", "DCTCP data is ECT(0)");
    }
    assert_eq!(bytes, 20_000);
    // The first segment leaves at time 0; back-to-back segments one serialization apart
    // (MSS + header bytes at 10 Gbps, to the nanosecond the trace keeps).
    let wire = (c.packet.mss.0 + c.packet.header.0) as f64;
    let ser = wire * 8.0 / 10e9;
    let t: Vec<f64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(t[0], 0.0);
    for (k, tk) in t.iter().enumerate() {
        let want = (k as f64 * ser * 1e9).floor() * 1e-9;
        assert!((tk - want).abs() < 1e-10, "segment {k}: {tk} vs {want}");
    }
}

#[test]
fn roce_trace_reads_back_in_tshark() {
    let c = common::cfg(&format!(
        "schemes = [\"SP-RDMA\"]\n{DUMBBELL}[rdma]\nrto = \"1ms\"\n[pcap]\nnodes = [0, 2]\nstart = \"0us\"\nend = \"1ms\"\n"
    ));
    let (_tmp, file) = write_run(&c, "SP-RDMA");
    let Some(rows) = tshark(
        &file,
        &[
            "udp.dstport",
            "infiniband.bth.opcode",
            "infiniband.bth.psn",
            "ip.src",
            "_ws.expert.message",
        ],
    ) else {
        return;
    };
    let data: Vec<_> = rows.iter().filter(|r| r[1] == "7").collect();
    let acks: Vec<_> = rows.iter().filter(|r| r[1] == "17").collect();
    assert!(rows.iter().all(|r| r[0] == "4791"), "RoCEv2 port");
    // 20 000 B in RoCEv2's 1024 B payloads (the RDMA default MSS).
    assert_eq!(
        data.len(),
        20,
        "one RDMA WRITE packet per MTU of the message"
    );
    for (i, r) in data.iter().enumerate() {
        assert_eq!(r[2], i.to_string(), "PSNs in order");
        assert_eq!(r[3], "10.0.0.0");
    }
    assert!(!acks.is_empty() && acks.iter().all(|r| r[3] == "10.0.0.2"));
    assert!(
        rows.iter()
            .all(|r| !r[4].to_lowercase().contains("malformed")),
        "{rows:?}"
    );
}
