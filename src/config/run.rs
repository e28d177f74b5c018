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
    /// Partitions the run is split into (the windowed kernel; single-threaded for now, to
    /// show that the partitioning changes no output). 1..=4096. Default 1.
    pub partitions: u32,
    /// How nodes are dealt to partitions: 0 round robin over the switches, another value a
    /// random assignment seeded by it. Default 0.
    pub partition_seed: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            ties: TieOrder::default(),
            grid: crate::sim::grid::DEFAULT_GRID,
            partitions: 1,
            partition_seed: 0,
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
        if !(1..=4096).contains(&self.partitions) {
            return Err((
                "run.partitions",
                format!("must be in 1..=4096, got {}", self.partitions),
            ));
        }
        Ok(())
    }

    /// At its defaults (then it is left out of a run's identity, as before the section existed).
    pub fn is_default(&self) -> bool {
        *self == RunConfig::default()
    }
}
