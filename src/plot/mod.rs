//! Figures: `[[plot]]` sections of an experiment turn its runs into a table and an SVG chart.
//!
//! A plot names a sweep axis for x, a per-class summary metric for y, and a size class. Runs
//! are grouped into series by scheme (and optionally by a second axis), the metric is averaged
//! over seeds, and each point also records the minimum and maximum over seeds. Charts are SVG
//! only (plotters' SVG backend, no system font libraries), drawn as lines with markers and
//! min–max whiskers, one colour per series, with a legend.

mod attribution;
pub use crate::config::plot as spec;
mod ticks;
pub use attribution::{attribution_bars, attribution_csv, draw_attribution};

pub use spec::{PlotKind, PlotSpec, SIZE_STATS};

use crate::report::CsvTable;
use crate::sweep::value_text;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use ticks::{bytes_label, log_ticks, number_label};

/// Distinct series colours (ColorBrewer Set1, then black).
const COLORS: [(u8, u8, u8); 11] = [
    (228, 26, 28),
    (55, 126, 184),
    (77, 175, 74),
    (152, 78, 163),
    (255, 127, 0),
    (166, 86, 40),
    (247, 129, 191),
    (120, 120, 120),
    (0, 0, 0),
    (23, 190, 207),
    (188, 189, 34),
];

/// One aggregated point.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub x_text: String,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// Series name → points sorted by x.
pub type Series = BTreeMap<String, Vec<Point>>;

/// One row of an experiment's `summary.csv`: a run's summary of one class.
#[derive(Clone, Debug)]
pub struct Row {
    pub run: String,
    pub scheme: String,
    /// Sweep axis values by full key.
    pub axes: Vec<(String, toml::Value)>,
    pub class: String,
    /// Numeric columns by name (empty cells are NaN).
    pub values: BTreeMap<String, f64>,
}

