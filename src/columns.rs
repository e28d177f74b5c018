//! Every column of `fct.csv` and `summary.csv`, defined once: its identity (an enum variant, so
//! that `report` must fill it: its cell functions `match` every variant), its name (the unit
//! in the suffix: `_ps`, `_us`, `_bytes`) and its label when a figure shows it. The header
//! rows, the metrics a `[[plot]]` may name, their axis labels and legends, and the names a
//! sweep axis may not take all come from these tables.
//!
//! This is schema: it imports no model or results code (`report` computes the cells).

use std::borrow::Cow;

/// The delay-attribution components, in column order: name (the column is `attr_<name>_ps`
/// in `fct.csv`, `attr_<name>_us` in `summary.csv`) and legend (kept with the model, in
/// [`Attribution::COMPONENTS`](crate::sim::attrib::Attribution::COMPONENTS)).
pub const ATTRIBUTION: [(&str, &str); 11] = crate::sim::attrib::Attribution::COMPONENTS;

/// The sawtooth probe's columns of `summary.csv` (`[probe]`), in order, with their labels.
pub const SAWTOOTH: [(&str, &str); 14] = [
    ("st_alpha", "alpha (measured)"),
    ("st_alpha_pred", "alpha (analysis)"),
    ("st_alpha_ratio", "alpha, measured / analysis"),
    ("st_amplitude", "queue amplitude per link (packets)"),
    (
        "st_amplitude_pred",
        "queue amplitude per link, analysis (packets)",
    ),
    ("st_amplitude_ratio", "amplitude, measured / analysis"),
    ("st_period_rtts", "period (round trips)"),
    ("st_period_pred", "period, analysis (round trips)"),
    ("st_period_ratio", "period, measured / analysis"),
    (
        "st_period_ratio_delay",
        "period, measured / (analysis + 1 RTT of feedback delay)",
    ),
    ("st_q_p99", "p99 queue per link (packets)"),
    ("st_q_max_pred", "peak queue K + N/M (packets)"),
    ("st_k_bound", "K lower bound (20) (packets)"),
    (
        "st_empty_fraction",
        "fraction of samples with an empty bottleneck",
    ),
];

/// A column of an output table.
#[derive(Clone, Debug)]
pub struct Column<C> {
    pub id: C,
    pub name: Cow<'static, str>,
    /// What a figure calls it, with its unit; None: not a metric a figure can show.
    pub label: Option<&'static str>,
}

/// The columns of `fct.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fct {
    FlowId,
    Src,
    Dst,
    SizeBytes,
    StartPs,
    FinishPs,
    RcvFinishPs,
    FctPs,
    IdealFctPs,
    Slowdown,
    SizeClass,
    Retransmits,
    Timeouts,
    EcnMarks,
    Drops,
    DeadlinePs,
    DeadlineMet,
    Tag,
    DeadlineClass,
    IdealGroupFctPs,
    SlowdownGroup,
    /// Attribution component `i` of [`ATTRIBUTION`].
    Attr(usize),
}

/// The columns of `summary.csv` after `run`, `scheme`, `seed` and the sweep axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summary {
    Class,
    Flows,
    Finished,
    AvgFct,
    P50Fct,
    P99Fct,
    P999Fct,
    AvgSlowdown,
    P50Slowdown,
    P99Slowdown,
    P999Slowdown,
    ClassDrops,
    DeadlineFlows,
    DeadlineMet,
    AvgSlowdownGroup,
    P50SlowdownGroup,
    P99SlowdownGroup,
    P999SlowdownGroup,
    Drops,
    Timeouts,
    PfcPauses,
    MeanUtilFabricLinks,
    /// Mean bus bandwidth of the run's collectives (empty unless every one finished).
    Busbw,
    /// Mean time of the run's collectives.
    CollectiveTime,
    /// Mean time of the run's training iterations.
    IterationTime,
    /// Sawtooth probe column `i` of [`SAWTOOTH`].
    Sawtooth(usize),
    /// Mean attribution component `i` of [`ATTRIBUTION`] over the class's finished flows.
    Attr(usize),
    EndReason,
}

fn col<C>(id: C, name: &'static str, label: Option<&'static str>) -> Column<C> {
    Column {
        id,
        name: Cow::Borrowed(name),
        label,
    }
}

/// The attribution columns with unit suffix `unit`.
fn attribution<C>(unit: &'static str, id: fn(usize) -> C) -> impl Iterator<Item = Column<C>> {
    ATTRIBUTION
        .iter()
        .enumerate()
        .map(move |(i, (n, l))| Column {
            id: id(i),
            name: Cow::Owned(format!("attr_{n}_{unit}")),
            label: Some(l),
        })
}

