//! Units carried in types: simulated time in integer picoseconds ([`SimTime`]), byte counts
//! ([`Bytes`]) and link rates in bits per second ([`BitRate`]).
//!
//! Config strings carry their unit: `"10Gbps"`, `"1us"`, `"64KiB"`. Parsing is strict: a number
//! without a unit, an unknown unit, a negative or non-finite value is an error that names what
//! was expected. Decimal prefixes (`KB`, `MB`, `GB`) are powers of 1000, binary ones (`KiB`,
//! `MiB`, `GiB`) powers of 1024; rates are always decimal (`Kbps`, `Mbps`, `Gbps`, `Tbps`).
//!
//! Serialization time is computed exactly in integers: `bytes * 8 * 10^12 / bps` picoseconds,
//! rounded up when the rate does not divide evenly (see [`BitRate::ser_time`]). Time never
//! accumulates in floating point.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// Simulated time (or a duration) in integer picoseconds. `u64` covers about 213 days.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    /// Truncated to whole nanoseconds (ns-3's double-to-`Time` conversion).
    pub const fn floor_ns(self) -> Self {
        SimTime(self.0 - self.0 % 1000)
    }
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000_000)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// From seconds as a float, rounded to the nearest picosecond (used only for sampled
    /// random intervals, never for accumulation).
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime((s * PS_PER_SEC as f64).round().max(0.0) as u64)
    }
    pub fn saturating_sub(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(o.0))
    }
}

/// Saturating: a time past 2^64 − 1 ps stays at [`SimTime::MAX`] ("never") instead of
/// wrapping to a time in the past; the simulator ends a run whose clock would get there.
impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(o.0))
    }
}
impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, o: SimTime) {
        self.0 = self.0.saturating_add(o.0)
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, o: SimTime) -> SimTime {
        SimTime(self.0 - o.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        let (div, unit) = if ps == 0 {
            (1, "s")
        } else if ps.is_multiple_of(PS_PER_SEC) {
            (PS_PER_SEC, "s")
        } else if ps.is_multiple_of(1_000_000_000) {
            (1_000_000_000, "ms")
        } else if ps.is_multiple_of(1_000_000) {
            (1_000_000, "us")
        } else if ps.is_multiple_of(1_000) {
            (1_000, "ns")
        } else {
            (1, "ps")
        };
        write!(f, "{}{}", ps / div, unit)
    }
}

/// A count of bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        let units: [(u64, &str); 6] = [
            (1 << 30, "GiB"),
            (1_000_000_000, "GB"),
            (1 << 20, "MiB"),
            (1_000_000, "MB"),
            (1 << 10, "KiB"),
            (1_000, "KB"),
        ];
        for (d, u) in units {
            if b >= d && b.is_multiple_of(d) {
                return write!(f, "{}{}", b / d, u);
            }
        }
        write!(f, "{}B", b)
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct BitRate(pub u64);

impl BitRate {
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub const fn from_mbps(m: u64) -> Self {
        BitRate(m * 1_000_000)
    }
    pub const fn from_gbps(g: u64) -> Self {
        BitRate(g * 1_000_000_000)
    }
    /// Exact serialization time of `bytes` at this rate, rounded up to the next picosecond
    /// when `8e12 / bps` is not an integer.
    #[inline]
    pub fn ser_time(self, bytes: u64) -> SimTime {
        let num = bytes as u128 * 8 * PS_PER_SEC as u128;
        let d = self.0 as u128;
        SimTime(num.div_ceil(d) as u64)
    }
    /// Picoseconds per byte when it is an integer (true for every rate that divides 8 Tbps,
    /// e.g. 1, 10, 25, 40, 100, 400 Gbps), else `None`.
    pub fn exact_ps_per_byte(self) -> Option<u64> {
        let num = 8 * PS_PER_SEC;
        if self.0 > 0 && num.is_multiple_of(self.0) {
            Some(num / self.0)
        } else {
            None
        }
    }
    /// Bytes that the link carries in `t`, rounded down.
    pub fn bytes_in(self, t: SimTime) -> u64 {
        (t.0 as u128 * self.0 as u128 / (8 * PS_PER_SEC as u128)) as u64
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (d, u) in [
            (1_000_000_000_000u64, "Tbps"),
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "Kbps"),
        ] {
            if b >= d && b.is_multiple_of(d) {
                return write!(f, "{}{}", b / d, u);
            }
        }
        write!(f, "{}bps", b)
    }
}

/// Splits `"12.5Gbps"` into `(12.5, "Gbps")`.
fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(format!("`{s}` does not start with a number"));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: `{num}` is not a number"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{s}`: value must be a finite non-negative number"));
    }
    Ok((v, unit.trim()))
}

fn scaled(v: f64, mult: u64, s: &str) -> Result<u64, String> {
    let x = v * mult as f64;
    if x > u64::MAX as f64 / 2.0 {
        return Err(format!("`{s}` is too large"));
    }
    let r = x.round();
    if (x - r).abs() > 1e-6 * x.max(1.0) {
        return Err(format!("`{s}` is not a whole number of the base unit"));
    }
    Ok(r as u64)
}

impl std::str::FromStr for SimTime {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (v, unit) = split_number(s)?;
        let mult = match unit {
            "ps" => 1,
            "ns" => 1_000,
            "us" | "µs" => 1_000_000,
            "ms" => 1_000_000_000,
            "s" => PS_PER_SEC,
            "" => return Err(format!("`{s}` has no unit; use one of ps, ns, us, ms, s")),
            u => {
                return Err(format!(
                    "`{s}`: unknown time unit `{u}`; use ps, ns, us, ms or s"
                ));
            }
        };
        Ok(SimTime(scaled(v, mult, s)?))
    }
}