impl Row {
    fn axis(&self, key: &str) -> Option<&toml::Value> {
        self.axes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Reads an experiment `summary.csv`; `axes` are the experiment's sweep keys (the CSV names
/// them by their last segment).
pub fn read_summary(text: &str, axes: &[String]) -> Result<Vec<Row>, String> {
    let (header, records) =
        crate::report::read_csv(text).map_err(|e| format!("summary.csv: {e}"))?;
    let col = |n: &str| header.iter().position(|h| *h == n);
    let (Some(ci_run), Some(ci_scheme), Some(ci_seed), Some(ci_class)) =
        (col("run"), col("scheme"), col("seed"), col("class"))
    else {
        return Err("summary.csv lacks run/scheme/seed/class columns".into());
    };
    let axis_cols: Vec<(usize, String)> = (ci_seed + 1..ci_class)
        .map(|i| {
            let name = &header[i];
            let key = axes
                .iter()
                .find(|k| crate::sweep::axis_column(k) == *name)
                .cloned()
                .unwrap_or_else(|| name.to_string());
            (i, key)
        })
        .collect();
    let parse_value = |t: &str| -> toml::Value {
        if let Ok(i) = t.parse::<i64>() {
            toml::Value::Integer(i)
        } else if let Ok(x) = t.parse::<f64>() {
            toml::Value::Float(x)
        } else if let Ok(b) = t.parse::<bool>() {
            toml::Value::Boolean(b)
        } else {
            toml::Value::String(t.to_string())
        }
    };
    let mut rows = Vec::new();
    for f in &records {
        let values = header
            .iter()
            .enumerate()
            .skip(ci_class + 1)
            .map(|(i, h)| (h.clone(), f[i].parse::<f64>().unwrap_or(f64::NAN)))
            .collect();
        rows.push(Row {
            run: f[ci_run].to_string(),
            scheme: f[ci_scheme].to_string(),
            axes: axis_cols
                .iter()
                .map(|(i, k)| (k.clone(), parse_value(&f[*i])))
                .collect(),
            class: f[ci_class].to_string(),
            values,
        });
    }
    Ok(rows)
}

/// Groups runs into series and averages over seeds.
pub fn aggregate(
    spec: &PlotSpec,
    rows: &[Row],
    scheme_order: &[String],
) -> Vec<(String, Vec<Point>)> {
    // key: (series name, x text) -> values
    let mut acc: BTreeMap<(usize, String, String), (f64, Vec<f64>)> = BTreeMap::new();
    let mut x_pos: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.class == spec.class) {
        let scheme = &r.scheme;
        if !spec.shows(scheme) {
            continue;
        }
        let Some(xv) = r.axis(&spec.x) else {
            continue;
        };
        let x_text = value_text(xv);
        let x_num = xv.as_float().or_else(|| xv.as_integer().map(|i| i as f64));
        let x = match x_num {
            Some(v) => v,
            None => {
                if !x_pos.contains(&x_text) {
                    x_pos.push(x_text.clone());
                }
                x_pos.iter().position(|t| *t == x_text).unwrap() as f64
            }
        };
        let name = match &spec.series {
            Some(k) => format!(
                "{} {}={}",
                scheme,
                spec.series_name
                    .as_deref()
                    .unwrap_or_else(|| k.rsplit('.').next().unwrap_or(k)),
                r.axis(k).map(value_text).unwrap_or_default()
            ),
            None => scheme.clone(),
        };
        let order = scheme_order
            .iter()
            .position(|s| s == scheme)
            .unwrap_or(usize::MAX);
        let Some(&v) = r.values.get(&spec.y) else {
            continue;
        };
        if v.is_nan() {
            continue;
        }
        acc.entry((order, name, x_text))
            .or_insert((x, Vec::new()))
            .1
            .push(v);
    }
    let mut out: Vec<(String, Vec<Point>)> = Vec::new();
    for ((_, name, x_text), (x, vals)) in acc {
        let n = vals.len();
        let mean = vals.iter().sum::<f64>() / n as f64;
        let min = vals.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let p = Point {
            x,
            x_text,
            mean,
            min,
            max,
            n,
        };
        match out.iter_mut().find(|(s, _)| *s == name) {
            Some((_, v)) => v.push(p),
            None => out.push((name, vec![p])),
        }
    }
    for (_, pts) in out.iter_mut() {
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    out
}

/// The table of a plot as CSV: `series,x,mean,min,max,seeds`.
pub fn table_csv(spec: &PlotSpec, series: &[(String, Vec<Point>)]) -> String {
    let y = &spec.y;
    let mut t = CsvTable::new([
        "series".to_string(),
        spec.x.rsplit('.').next().unwrap_or(&spec.x).to_string(),
        format!("{y}_mean"),
        format!("{y}_min"),
        format!("{y}_max"),
        "seeds".to_string(),
    ]);
    for (name, pts) in series {
        for p in pts {
            t.row([
                name.clone(),
                p.x_text.clone(),
                p.mean.to_string(),
                p.min.to_string(),
                p.max.to_string(),
                p.n.to_string(),
            ]);
        }
    }
    t.finish()
}

/// The same table for the terminal: one row per series, one column per x.
pub fn table_text(spec: &PlotSpec, series: &[(String, Vec<Point>)]) -> String {
    let mut xs: Vec<(f64, String)> = Vec::new();
    for (_, pts) in series {
        for p in pts {
            if !xs.iter().any(|(_, t)| *t == p.x_text) {
                xs.push((p.x, p.x_text.clone()));
            }
        }
    }
    xs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut s = format!(
        "{} — {} [{}], mean over seeds\n{:<28}",
        spec.title,
        spec.y,
        spec.class,
        spec.x.rsplit('.').next().unwrap_or(&spec.x)
    );
    for (_, t) in &xs {
        let _ = write!(s, " {t:>10}");
    }
    s.push('\n');
    for (name, pts) in series {
        let _ = write!(s, "{name:<28}");
        for (_, t) in &xs {
            match pts.iter().find(|p| p.x_text == *t) {
                Some(p) => {
                    let _ = write!(s, " {:>10.2}", p.mean);
                }
                None => {
                    let _ = write!(s, " {:>10}", "-");
                }
            }
        }
        s.push('\n');
    }
    s
}

/// Draws the chart as SVG at `path`.
pub fn draw_svg(
    spec: &PlotSpec,
    series: &[(String, Vec<Point>)],
    path: &Path,
) -> Result<(), String> {
    let pts = || series.iter().flat_map(|(_, p)| p.iter());
    if pts().next().is_none() {
        return Err(format!("{}: no data to plot", spec.file));
    }
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut y1 = 0.0f64;
    let mut ymin_pos = f64::INFINITY;
    for p in pts() {
        x0 = x0.min(p.x);
        x1 = x1.max(p.x);
        y1 = y1.max(p.max);
        if p.min > 0.0 {
            ymin_pos = ymin_pos.min(p.min);
        }
    }
    if x1 <= x0 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = (x1 - x0) * 0.05;
    // A log axis plots log10 of the values on whole decades.
    let log = spec.log_y && ymin_pos.is_finite();
    let (y0, y1) = if log {
        (
            ymin_pos.log10().floor(),
            y1.log10().ceil().max(ymin_pos.log10().floor() + 1.0),
        )
    } else {
        (0.0, if y1 > 0.0 { y1 * 1.08 } else { 1.0 })
    };
    let ty = move |v: f64| if log { v.max(1e-300).log10() } else { v };
    let y_name = if spec.kind == PlotKind::SlowdownVsSize {
        stat_of(spec)
    } else {
        &spec.y
    };
    let metric_label = crate::columns::summary_metrics()
        .into_iter()
        .find(|(m, _)| m == y_name)
        .map(|(_, l)| l.to_string())
        .unwrap_or_else(|| y_name.to_string());
    let log_x = matches!(spec.kind, PlotKind::FctCdf | PlotKind::SlowdownVsSize);
    let (default_x, default_y) = match spec.kind {
        PlotKind::Sweep => (spec.x.clone(), metric_label),
        PlotKind::FctCdf => ("FCT (µs)".to_string(), "fraction of flows".to_string()),
        PlotKind::SlowdownVsSize | PlotKind::Attribution => ("flow size".to_string(), metric_label),
        PlotKind::QueueTimeseries => ("time (µs)".to_string(), "queue (KB)".to_string()),
    };
    let x_label = spec.x_label.clone().unwrap_or(default_x);
    let y_label = spec.y_label.clone().unwrap_or(default_y);
    let e = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = canvas(path)?;
    let (plot_area, legend_area) = root.split_horizontally(CHART_W);
    let mut chart = axes(
        &plot_area,
        &spec.title,
        (x0 - pad)..(x1 + pad),
        y0..y1,
        path,
    )?;
    let fmt_lin = |v: &f64| linear_label(*v);
    // A sweep over values that are not numbers (`uniform(10KB, 20KB)`, scheme variants): the
    // points stand at 0, 1, 2, ... in first-seen order, labelled with their values below.
    let categories = categories(spec, series);
    let fmt_none = |_: &f64| String::new();
    // Log axes get their own ticks and labels (below); the mesh draws their decade grid only.
    let y_fmt: &dyn Fn(&f64) -> String = if log { &fmt_none } else { &fmt_lin };
    let x_fmt: &dyn Fn(&f64) -> String = if log_x || !categories.is_empty() {
        &fmt_none
    } else {
        &fmt_lin
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(x_fmt)
        .y_label_formatter(y_fmt);
    if log {
        mesh.y_labels((y1 - y0) as usize + 1);
    }
    if log_x {
        mesh.x_labels((2.0 * (x1 - x0 + 2.0 * pad)).ceil() as usize + 1);
    }
    mesh.draw().map_err(|x| e(&x))?;
    let tick_style = ("sans-serif", 12).into_font().color(&BLACK);
    let x_is_bytes = spec.kind == PlotKind::SlowdownVsSize;
    if log {
        for t in log_ticks(y0, y1) {
            let (px, py) = chart.backend_coord(&(x0 - pad, t.at));
            let len = if t.label { 6 } else { 3 };
            plot_area
                .draw(&PathElement::new(vec![(px - len, py), (px, py)], BLACK))
                .map_err(|x| e(&x))?;
            if t.label {
                let text = number_label(t.value);
                let (w, h) = plot_area
                    .estimate_text_size(&text, &tick_style)
                    .unwrap_or((0, 0));
                plot_area
                    .draw(&Text::new(
                        text,
                        (px - 9 - w as i32, py - h as i32 / 2),
                        tick_style.clone(),
                    ))
                    .map_err(|x| e(&x))?;
            }
        }
    }
    if log_x {
        for t in log_ticks(x0 - pad, x1 + pad) {
            let (px, py) = chart.backend_coord(&(t.at, y0));
            let len = if t.label { 6 } else { 3 };
            plot_area
                .draw(&PathElement::new(vec![(px, py), (px, py + len)], BLACK))
                .map_err(|x| e(&x))?;
            if t.label {
                let text = if x_is_bytes {
                    bytes_label(t.value)
                } else {
                    number_label(t.value)
                };
                let w = plot_area
                    .estimate_text_size(&text, &tick_style)
                    .map_or(0, |(w, _)| w as i32);
                plot_area
                    .draw(&Text::new(text, (px - w / 2, py + 8), tick_style.clone()))
                    .map_err(|x| e(&x))?;
            }
        }
    }
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    for (x, name) in &categories {
        let (px, py) = chart.backend_coord(&(*x, y0));
        let w = plot_area
            .estimate_text_size(name, &style)
            .map_or(0, |(w, _)| w as i32);
        plot_area
            .draw(&Text::new(
                name.clone(),
                (px - w / 2, py + 6),
                style.clone(),
            ))
            .map_err(|x| e(&x))?;
    }
    for (i, (_, pts)) in series.iter().enumerate() {
        let (r, g, b) = COLORS[i % COLORS.len()];
        let color = RGBColor(r, g, b).to_rgba();
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|p| (p.x, ty(p.mean))),
                color.stroke_width(2),
            ))
            .map_err(|x| e(&x))?;
        if pts.len() <= 60 {
            chart
                .draw_series(
                    pts.iter()
                        .map(|p| Circle::new((p.x, ty(p.mean)), 3, color.filled())),
                )
                .map_err(|x| e(&x))?;
        }
        for p in pts.iter().filter(|p| p.n > 1 && p.max > p.min) {
            chart
                .draw_series(LineSeries::new(
                    vec![(p.x, ty(p.min)), (p.x, ty(p.max))],
                    color,
                ))
                .map_err(|x| e(&x))?;
        }
    }
    let entries: Vec<(String, usize)> = series
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), i))
        .collect();
    draw_legend(&legend_area, &entries, Swatch::Line).map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// The x values of a sweep figure that are not numbers, at their positions (empty when every
