//! Empirical flow-size distributions: piecewise-linear CDFs sampled by inverse transform with
//! linear interpolation between points (the HPCC `traffic_gen` convention, GPMP reconstruction §6).
//!
//! Built in: `web_search` (DCTCP, SIGCOMM'10, in the HPCC byte form, GPMP reconstruction §7.1),
//! `data_mining` (VL2, opera-sim digitisation, GPMP reconstruction §7.3), `fb_hadoop` (Facebook's
//! Hadoop cluster, Roy et al., SIGCOMM'15, as the HPCC ns-3 simulator's
//! `traffic_gen/FbHdp_distribution.txt`), `ali_storage` (Alibaba's storage cluster, 2019,
//! the HPCC paper's workload, as that simulator's `traffic_gen/AliStorage2019.txt`) and
//! `google_rpc` (Google RPC sizes, 2008, as its `traffic_gen/GoogleRPC2008.txt`, 843 points,
//! in `cdfs/google_rpc_2008.txt`). Any other CDF loads from a text
//! file with one `size_bytes cdf` pair per line (whitespace or comma separated, `#` comments),
//! sizes non-decreasing, CDF non-decreasing from 0 to 1 (or 0 to 100, read as percent).

use crate::engine::RngStream;

/// A piecewise-linear CDF over flow sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// `(size_bytes, cumulative probability)`, both non-decreasing, last probability 1.
    pub points: Vec<(f64, f64)>,
}

/// DCTCP web search, HPCC `WebSearch_distribution.txt` (bytes, percent).
const WEB_SEARCH: &[(f64, f64)] = &[
    (0.0, 0.0),
    (10_000.0, 15.0),
    (20_000.0, 20.0),
    (30_000.0, 30.0),
    (50_000.0, 40.0),
    (80_000.0, 53.0),
    (200_000.0, 60.0),
    (1_000_000.0, 70.0),
    (2_000_000.0, 80.0),
    (5_000_000.0, 90.0),
    (10_000_000.0, 97.0),
    (30_000_000.0, 100.0),
];

/// Facebook Hadoop, HPCC `FbHdp_distribution.txt` (bytes, percent).
const FB_HADOOP: &[(f64, f64)] = &[
    (0.0, 0.0),
    (100.0, 1.0),
    (200.0, 2.0),
    (300.0, 5.0),
    (350.0, 15.0),
    (400.0, 20.0),
    (500.0, 30.0),
    (600.0, 40.0),
    (700.0, 50.0),
    (1_000.0, 60.0),
    (2_000.0, 67.0),
    (7_000.0, 70.0),
    (30_000.0, 72.0),
    (50_000.0, 82.0),
    (80_000.0, 87.0),
    (120_000.0, 90.0),
    (300_000.0, 95.0),
    (1_000_000.0, 97.5),
    (2_000_000.0, 99.0),
    (10_000_000.0, 100.0),
];

/// Google RPC 2008, HPCC `GoogleRPC2008.txt` (bytes, percent).
const GOOGLE_RPC: &str = include_str!("cdfs/google_rpc_2008.txt");

/// Alibaba storage 2019, HPCC `AliStorage2019.txt` (bytes, percent).
const ALI_STORAGE: &[(f64, f64)] = &[
    (0.0, 0.0),
    (4_000.0, 22.93),
    (8_000.0, 69.21),
    (16_000.0, 80.61),
    (32_000.0, 90.47),
    (64_000.0, 93.53),
    (128_000.0, 96.77),
    (256_000.0, 97.53),
    (2_000_000.0, 100.0),
];

/// VL2 data mining, opera-sim `datamining.csv` (bytes, CDF).
const DATA_MINING: &[(f64, f64)] = &[
    (100.0, 0.0),
    (180.0, 0.085),
    (250.0, 0.14),
    (560.0, 0.33),
    (900.0, 0.47),
    (1_100.0, 0.55),
    (1_870.0, 0.65),
    (3_160.0, 0.70),
    (10_000.0, 0.80),
    (100_001.0, 0.874),
    (400_000.0, 0.90),
    (1_850_000.0, 0.95),
    (10_000_000.0, 0.97),
    (30_000_000.0, 0.98),
    (100_000_000.0, 0.99),
    (250_000_000.0, 0.995),
    (1_000_000_000.0, 1.0),
];

