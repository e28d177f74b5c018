//! `[run]`: how the kernel runs one simulation (as opposed to what it simulates).

use super::*;

/// How events of the same picosecond are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TieOrder {
    /// In the order they were scheduled, over the whole run (the default until the parallel
    /// kernel lands; it cannot be kept across partitions).
    #[default]
    Fifo,
    /// By `(seeded permutation of the origin, the origin's own sequence)`, where the origin is
    /// the node that scheduled the event or the link that carries the packet: the order the
    /// parallel kernel keeps for any partitioning. Changes every result in distribution only.
    Keyed,
}

/// `[run]`: kernel settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Tie order of same-time events. Default "fifo".
    pub ties: TieOrder,
    /// With keyed ties: the spacing of the instants at which the run decides whether it has
    /// ended (and releases the flows due before the next one). 1ns..=1s. Default 1us.
    pub grid: SimTime,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            ties: TieOrder::default(),
            grid: crate::sim::grid::DEFAULT_GRID,
        }
    }
}

impl RunConfig {
    /// Checks the section's own keys.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(SimTime(1_000)..=SimTime::from_ms(1_000)).contains(&self.grid) {
            return Err((
                "run.grid",
                format!("must be in 1ns..=1s, got {}", self.grid),
            ));
        }
        Ok(())
    }

    /// At its defaults (then it is left out of a run's identity, as before the section existed).
    pub fn is_default(&self) -> bool {
        *self == RunConfig::default()
    }
}