/// value is a number).
fn categories(spec: &PlotSpec, series: &[(String, Vec<Point>)]) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    if spec.kind != PlotKind::Sweep {
        return out;
    }
    for p in series.iter().flat_map(|(_, p)| p) {
        if p.x_text.parse::<f64>().is_err() && !out.iter().any(|(_, t)| *t == p.x_text) {
            out.push((p.x, p.x_text.clone()));
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// Width of the figures' plotting part and of the legend panel to its right (the legend never
/// covers data).
const CHART_W: u32 = 760;
const LEGEND_W: u32 = 230;
const FIG_H: u32 = 500;

/// What a legend entry shows beside its name.
enum Swatch {
    Line,
    Block,
}

/// A figure's canvas at `path`: the chart and its legend side by side, on white.
pub(super) fn canvas(path: &Path) -> Result<DrawingArea<SVGBackend<'_>, Shift>, String> {
    let root = SVGBackend::new(path, (CHART_W + LEGEND_W, FIG_H)).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|x| format!("{}: {x}", path.display()))?;
    Ok(root)
}

/// The chart's axes over `x` and `y` in `area`, titled (errors name `path`).
pub(super) fn axes<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    path: &Path,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .map_err(|x| format!("{}: {x}", path.display()))
}

/// A linear tick's label without floating-point noise (0.9, not 0.8999999999999999).
pub(super) fn linear_label(v: f64) -> String {
    let t = format!("{:.6}", v);
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".to_string()
    } else {
        t.to_string()
    }
}

