//! The delay-attribution figure: one stacked bar per scheme of the mean attribution
//! components of a class at a sweep point (means over seeds), and its table. Not here: the
//! attribution itself (`sim::attrib`), which these figures read back from `summary.csv`.

use super::*;

/// Number of delay-attribution components.
const N_ATTR: usize = crate::sim::attrib::Attribution::NAMES.len();

/// Per scheme, the mean over seeds of each attribution component of `spec.class` at `at`.
pub fn attribution_bars(
    spec: &PlotSpec,
    rows: &[Row],
    scheme_order: &[String],
) -> Vec<(String, [f64; N_ATTR])> {
    let mut out = Vec::new();
    for scheme in scheme_order {
        if !spec.shows(scheme) {
            continue;
        }
        let mut v = [0.0; N_ATTR];
        let mut n = 0;
        for r in rows_at(spec, rows, scheme, &spec.class) {
            let vals: Vec<f64> = crate::columns::summary_attribution()
                .iter()
                .map(|(c, _)| r.values.get(c.as_str()).copied().unwrap_or(f64::NAN))
                .collect();
            if vals.iter().any(|x| x.is_nan()) {
                continue;
            }
            n += 1;
            for (a, x) in v.iter_mut().zip(vals) {
                *a += x;
            }
        }
        if n > 0 {
            v.iter_mut().for_each(|a| *a /= n as f64);
            out.push((scheme.clone(), v));
        }
    }
    out
}

/// The table of an attribution figure as CSV.
pub fn attribution_csv(bars: &[(String, [f64; N_ATTR])]) -> String {
    let mut header = vec!["scheme".to_string()];
    header.extend(
        crate::columns::summary_attribution()
            .into_iter()
            .map(|(c, _)| c),
    );
    header.push("total_us".into());
    let mut t = CsvTable::new(header);
    for (name, v) in bars {
        let mut row = vec![name.clone()];
        row.extend(v.iter().map(|x| x.to_string()));
        row.push(v.iter().sum::<f64>().to_string());
        t.row(row);
    }
    t.finish()
}

/// Draws the stacked bars of an attribution figure as SVG at `path`.
pub fn draw_attribution(
    spec: &PlotSpec,
    bars: &[(String, [f64; N_ATTR])],
    path: &Path,
) -> Result<(), String> {
    if bars.is_empty() {
        return Err(format!(
            "{}: no attribution data (runs without [metrics] attribution, or no flows of class {})",
            spec.file, spec.class
        ));
    }
    let top = bars
        .iter()
        .map(|(_, v)| v.iter().sum::<f64>())
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.08;
    let n = bars.len();
    let e = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = canvas(path)?;
    let (plot_area, legend_area) = root.split_horizontally(CHART_W);
    let mut chart = axes(
        &plot_area,
        &spec.title,
        -0.6f64..(n as f64 - 0.4),
        0.0..top,
        path,
    )?;
    let fmt_lin = |v: &f64| linear_label(*v);
    let names: Vec<String> = bars.iter().map(|(s, _)| s.clone()).collect();
    let x_fmt = move |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < names.len() {
            names[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(4 * n + 1)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&fmt_lin)
        .x_desc(spec.x_label.clone().unwrap_or_else(|| "scheme".into()))
        .y_desc(
            spec.y_label
                .clone()
                .unwrap_or_else(|| format!("mean FCT components, {} (µs)", spec.class)),
        )
        .draw()
        .map_err(|x| e(&x))?;
    for k in 0..N_ATTR {
        let (r, g, b) = COLORS[k % COLORS.len()];
        let color = RGBColor(r, g, b).to_rgba();
        let rects: Vec<Rectangle<(f64, f64)>> = bars
            .iter()
            .enumerate()
            .map(|(i, (_, v))| {
                let lo: f64 = v[..k].iter().sum();
                let x = i as f64;
                Rectangle::new([(x - 0.35, lo), (x + 0.35, lo + v[k])], color.filled())
            })
            .collect();
        chart.draw_series(rects).map_err(|x| e(&x))?;
    }
    // Each bar's total above it: the small ones are unreadable on a shared linear axis.
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    for (i, (_, v)) in bars.iter().enumerate() {
        let total: f64 = v.iter().sum();
        let text = if total >= 100.0 {
            format!("{total:.0} us")
        } else {
            format!("{total:.1} us")
        };
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (i as f64 - 0.3, total + top * 0.055),
                style.clone(),
            )))
            .map_err(|x| e(&x))?;
    }
    let entries: Vec<(String, usize)> = crate::columns::ATTRIBUTION
        .iter()
        .enumerate()
        .map(|(k, (_, l))| (l.to_string(), k))
        .collect();
    draw_legend(&legend_area, &entries, Swatch::Block).map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
