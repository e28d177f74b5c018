//! `[run]`: how the kernel runs one simulation (as opposed to what it simulates).

use super::*;

/// `[run]`: kernel settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// The spacing of the instants at which the run decides whether it has
    /// ended (and releases the flows due before the next one). 1ns..=1s. Default 1us.
    pub grid: SimTime,
    /// Threads one run uses (`dcsim run -t`): more than one splits it into as many
    /// partitions (at least), run at once. 1..=1024. Default 1.
    pub threads: u32,
    /// Partitions the run is split into (the windowed kernel); 1 with one thread: not split;
    /// more partitions than threads run in turns. 1..=4096. Default: `threads`.
    pub partitions: u32,
    /// How nodes are dealt to partitions: 0 balanced (pods, or the switches below the top
    /// tier with what hangs off them, dealt largest first to the least loaded partition),
    /// another value a random assignment seeded by it. Default 0.
    pub partition_seed: u64,
    /// How messages between partitions travel: `memory` (moved between threads) or `bytes`
    /// (packed into bytes and unpacked, as between processes: to check that the packing
    /// changes nothing). Default memory.
    pub exchange: Exchange,
}

/// How messages between partitions travel (`[run] exchange`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exchange {
    /// Moved between threads as values.
    #[default]
    Memory,
    /// Packed into bytes and unpacked, as between processes.
    Bytes,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            grid: crate::sim::grid::DEFAULT_GRID,
            threads: 1,
            partitions: 1,
            partition_seed: 0,
            exchange: Exchange::Memory,
        }
    }
}

impl RunConfig {
    /// Partitions a run is split into: `partitions`, at least one per thread.
    pub fn split(&self) -> usize {
        self.partitions.max(self.threads) as usize
    }

    /// Checks the section's own keys.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(SimTime(1_000)..=SimTime::from_ms(1_000)).contains(&self.grid) {
            return Err((
                "run.grid",
                format!("must be in 1ns..=1s, got {}", self.grid),
            ));
        }
        if !(1..=1024).contains(&self.threads) {
            return Err((
                "run.threads",
                format!("must be in 1..=1024, got {}", self.threads),
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