/// Draws a legend of `entries` (name, colour index) into `area`, top-aligned.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, usize)],
    swatch: Swatch,
) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    for (i, (name, c)) in entries.iter().enumerate() {
        let y = 60 + 20 * i as i32;
        let (r, g, b) = COLORS[c % COLORS.len()];
        let color = RGBColor(r, g, b).to_rgba();
        match swatch {
            Swatch::Line => area
                .draw(&PathElement::new(
                    vec![(8, y), (30, y)],
                    color.stroke_width(2),
                ))
                .map_err(|x| e(&x))?,
            Swatch::Block => area
                .draw(&Rectangle::new([(12, y - 6), (26, y + 6)], color.filled()))
                .map_err(|x| e(&x))?,
        }
        area.draw(&Text::new(name.clone(), (36, y - 7), style.clone()))
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

/// One finished flow as the flow-level figures read it from `fct.csv`.
#[derive(Clone, Copy, Debug)]
pub struct FlowPoint {
    pub size: u64,
    pub fct_us: f64,
    pub slowdown: f64,
}

/// Reads the finished flows of `class` ("all", a size class, `tag:<tag>` or
/// `deadline:<mean>`) from a run's `fct.csv`.
pub fn read_flows(text: &str, class: &str) -> Result<Vec<FlowPoint>, String> {
    let (header, records) = crate::report::read_csv(text).map_err(|e| format!("fct.csv: {e}"))?;
    let col = |n: &str| {
        header
            .iter()
            .position(|h| *h == n)
            .ok_or(format!("fct.csv lacks column {n}"))
    };
    let (ci_size, ci_fct, ci_sd) = (col("size_bytes")?, col("fct_ps")?, col("slowdown")?);
    // "<b" (the first size class, or a cumulative one): every flow smaller than b.
    let below: Option<u64> = class
        .strip_prefix('<')
        .and_then(|b| b.parse::<crate::units::Bytes>().ok())
        .map(|b| b.0);
    let filter: Option<(usize, &str)> = if class == "all" || below.is_some() {
        None
    } else if let Some(t) = class.strip_prefix("tag:") {
        Some((col("tag")?, t))
    } else if let Some(d) = class.strip_prefix("deadline:") {
        Some((col("deadline_class")?, d))
    } else {
        Some((col("size_class")?, class))
    };
    let mut out = Vec::new();
    for f in &records {
        if let Some((c, v)) = filter
            && f.get(c) != Some(v)
        {
            continue;
        }
        let (Some(Ok(size)), Some(Ok(fct)), Some(Ok(sd))) = (
            f.get(ci_size).map(|x| x.parse::<u64>()),
            f.get(ci_fct).map(|x| x.parse::<f64>()),
            f.get(ci_sd).map(|x| x.parse::<f64>()),
        ) else {
            continue; // unfinished
        };
        if below.is_some_and(|b| size >= b) {
            continue;
        }
        out.push(FlowPoint {
            size,
            fct_us: fct / 1e6,
            slowdown: sd,
        });
    }
    Ok(out)
}

/// Nearest-rank percentile of sorted values.
fn rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let k = ((p * n as f64).ceil() as usize).clamp(1, n);
    sorted[k - 1]
}

