use super::*;
use crate::units::BitRate;

fn hops(n: usize, gbps: u64, us: u64) -> Vec<Hop> {
    vec![(BitRate::from_gbps(gbps), SimTime::from_us(us)); n]
}

#[test]
fn ideal_single_packet() {
    // 1000 B payload + 40 B header at 10 Gbps = 832 ns per hop, 1 us per link, 2 hops;
    // ACK 40 B = 32 ns per hop.
    let f = hops(2, 10, 1);
    let t = ideal_fct(1000, 1000, 40, &f, &f, Some(40));
    assert_eq!(t, SimTime::from_ns(2 * 832 + 2_000 + 2 * 32 + 2_000));
}

#[test]
fn ideal_uniform_pipeline() {
    // n equal packets over h equal hops: (n + h - 1) s + h d.
    let f = hops(3, 10, 1);
    let t = ideal_fct(5000, 1000, 0, &f, &f, None);
    assert_eq!(t, SimTime::from_ns((5 + 2) * 800 + 3_000));
    // A short last packet.
    let t = ideal_fct(4500, 1000, 0, &f, &f, None);
    assert_eq!(t, SimTime::from_ns(800 + 800 + 800 + 3 * 800 + 400 + 3_000));
}

#[test]
fn ideal_bottleneck_in_the_middle() {
    // 10G, 1G, 10G: packets leave the 1G hop every 8 us and cross the last hop unqueued.
    let f = vec![
        (BitRate::from_gbps(10), SimTime::ZERO),
        (BitRate::from_gbps(1), SimTime::ZERO),
        (BitRate::from_gbps(10), SimTime::ZERO),
    ];
    let t = ideal_fct(3000, 1000, 0, &f, &f, None);
    assert_eq!(t, SimTime::from_ns(800 + 3 * 8_000 + 800));
}

#[test]
fn the_spread_ideal_of_equal_links_is_the_width_formula() {
    // Stages of w equal links give exactly the width bound, for every size.
    let (h, f) = (
        (BitRate::from_gbps(10), SimTime::from_us(1)),
        (BitRate::from_gbps(40), SimTime::from_us(2)),
    );
    let stages = vec![vec![h], vec![f; 4], vec![f; 2], vec![h]];
    let fwd = [h, f, f, h];
    for size in [1, 100, 1460, 1461, 5000, 146_000, 3_000_001] {
        let widths = [1, 4, 2, 1];
        let with = ideal_fct_with(size, 1460, 78, &fwd, &widths, &[], None, false);
        assert_eq!(
            ideal_fct_spread(size, 1460, 78, &stages, false),
            with,
            "{size}"
        );
        let one: Vec<Vec<Hop>> = fwd.iter().map(|&x| vec![x]).collect();
        let single = ideal_fct(size, 1460, 78, &fwd, &[], None);
        assert_eq!(
            ideal_fct_spread(size, 1460, 78, &one, false),
            single,
            "{size}"
        );
    }
}

#[test]
fn unequal_links_carry_packets_together() {
    // One packet in 1 ps and one in 3 ps: 5 packets take 4 ps (4 + 1), not 5.
    assert_eq!(makespan(5, &[SimTime(1), SimTime(3)]), SimTime(4));
    assert_eq!(makespan(1, &[SimTime(1), SimTime(3)]), SimTime(1));
    assert_eq!(makespan(7, &[SimTime(2); 3]), SimTime(6));
    // A slow link beside a fast one: the spread ideal is below the fast path's alone and
    // above the ideal of two fast links.
    let (fast, slow) = (
        (BitRate::from_gbps(40), SimTime::from_us(1)),
        (BitRate::from_gbps(10), SimTime::from_us(1)),
    );
    let size = 1_000_000;
    let mixed = ideal_fct_spread(size, 1000, 0, &[vec![fast, slow]], false);
    let alone = ideal_fct_spread(size, 1000, 0, &[vec![fast]], false);
    let two = ideal_fct_spread(size, 1000, 0, &[vec![fast, fast]], false);
    assert!(two < mixed && mixed < alone, "{two} {mixed} {alone}");
    // 1000 packets, 200 ns each on the fast link and 800 ns on the slow one: 800 + 200 of
    // them by 160 us, then the 1 us link delay.
    assert_eq!(mixed, SimTime::from_us(161));
}

#[test]
fn percentiles_nearest_rank() {
    let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
    assert_eq!(percentile(&v, 0.5), 50.0);
    assert_eq!(percentile(&v, 0.99), 99.0);
    assert_eq!(percentile(&v, 0.999), 100.0);
    assert_eq!(percentile(&[3.0], 0.99), 3.0);
}

#[test]
fn streamed_stats_match_the_sorted_vector() {
    // Values in increasing order, as merged runs give them: the same mean bits and
    // nearest-rank percentiles as the in-memory path.
    let mut rng = crate::engine::RngStream::new(7, "t");
    for n in [1usize, 2, 7, 999, 1000, 1001, 4096] {
        let mut v: Vec<f64> = (0..n).map(|_| rng.exp(3.0)).collect();
        v.sort_by(f64::total_cmp);
        let s = stats(v.iter().copied(), n);
        assert_eq!(s[0].to_bits(), (v.iter().sum::<f64>() / n as f64).to_bits());
        assert_eq!(s[1], percentile(&v, 0.5));
        assert_eq!(s[2], percentile(&v, 0.99));
        assert_eq!(s[3], percentile(&v, 0.999));
    }
    assert!(stats(std::iter::empty(), 0).iter().all(|x| x.is_nan()));
}

#[test]
fn size_classes() {
    let c = SizeClasses {
        bounds: vec![100_000, 1_000_000],
        below: vec![30_000, 100_000, 30_000, 2_000_000],
    };
    assert_eq!(c.class_of(99_999), 0);
    assert_eq!(c.class_of(100_000), 1);
    assert_eq!(c.class_of(5_000_000), 2);
    assert_eq!(c.name(0), "<100KB");
    assert_eq!(c.name(1), "100KB-1MB");
    assert_eq!(c.name(2), ">=1MB");
    // Cumulative classes: "<100KB" is already the first class, duplicates collapse.
    assert_eq!(
        c.cumulative(),
        vec![
            ("<30KB".to_string(), 30_000),
            ("<2MB".to_string(), 2_000_000)
        ]
    );
    assert_eq!(
        c.names(),
        ["<100KB", "100KB-1MB", ">=1MB", "<30KB", "<2MB"].map(String::from)
    );
}