impl Cdf {
    /// Names of the built-in distributions.
    pub const BUILTIN: &'static [&'static str] = &[
        "web_search",
        "data_mining",
        "fb_hadoop",
        "ali_storage",
        "google_rpc",
    ];

    pub fn builtin(name: &str) -> Option<Cdf> {
        if name == "google_rpc" {
            return Cdf::parse(GOOGLE_RPC).ok();
        }
        let pts = match name {
            "web_search" => WEB_SEARCH,
            "data_mining" => DATA_MINING,
            "fb_hadoop" => FB_HADOOP,
            "ali_storage" => ALI_STORAGE,
            _ => return None,
        };
        Cdf::from_points(pts.to_vec()).ok()
    }

    /// Validates and normalises points (percent is detected when the last value is 100).
    pub fn from_points(mut pts: Vec<(f64, f64)>) -> Result<Cdf, String> {
        if pts.len() < 2 {
            return Err("a CDF needs at least two points".into());
        }
        let last = pts.last().unwrap().1;
        let scale = if (last - 100.0).abs() < 1e-9 {
            100.0
        } else if (last - 1.0).abs() < 1e-9 {
            1.0
        } else {
            return Err(format!(
                "the last CDF value must be 1 (or 100 for percent), got {last}"
            ));
        };
        for p in pts.iter_mut() {
            p.1 /= scale;
        }
        for (i, w) in pts.windows(2).enumerate() {
            if w[1].0 < w[0].0 {
                return Err(format!("sizes must be non-decreasing (point {})", i + 2));
            }
            if w[1].1 < w[0].1 {
                return Err(format!(
                    "CDF values must be non-decreasing (point {})",
                    i + 2
                ));
            }
        }
        if pts[0].1 < 0.0 || pts[0].0 < 0.0 {
            return Err("sizes and CDF values must be non-negative".into());
        }
        Ok(Cdf { points: pts })
    }

    /// Parses the text format described in the module docs.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut pts = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap().trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .collect();
            if f.len() != 2 {
                return Err(format!(
                    "line {}: expected `size_bytes cdf`, got `{line}`",
                    n + 1
                ));
            }
            let parse = |s: &str| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("line {}: `{s}` is not a number", n + 1))
            };
            pts.push((parse(f[0])?, parse(f[1])?));
        }
        Cdf::from_points(pts)
    }

    /// Mean of the piecewise-linear distribution, in bytes.
    pub fn mean(&self) -> f64 {
        let mut m = self.points[0].0 * self.points[0].1;
        for w in self.points.windows(2) {
            m += (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1);
        }
        m
    }

    /// The size at cumulative probability `u` in [0, 1].
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        if u <= p[0].1 {
            return p[0].0;
        }
        let i = p.partition_point(|&(_, c)| c < u).min(p.len() - 1);
        let (x0, c0) = p[i - 1];
        let (x1, c1) = p[i];
        if c1 <= c0 {
            x1
        } else {
            x0 + (x1 - x0) * (u - c0) / (c1 - c0)
        }
    }

    /// Fraction of flows strictly smaller than `x` bytes.
    pub fn cdf_at(&self, x: f64) -> f64 {
        let p = &self.points;
        if x <= p[0].0 {
            return 0.0;
        }
        for w in p.windows(2) {
            if x <= w[1].0 {
                if w[1].0 == w[0].0 {
                    return w[1].1;
                }
                return w[0].1 + (w[1].1 - w[0].1) * (x - w[0].0) / (w[1].0 - w[0].0);
            }
        }
        1.0
    }

    /// Draws a flow size in bytes (at least 1).
    pub fn sample(&self, rng: &mut RngStream) -> u64 {
        (self.quantile(rng.uniform()).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_search_mean_matches_spec() {
        let c = Cdf::builtin("web_search").unwrap();
        assert!((c.mean() - 1_711_250.0).abs() < 1.0, "mean {}", c.mean());
        assert!((c.cdf_at(50_000.0) - 0.40).abs() < 1e-9);
    }

    #[test]
    fn data_mining_mean_matches_spec() {
        let c = Cdf::builtin("data_mining").unwrap();
        // GPMP reconstruction §7.3: mean ≈ 5.04 MB.
        assert!((c.mean() / 1e6 - 5.04).abs() < 0.05, "mean {}", c.mean());
    }

    #[test]
    fn sampling_matches_mean() {
        let c = Cdf::builtin("web_search").unwrap();
        let mut r = RngStream::new(11, "sizes");
        let n = 400_000;
        let m = (0..n).map(|_| c.sample(&mut r) as f64).sum::<f64>() / n as f64;
        assert!((m / c.mean() - 1.0).abs() < 0.02, "sample mean {m}");
    }

    #[test]
    fn parse_file_format() {
        let c = Cdf::parse("# size cdf\n1000 0\n2000, 50\n4000 100\n").unwrap();
        assert_eq!(c.points, vec![(1000.0, 0.0), (2000.0, 0.5), (4000.0, 1.0)]);
        assert_eq!(c.quantile(0.75), 3000.0);
        assert!(Cdf::parse("1000 0\n500 1\n").is_err());
        assert!(Cdf::parse("1000 0\n2000 0.9\n").is_err());
        assert!(Cdf::parse("1000 x\n2000 1\n").is_err());
    }
}