impl std::str::FromStr for Bytes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (v, unit) = split_number(s)?;
        let mult: u64 = match unit {
            "B" => 1,
            "KB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            "" => {
                return Err(format!(
                    "`{s}` has no unit; use B, KB, MB, GB, KiB, MiB or GiB"
                ));
            }
            u => {
                return Err(format!(
                    "`{s}`: unknown size unit `{u}`; use B, KB, MB, GB, KiB, MiB or GiB"
                ));
            }
        };
        Ok(Bytes(scaled(v, mult, s)?))
    }
}

impl std::str::FromStr for BitRate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (v, unit) = split_number(s)?;
        let mult: u64 = match unit {
            "bps" => 1,
            "Kbps" => 1_000,
            "Mbps" => 1_000_000,
            "Gbps" => 1_000_000_000,
            "Tbps" => 1_000_000_000_000,
            "" => {
                return Err(format!(
                    "`{s}` has no unit; use bps, Kbps, Mbps, Gbps or Tbps"
                ));
            }
            u => {
                return Err(format!(
                    "`{s}`: unknown rate unit `{u}`; use bps, Kbps, Mbps, Gbps or Tbps"
                ));
            }
        };
        let r = scaled(v, mult, s)?;
        if r == 0 {
            return Err(format!("`{s}`: a rate must be positive"));
        }
        Ok(BitRate(r))
    }
}

macro_rules! serde_via_string {
    ($t:ident, $what:expr) => {
        // Config files and JSON outputs carry the value with its unit; binary formats (what
        // partitions of one run send each other) carry the integer.
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match s.is_human_readable() {
                    true => s.serialize_str(&self.to_string()),
                    false => s.serialize_u64(self.0),
                }
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                if !d.is_human_readable() {
                    return u64::deserialize(d).map(Self);
                }
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(E::custom)
                    }
                    // The binary form, read back through serde's buffering of an
                    // internally tagged enum (which reports itself human-readable): a
                    // partition's end-of-run state. Config files never give an unsigned
                    // integer (TOML's are signed: `visit_i64`).
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$t, E> {
                        Ok($t(v))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$t, E> {
                        Err(E::custom(format!(
                            "`{v}` has no unit; write it as a string with a unit, e.g. {}",
                            $what
                        )))
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$t, E> {
                        Err(E::custom(format!(
                            "`{v}` has no unit; write it as a string with a unit, e.g. {}",
                            $what
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

serde_via_string!(SimTime, "a duration such as \"1us\" or \"20ms\"");
serde_via_string!(Bytes, "a size such as \"1500B\", \"64KiB\" or \"3MB\"");
serde_via_string!(BitRate, "a rate such as \"10Gbps\"");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_saturates_instead_of_wrapping() {
        let near = SimTime(u64::MAX - 5);
        assert_eq!(near + SimTime(10), SimTime::MAX);
        let mut t = near;
        t += SimTime::from_ms(1);
        assert_eq!(t, SimTime::MAX);
        assert_eq!(SimTime(3) + SimTime(4), SimTime(7));
    }

    #[test]
    fn parse_time() {
        assert_eq!("1us".parse::<SimTime>().unwrap(), SimTime(1_000_000));
        assert_eq!("1.5ns".parse::<SimTime>().unwrap(), SimTime(1_500));
        assert_eq!("20ms".parse::<SimTime>().unwrap(), SimTime::from_ms(20));
        assert_eq!("3 s".parse::<SimTime>().unwrap(), SimTime(3 * PS_PER_SEC));
        assert!("10".parse::<SimTime>().is_err());
        assert!("10 parsecs".parse::<SimTime>().is_err());
        assert!("-1us".parse::<SimTime>().is_err());
        assert!("0.5ps".parse::<SimTime>().is_err());
    }

    #[test]
    fn parse_bytes_and_rate() {
        assert_eq!("64KiB".parse::<Bytes>().unwrap(), Bytes(65536));
        assert_eq!("3MB".parse::<Bytes>().unwrap(), Bytes(3_000_000));
        assert_eq!("1500B".parse::<Bytes>().unwrap(), Bytes(1500));
        assert!("1500".parse::<Bytes>().is_err());
        assert_eq!(
            "10Gbps".parse::<BitRate>().unwrap(),
            BitRate(10_000_000_000)
        );
        assert_eq!(
            "2.5Gbps".parse::<BitRate>().unwrap(),
            BitRate(2_500_000_000)
        );
        assert!("0Gbps".parse::<BitRate>().is_err());
        assert!("10GB/s".parse::<BitRate>().is_err());
    }

    #[test]
    fn display_roundtrip() {
        for s in ["1us", "20ms", "3s", "1500ps", "7ns"] {
            let t: SimTime = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        for s in ["10Gbps", "100Mbps", "2500Mbps"] {
            let r: BitRate = s.parse().unwrap();
            assert_eq!(r.to_string().parse::<BitRate>().unwrap(), r);
        }
        for s in ["64KiB", "3MB", "1500B"] {
            let b: Bytes = s.parse().unwrap();
            assert_eq!(b.to_string(), s);
        }
    }

    #[test]
    fn serialization_is_exact() {
        let r = BitRate::from_gbps(10);
        assert_eq!(r.ser_time(1500), SimTime(1_200_000));
        assert_eq!(r.exact_ps_per_byte(), Some(800));
        // 3 Gbps: 8e12/3e9 = 2666.67 ps per byte: rounded up per packet, not per byte.
        let r3 = BitRate(3_000_000_000);
        assert_eq!(r3.exact_ps_per_byte(), None);
        assert_eq!(r3.ser_time(3), SimTime(8_000));
        assert_eq!(r3.ser_time(1), SimTime(2_667));
        assert_eq!(r.bytes_in(SimTime::from_us(1)), 1250);
    }
}