/// The CDF of FCTs as at most 400 points (x = log10 of the FCT in us, y = fraction).
pub fn fct_cdf(flows: &[FlowPoint]) -> Vec<Point> {
    let mut v: Vec<f64> = flows
        .iter()
        .map(|f| f.fct_us)
        .filter(|x| *x > 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let m = n.min(400);
    (0..m)
        .map(|i| {
            let k = if m == 1 { n - 1 } else { i * (n - 1) / (m - 1) };
            let q = (k + 1) as f64 / n as f64;
            Point {
                x: v[k].log10(),
                x_text: format!("{}", v[k]),
                mean: q,
                min: q,
                max: q,
                n: 1,
            }
        })
        .collect()
}

/// `stat` of the slowdown in `bins` equal-count bins of flow size (x = log10 of the bin's
/// median size; `n` = flows in the bin).
pub fn slowdown_by_size(flows: &[FlowPoint], bins: usize, stat: &str) -> Vec<Point> {
    let mut v: Vec<FlowPoint> = flows.to_vec();
    v.sort_by_key(|f| f.size);
    let n = v.len();
    let bins = bins.min(n).max(1);
    let mut out = Vec::new();
    for b in 0..bins {
        let (lo, hi) = (b * n / bins, (b + 1) * n / bins);
        if hi <= lo {
            continue;
        }
        let chunk = &v[lo..hi];
        let mut sd: Vec<f64> = chunk.iter().map(|f| f.slowdown).collect();
        sd.sort_by(f64::total_cmp);
        let y = match stat {
            "avg_slowdown" => sd.iter().sum::<f64>() / sd.len() as f64,
            "p50_slowdown" => rank(&sd, 0.5),
            "p999_slowdown" => rank(&sd, 0.999),
            _ => rank(&sd, 0.99),
        };
        let size = chunk[chunk.len() / 2].size.max(1);
        out.push(Point {
            x: (size as f64).log10(),
            x_text: size.to_string(),
            mean: y,
            min: y,
            max: y,
            n: chunk.len(),
        });
    }
    out
}

/// The table of a flow-level figure as CSV.
pub fn flow_table_csv(spec: &PlotSpec, series: &[(String, Vec<Point>)]) -> String {
    let cdf = spec.kind == PlotKind::FctCdf;
    let mut t = match cdf {
        true => CsvTable::new(["series", "fct_us", "cdf"]),
        false => CsvTable::new(["series", "size_bytes", stat_of(spec), "flows"]),
    };
    for (name, pts) in series {
        for p in pts {
            let mut row = vec![name.clone(), p.x_text.clone(), p.mean.to_string()];
            if !cdf {
                row.push(p.n.to_string());
            }
            t.row(row);
        }
    }
    t.finish()
}

/// The statistic of a `slowdown_vs_size` figure.
pub fn stat_of(spec: &PlotSpec) -> &str {
    if spec.y.is_empty() {
        "p99_slowdown"
    } else {
        &spec.y
    }
}

/// Whether summary row axes match a figure's `at` selection.
pub fn row_at(spec: &PlotSpec, row: &Row) -> bool {
    spec.at.iter().all(|(k, v)| {
        row.axis(k)
            .is_some_and(|rv| value_text(rv) == value_text(v))
    })
}

impl PlotSpec {
    /// Whether the figure shows `scheme` (its `schemes` list, or every scheme).
    pub fn shows(&self, scheme: &str) -> bool {
        self.schemes
            .as_ref()
            .is_none_or(|s| s.iter().any(|x| x == scheme))
    }
}

/// The `class` rows of `scheme`'s runs at the figure's sweep point `at`, in file order.
pub fn rows_at<'a>(
    spec: &'a PlotSpec,
    rows: &'a [Row],
    scheme: &'a str,
    class: &'a str,
) -> impl Iterator<Item = &'a Row> + 'a {
    rows.iter()
        .filter(move |r| r.scheme == scheme && r.class == class && row_at(spec, r))
}

