use super::*;

#[test]
fn default_experiment_is_valid() {
    let c = Config::default_experiment();
    assert_eq!(c.topology.n_hosts(), 16);
    assert_eq!(c.schemes, vec!["TCP", "DCTCP"]);
}

#[test]
fn empty_config_takes_defaults() {
    let c = Config::parse("", "x.toml").unwrap();
    c.validate("x.toml", Path::new(".")).unwrap();
    assert_eq!(c.tcp.rto_min, SimTime::from_ms(10));
}

#[test]
fn unknown_key_is_named() {
    let e = Config::parse("[tcp]\nrto_mn = \"1ms\"\n", "x.toml").unwrap_err();
    assert!(e.to_string().contains("rto_mn"), "{e}");
    assert!(e.to_string().contains("x.toml"), "{e}");
    let e = Config::parse("[topology]\nkind = \"fat_tree\"\nleaves = 3\n", "x.toml").unwrap_err();
    assert!(e.to_string().contains("leaves"), "{e}");
}

#[test]
fn bad_unit_is_explained() {
    let e = Config::parse("[tcp]\nrto_min = \"1 fortnight\"\n", "x.toml").unwrap_err();
    assert!(e.to_string().contains("unknown time unit"), "{e}");
    let e = Config::parse("[tcp]\nrto_min = 5\n", "x.toml").unwrap_err();
    assert!(e.to_string().contains("no unit"), "{e}");
}

#[test]
fn out_of_range_names_key_and_range() {
    let c = Config::parse("[topology]\nkind = \"fat_tree\"\nk = 5\n", "x.toml").unwrap();
    let e = c.validate("x.toml", Path::new(".")).unwrap_err();
    assert_eq!(e.key, "topology.k");
    let c = Config::parse("[workload]\nkind = \"poisson\"\nload = 1.5\n", "x.toml").unwrap();
    let e = c.validate("x.toml", Path::new(".")).unwrap_err();
    assert_eq!(e.key, "workload.load");
    assert!(e.msg.contains("(0, 1]"));
    let c = Config::parse("schemes = [\"QUIC\"]\n", "x.toml").unwrap();
    let e = c.validate("x.toml", Path::new(".")).unwrap_err();
    assert!(e.msg.contains("DCTCP"), "{e}");
}

#[test]
fn gpmp_limit_is_one_bdp_of_the_longest_path() {
    // Leaf-spine, 10 Gbps, 1 us links, 1000 B + 82 B packets: the round trip of one full
    // packet is 4 x 865.6 ns serialization + 4 x 65.6 ns for the ACK + 8 us propagation
    // = 11.7248 us, i.e. 14 656 B at 10 Gbps.
    let base = "[packet]\nmss = \"1000B\"\nheader = \"82B\"\n";
    let c = Config::parse(&format!("{base}[gpmp]\nslice = \"8KB\"\n"), "x").unwrap();
    assert_eq!(c.gpmp_limit(), 14_656);
    // At least one slice (the default 16 KB).
    let c = Config::parse(base, "x").unwrap();
    assert_eq!(c.gpmp_limit(), 16_000);
    // An explicit value wins; below one slice is an error naming the key.
    let c = Config::parse(&format!("{base}[gpmp]\nlimit = \"64KB\"\n"), "x").unwrap();
    assert_eq!(c.gpmp_limit(), 64_000);
    let c = Config::parse(&format!("{base}[gpmp]\nlimit = \"8KB\"\n"), "x").unwrap();
    assert_eq!(
        c.validate("x", Path::new(".")).unwrap_err().key,
        "gpmp.limit"
    );
    // 100 Gbps fat-tree (6 hops): 6 x 86.56 + 6 x 6.56 ns + 12 us = 12.5587 us -> 156 984 B.
    let c = Config::parse(
        &format!(
            "{base}[topology]\nkind = \"fat_tree\"\nhost_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\n"
        ),
        "x",
    )
    .unwrap();
    assert_eq!(c.gpmp_limit(), 156_984);
}
#[test]
fn apply_overrides_and_validates_through_the_schema() {
    let text = "[workload]\nkind = \"poisson\"\nload = 0.5\n\
                [sweep]\naxes = [{ key = \"workload.load\", values = [0.3, 0.9] }, \
                { key = \"tcp.rto_min\", values = [\"2ms\"] }]\n";
    let c = Config::parse(text, "s.toml").unwrap();
    let combos = crate::sweep::combinations(&c.sweep.axes);
    let r = c.at_sweep_point(&combos[1], "s.toml").unwrap();
    match r.workload {
        crate::workload::WorkloadConfig::Poisson { load, .. } => assert_eq!(load, 0.9),
        _ => panic!(),
    }
    assert_eq!(r.tcp.rto_min, crate::units::SimTime::from_ms(2));
    // Array elements by index.
    let mut t: toml::Table = toml::from_str("[w]\nparts = [{ a = 1 }, { a = 2 }]\n").unwrap();
    crate::sweep::set_key(&mut t, "w.parts.1.a", 9.into()).unwrap();
    assert_eq!(t["w"]["parts"][1]["a"].as_integer(), Some(9));
    assert!(crate::sweep::set_key(&mut t, "w.parts.5.a", 9.into()).is_err());
    assert!(r.sweep.axes.is_empty());
    // A bad value is reported with the sweep values.
    let bad = "[sweep]\naxes = [{ key = \"tcp.rto_min\", values = [\"2 parsecs\"] }]\n";
    let c = Config::parse(bad, "s.toml").unwrap();
    let e = c
        .at_sweep_point(&crate::sweep::combinations(&c.sweep.axes)[0], "s.toml")
        .unwrap_err();
    assert!(e.to_string().contains("2 parsecs"), "{e}");
}