/// The columns of `fct.csv`, one row per flow (or RDMA message).
pub fn fct() -> Vec<Column<Fct>> {
    use Fct::*;
    [
        col(FlowId, "flow_id", None),
        col(Src, "src", None),
        col(Dst, "dst", None),
        col(SizeBytes, "size_bytes", None),
        col(StartPs, "start_ps", None),
        col(FinishPs, "finish_ps", None),
        col(RcvFinishPs, "rcv_finish_ps", None),
        col(FctPs, "fct_ps", None),
        col(IdealFctPs, "ideal_fct_ps", None),
        col(Slowdown, "slowdown", None),
        col(SizeClass, "size_class", None),
        col(Retransmits, "retransmits", None),
        col(Timeouts, "timeouts", None),
        col(EcnMarks, "ecn_marks", None),
        col(Drops, "drops", None),
        col(DeadlinePs, "deadline_ps", None),
        col(DeadlineMet, "deadline_met", None),
        col(Tag, "tag", None),
        col(DeadlineClass, "deadline_class", None),
        col(IdealGroupFctPs, "ideal_group_fct_ps", None),
        col(SlowdownGroup, "slowdown_group", None),
    ]
    .into_iter()
    .chain(attribution("ps", Attr))
    .collect()
}

/// The columns of `summary.csv` after `run`, `scheme`, `seed` and the sweep axes, one row per
/// run and size class (`all` first).
pub fn summary() -> Vec<Column<Summary>> {
    use Summary::*;
    let head = [
        col(Class, "class", None),
        col(Flows, "flows", None),
        col(Finished, "finished", Some("flows finished")),
        col(AvgFct, "avg_fct_us", Some("average FCT (us)")),
        col(P50Fct, "p50_fct_us", Some("median FCT (us)")),
        col(P99Fct, "p99_fct_us", Some("p99 FCT (us)")),
        col(P999Fct, "p999_fct_us", Some("p99.9 FCT (us)")),
        col(AvgSlowdown, "avg_slowdown", Some("average slowdown")),
        col(P50Slowdown, "p50_slowdown", Some("median slowdown")),
        col(P99Slowdown, "p99_slowdown", Some("p99 slowdown")),
        col(P999Slowdown, "p999_slowdown", Some("p99.9 slowdown")),
        col(ClassDrops, "class_drops", Some("packets dropped")),
        col(DeadlineFlows, "deadline_flows", None),
        col(
            DeadlineMet,
            "deadline_met",
            Some("fraction of deadlines met"),
        ),
        col(
            AvgSlowdownGroup,
            "avg_slowdown_group",
            Some("average normalised FCT (query ideal)"),
        ),
        col(
            P50SlowdownGroup,
            "p50_slowdown_group",
            Some("median normalised FCT (query ideal)"),
        ),
        col(
            P99SlowdownGroup,
            "p99_slowdown_group",
            Some("p99 normalised FCT (query ideal)"),
        ),
        col(
            P999SlowdownGroup,
            "p999_slowdown_group",
            Some("p99.9 normalised FCT (query ideal)"),
        ),
        col(Drops, "drops", None),
        col(Timeouts, "timeouts", None),
        col(PfcPauses, "pfc_pauses", None),
        col(MeanUtilFabricLinks, "mean_util_fabric_links", None),
        col(Busbw, "busbw_gbps", Some("bus bandwidth (Gbit/s)")),
        col(
            CollectiveTime,
            "collective_us",
            Some("collective time (us)"),
        ),
        col(IterationTime, "iteration_us", Some("iteration time (us)")),
    ];
    let sawtooth = SAWTOOTH
        .iter()
        .enumerate()
        .map(|(i, (n, l))| col(Sawtooth(i), n, Some(l)));
    head.into_iter()
        .chain(sawtooth)
        .chain(attribution("us", Attr))
        .chain(std::iter::once(col(EndReason, "end_reason", None)))
        .collect()
}

/// The header of `summary.csv` for runs with these sweep axes (dotted keys): `run`, `scheme`,
/// `seed`, one column per axis (the key's last segment), then [`summary`].
pub fn summary_header(axes: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = ["run", "scheme", "seed"].map(String::from).to_vec();
    h.extend(axes.iter().map(|k| crate::sweep::axis_column(k)));
    h.extend(summary().into_iter().map(|c| c.name.into_owned()));
    h
}

/// The metrics of `summary.csv` a figure can show, with their axis labels (an attribution
/// component's label is its legend with the unit added).
pub fn summary_metrics() -> Vec<(String, String)> {
    summary()
        .into_iter()
        .filter_map(|c| {
            let label = match c.id {
                Summary::Attr(_) => format!("{} (us)", c.label?),
                _ => c.label?.to_string(),
            };
            Some((c.name.into_owned(), label))
        })
        .collect()
}

/// The delay-attribution columns of `summary.csv`, with their legend names.
pub fn summary_attribution() -> Vec<(String, &'static str)> {
    attribution("us", Summary::Attr)
        .map(|c| (c.name.into_owned(), c.label.unwrap_or_default()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_carry_units() {
        let mut names = summary_header(&[]);
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate summary.csv column");
        let mut f: Vec<String> = fct().into_iter().map(|c| c.name.into_owned()).collect();
        f.sort();
        let n = f.len();
        f.dedup();
        assert_eq!(f.len(), n, "duplicate fct.csv column");
        assert!(
            f.iter()
                .filter(|c| c.starts_with("attr_"))
                .all(|c| c.ends_with("_ps"))
        );
        let m = summary_metrics();
        assert!(m.iter().any(|(c, l)| c == "p99_fct_us" && l.contains("us")));
        assert!(
            m.iter()
                .any(|(c, l)| c == "attr_pfc_us" && l.ends_with("(us)"))
        );
        assert_eq!(summary_attribution().len(), ATTRIBUTION.len());
    }
}