/// A run's queue series from its `ts_queues.csv`: (time in us, KB) steps of port `port` (or
/// the port with the highest sample), priorities summed; and the port chosen.
pub fn queue_series(text: &str, port: Option<u32>) -> Result<(u32, Vec<Point>), String> {
    let (header, records) =
        crate::report::read_csv(text).map_err(|e| format!("ts_queues.csv: {e}"))?;
    if header.join(",") != "time_ps,port,node,prio,queue_bytes,paused" {
        return Err(format!(
            "unexpected ts_queues.csv header `{}`",
            header.join(",")
        ));
    }
    // (time, port, prio, bytes), in file order (time order).
    let mut rows: Vec<(u64, u32, u32, u64)> = Vec::new();
    for f in &records {
        let p = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
        if let (Some(t), Some(pt), Some(q), Some(b)) = (p(0), p(1), p(3), p(4)) {
            rows.push((t, pt as u32, q as u32, b));
        }
    }
    let port = match port {
        Some(p) => p,
        None => rows
            .iter()
            .max_by_key(|r| (r.3, std::cmp::Reverse(r.1)))
            .map(|r| r.1)
            .ok_or("no queue samples")?,
    };
    // Rows are written on change per (port, prio): keep each priority's last value and emit
    // the sum at every time any of them changed, as steps.
    let mut cur: std::collections::BTreeMap<u32, u64> = BTreeMap::new();
    let mut pts: Vec<Point> = Vec::new();
    let mut i = 0;
    let mine: Vec<&(u64, u32, u32, u64)> = rows.iter().filter(|r| r.1 == port).collect();
    while i < mine.len() {
        let t = mine[i].0;
        while i < mine.len() && mine[i].0 == t {
            cur.insert(mine[i].2, mine[i].3);
            i += 1;
        }
        let kb = cur.values().sum::<u64>() as f64 / 1000.0;
        let x = t as f64 / 1e6;
        if let Some(last) = pts.last().map(|p| p.mean) {
            pts.push(Point {
                x,
                x_text: format!("{x}"),
                mean: last,
                min: last,
                max: last,
                n: 1,
            });
        }
        pts.push(Point {
            x,
            x_text: format!("{x}"),
            mean: kb,
            min: kb,
            max: kb,
            n: 1,
        });
    }
    if pts.is_empty() {
        return Err(format!("no samples of port {port}"));
    }
    Ok((port, pts))
}

