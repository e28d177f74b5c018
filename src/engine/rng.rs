//! Named random streams. Each stream is a PCG-64 (MCG, XSL-RR output: `rand_pcg::Pcg64Mcg`, a
//! named, portable algorithm) seeded from `(master seed, stream name)` through SplitMix64 and
//! FNV-1a, so a stream's draws depend only on the master seed and its own name.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser: a bijective mixer of 64-bit words.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A seeded random stream.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RngStream {
    g: Pcg64Mcg,
}

impl RngStream {
    /// The stream called `name` under master seed `seed`.
    pub fn new(seed: u64, name: &str) -> Self {
        let a = mix64(seed ^ mix64(fnv1a(name)));
        let b = mix64(a ^ 0x5851_F42D_4C95_7F2D);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
        RngStream {
            g: Pcg64Mcg::from_seed(bytes),
        }
    }

    /// A sub-stream, e.g. one per switch: `stream(seed, "ecmp").child(switch_id)`.
    pub fn child(&self, idx: u64) -> Self {
        let mut c = self.clone();
        let s = c.next_u64() ^ mix64(idx.wrapping_add(0x1234_5678));
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&mix64(s).to_le_bytes());
        bytes[8..].copy_from_slice(&mix64(s ^ 0xABCD).to_le_bytes());
        RngStream {
            g: Pcg64Mcg::from_seed(bytes),
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.g.next_u64()
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[0, n)`, unbiased (Lemire's multiply-and-reject). `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = self.next_u64() as u128 * n as u128;
        let mut lo = m as u64;
        if lo < n {
            let t = n.wrapping_neg() % n;
            while lo < t {
                m = self.next_u64() as u128 * n as u128;
                lo = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Exponential with the given mean (inverse CDF on `1 - U`, so never infinite).
    pub fn exp(&mut self, mean: f64) -> f64 {
        -(1.0 - self.uniform()).ln() * mean
    }

    /// Lognormal with the given mean and shape `sigma` (the standard deviation of its
    /// logarithm): `exp(mu + sigma·Z)`, `mu = ln(mean) − sigma²/2`, Z standard normal by
    /// Box–Muller (two uniforms per draw).
    pub fn lognormal(&mut self, mean: f64, sigma: f64) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        (mean.ln() - sigma * sigma / 2.0 + sigma * z).exp()
    }

    /// Uniform real in `[a, b)`.
    pub fn range_f64(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.uniform()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = RngStream::new(1, "arrivals");
        let mut b = RngStream::new(1, "arrivals");
        let mut c = RngStream::new(1, "sizes");
        let mut d = RngStream::new(2, "arrivals");
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        let vd: Vec<u64> = (0..8).map(|_| d.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        assert_ne!(va, vd);
    }

    #[test]
    fn below_is_uniform() {
        let mut r = RngStream::new(7, "t");
        let mut counts = [0u32; 6];
        let n = 60_000;
        for _ in 0..n {
            counts[r.below(6) as usize] += 1;
        }
        // chi-square with 5 dof; 20.5 is the 0.999 quantile.
        let e = n as f64 / 6.0;
        let chi: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi < 20.5, "chi2 {chi} counts {counts:?}");
    }

    #[test]
    fn exp_mean() {
        let mut r = RngStream::new(3, "e");
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exp(5.0)).sum::<f64>() / n as f64;
        assert!((m - 5.0).abs() < 0.05, "mean {m}");
    }
}
