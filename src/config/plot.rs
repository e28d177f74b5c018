//! What a `[[plot]]` section says: the figure's kind, its data and its looks, and the metrics a
//! figure can show. Schema only (the config validates it); drawing is `plot`'s.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn d_class() -> String {
    "all".into()
}

/// What a figure shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    /// A summary metric (y) against a sweep axis (x), one line per scheme.
    #[default]
    Sweep,
    /// The distribution of flow completion times (log x), one line per scheme, from the
    /// `fct.csv` of the runs at the sweep point `at` (seeds pooled).
    FctCdf,
    /// A slowdown statistic (y: `avg_slowdown`, `p50_slowdown`, `p99_slowdown` or
    /// `p999_slowdown`) against flow size (log x) in `bins` equal-count size bins, one line
    /// per scheme, from the runs at the sweep point `at` (seeds pooled).
    SlowdownVsSize,
    /// Delay attribution: one stacked bar per scheme of the mean FCT components (us) of the
    /// flows of `class`, at the sweep point `at` (mean over seeds).
    Attribution,
    /// Queue length over time (from `ts_queues.csv`, so the experiment needs
    /// `[timeseries]`): one line per scheme, the first seed's run at `at`, port `port` (default:
    /// the port with the highest sampled queue), all priorities summed.
    QueueTimeseries,
}

fn d_bins() -> usize {
    20
}

/// `[[plot]]`: one figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Output file name (written in the experiment's results directory), ending in `.svg`.
    pub file: String,
    pub title: String,
    /// What the figure shows. Default `sweep`.
    #[serde(default)]
    pub kind: PlotKind,
    /// The sweep axis on the x axis (its dotted key); `sweep` figures only.
    #[serde(default)]
    pub x: String,
    /// The metric: one of `columns::summary_metrics()` (`sweep`), or the slowdown statistic
    /// (`slowdown_vs_size`, default `p99_slowdown`).
    #[serde(default)]
    pub y: String,
    /// Flow-level figures: the sweep point whose runs to use, as axis key = value (axes left
    /// out are pooled). Default: every run.
    #[serde(default)]
    pub at: BTreeMap<String, toml::Value>,
    /// `slowdown_vs_size`: number of equal-count size bins, 2..=200. Default 20.
    #[serde(default = "d_bins")]
    pub bins: usize,
    /// `queue_timeseries`: the port (its number in `ports.csv`). Default: the busiest.
    #[serde(default)]
    pub port: Option<u32>,
    /// The size class ("all" or a class name such as "<50KB"). Default "all".
    #[serde(default = "d_class")]
    pub class: String,
    /// A second sweep axis that splits each scheme into several series.
    #[serde(default)]
    pub series: Option<String>,
    /// How that axis is named in the legend (default: the key's last segment).
    #[serde(default)]
    pub series_name: Option<String>,
    /// Only these schemes (default: all of the experiment's).
    #[serde(default)]
    pub schemes: Option<Vec<String>>,
    #[serde(default)]
    pub x_label: Option<String>,
    #[serde(default)]
    pub y_label: Option<String>,
    /// Logarithmic y axis (decades). Default false.
    #[serde(default)]
    pub log_y: bool,
}

/// Slowdown statistics a `slowdown_vs_size` figure can show.
pub const SIZE_STATS: &[&str] = &[
    "avg_slowdown",
    "p50_slowdown",
    "p99_slowdown",
    "p999_slowdown",
];