/// The table of a queue time-series figure: `series,time_us,queue_kb` (steps).
pub fn queue_table_csv(series: &[(String, Vec<Point>)]) -> String {
    let mut t = CsvTable::new(["series", "time_us", "queue_kb"]);
    for (name, pts) in series {
        for p in pts {
            t.row([name.clone(), p.x_text.clone(), p.mean.to_string()]);
        }
    }
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows() -> Vec<FlowPoint> {
        (1..=100)
            .map(|i| FlowPoint {
                size: i * 1000,
                fct_us: i as f64,
                slowdown: (101 - i) as f64,
            })
            .collect()
    }

    #[test]
    fn cdf_is_monotone_and_ends_at_one() {
        let c = fct_cdf(&flows());
        assert_eq!(c.len(), 100);
        assert!(
            c.windows(2)
                .all(|w| w[0].x <= w[1].x && w[0].mean < w[1].mean)
        );
        assert_eq!(c.last().unwrap().mean, 1.0);
        assert_eq!(c[0].mean, 0.01);
        assert_eq!(c[0].x_text, "1");
    }

    #[test]
    fn size_bins_have_equal_counts_and_right_stats() {
        let b = slowdown_by_size(&flows(), 4, "p50_slowdown");
        assert_eq!(b.len(), 4);
        assert!(b.iter().all(|p| p.n == 25));
        // First bin: sizes 1..=25 KB, slowdowns 100..=76; nearest-rank median = 88.
        assert_eq!(b[0].mean, 88.0);
        assert_eq!(b[0].x_text, "13000");
        let a = slowdown_by_size(&flows(), 1, "avg_slowdown");
        assert_eq!(a[0].mean, 50.5);
        let p = slowdown_by_size(&flows(), 1, "p99_slowdown");
        assert_eq!(p[0].mean, 99.0);
    }

    #[test]
    fn read_flows_filters_classes_and_skips_unfinished() {
        let text = "flow_id,size_bytes,fct_ps,slowdown,size_class,tag,deadline_class\n\
                    0,1000,2000000,2.0,<50KB,query,20ms\n\
                    1,2000,,,<50KB,query,20ms\n\
                    2,90000,9000000,1.5,>=50KB,background,\n";
        assert_eq!(read_flows(text, "all").unwrap().len(), 2);
        assert_eq!(read_flows(text, "tag:query").unwrap().len(), 1);
        assert_eq!(read_flows(text, ">=50KB").unwrap()[0].fct_us, 9.0);
        assert_eq!(read_flows(text, "deadline:20ms").unwrap().len(), 1);
    }

    fn spec(toml_text: &str) -> PlotSpec {
        toml::from_str(toml_text).unwrap()
    }

    fn series(xs: &[f64]) -> Vec<(String, Vec<Point>)> {
        let pts = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| Point {
                x: x.log10(),
                x_text: format!("{x}"),
                mean: (i + 1) as f64 / xs.len() as f64,
                min: 0.0,
                max: 1.0,
                n: 1,
            })
            .collect();
        vec![("DCTCP".to_string(), pts)]
    }

    /// The text elements of an SVG file, trimmed.
    fn svg_texts(p: &Path) -> Vec<String> {
        let svg = std::fs::read_to_string(p).unwrap();
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some(body.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn figures_carry_their_log_tick_labels_and_units() {
        let dir = std::env::temp_dir().join(format!("dcsim-plot-ticks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // FCT CDF over 10..1000 us: 1-2-5 labels, microseconds spelled with µ.
        let s = spec("file = \"cdf.svg\"\ntitle = \"t\"\nkind = \"fct_cdf\"\n");
        let p = dir.join("cdf.svg");
        draw_svg(&s, &series(&[10.0, 30.0, 100.0, 400.0, 1000.0]), &p).unwrap();
        let texts = svg_texts(&p);
        for l in ["20", "50", "200", "500", "FCT (µs)"] {
            assert!(
                texts.iter().any(|t| t == l),
                "no {l} in the CDF figure: {texts:?}"
            );
        }
        // Slowdown by size over 1 KB..10 MB: sizes in units, not raw byte counts.
        let s = spec("file = \"sd.svg\"\ntitle = \"t\"\nkind = \"slowdown_vs_size\"\n");
        let p = dir.join("sd.svg");
        draw_svg(&s, &series(&[1e3, 1e4, 1e5, 1e6, 1e7]), &p).unwrap();
        let texts = svg_texts(&p);
        for l in ["1 KB", "100 KB", "10 MB", "flow size"] {
            assert!(
                texts.iter().any(|t| t == l),
                "no {l} in the size figure: {texts:?}"
            );
        }
        assert!(!texts.iter().any(|t| t == "10000000"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
