//! The ticks and tick labels of log axes: a tick at every 1..9 x 10^k, labels at 1, 2 and
//! 5 x 10^k up to three decades (decades beyond), numbers without floating-point noise and
//! sizes in units of 1000 (`20 KB`, `10 MB`). Not here: placing them on a chart (the figure
//! code in `plot/mod.rs` draws them).

/// A tick of a log axis, at `at` = log10(`value`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct LogTick {
    pub at: f64,
    pub value: f64,
    pub label: bool,
}

/// The ticks of a log axis spanning log10 values `lo..=hi`: a tick at each 1..9 × 10^k; labels
/// at 1, 2 and 5 × 10^k when the axis spans at most three decades, at the decades otherwise
/// (the minor ticks then carry no label).
pub(super) fn log_ticks(lo: f64, hi: f64) -> Vec<LogTick> {
    let mut out = Vec::new();
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return out;
    }
    let fine = hi - lo <= 3.0 + 1e-9;
    for k in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for m in 1..=9 {
            let value = m as f64 * 10f64.powi(k);
            let at = value.log10();
            if at < lo - 1e-9 || at > hi + 1e-9 {
                continue;
            }
            let label = m == 1 || (fine && (m == 2 || m == 5));
            out.push(LogTick { at, value, label });
        }
    }
    out
}

/// A tick value for people: 1, 20, 500, 1000, 0.5 (no floating-point noise).
pub(super) fn number_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let t = format!("{v:.6}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A size for people: 500 B, 20 KB, 10 MB, 1 GB (powers of 1000, as the configs write them).
pub(super) fn bytes_label(v: f64) -> String {
    let (div, unit) = if v >= 1e9 {
        (1e9, "GB")
    } else if v >= 1e6 {
        (1e6, "MB")
    } else if v >= 1e3 {
        (1e3, "KB")
    } else {
        (1.0, "B")
    };
    format!("{} {unit}", number_label((v / div * 1e6).round() / 1e6))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(lo: f64, hi: f64) -> Vec<f64> {
        log_ticks(lo, hi)
            .into_iter()
            .filter(|t| t.label)
            .map(|t| t.value)
            .collect()
    }

    #[test]
    fn log_axes_label_1_2_5_up_to_three_decades_and_decades_beyond() {
        // 1..100: every 1..9 x 10^k is a tick, 1, 2 and 5 are labelled.
        let t = log_ticks(0.0, 2.0);
        assert_eq!(t.len(), 19);
        assert_eq!(
            labels(0.0, 2.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        // An axis that starts inside a decade: 300..8000.
        let (lo, hi) = (300f64.log10(), 8000f64.log10());
        assert_eq!(labels(lo, hi), vec![500.0, 1000.0, 2000.0, 5000.0]);
        assert_eq!(log_ticks(lo, hi).first().unwrap().value, 300.0);
        assert_eq!(log_ticks(lo, hi).last().unwrap().value, 8000.0);
        // Five decades: decades only, minor ticks kept unlabelled.
        assert_eq!(labels(0.0, 5.0), vec![1.0, 10.0, 100.0, 1e3, 1e4, 1e5]);
        assert_eq!(log_ticks(0.0, 5.0).len(), 46);
        // Below one, and degenerate spans.
        assert_eq!(labels(-1.0, 0.0), vec![0.1, 0.2, 0.5, 1.0]);
        assert!(log_ticks(1.0, 1.0).is_empty());
        assert!(log_ticks(f64::NAN, 1.0).is_empty());
    }

    #[test]
    fn tick_labels_read_as_numbers_and_sizes() {
        assert_eq!(number_label(20.0), "20");
        assert_eq!(number_label(10f64.powf(0.2f64.log10())), "0.2");
        assert_eq!(number_label(5000.0), "5000");
        assert_eq!(bytes_label(500.0), "500 B");
        assert_eq!(bytes_label(2000.0), "2 KB");
        assert_eq!(bytes_label(1e7), "10 MB");
        assert_eq!(bytes_label(2.5e5), "250 KB");
        assert_eq!(bytes_label(3e9), "3 GB");
    }
}
