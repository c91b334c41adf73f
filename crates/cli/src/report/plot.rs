//! Convergence plots: per task, the mean best-so-far of each method by round
//! with a band of ±1 standard error over the seeds (PNG, plotters' bitmap backend).
//!
//! Text is drawn with plotters' `ab_glyph` back end from a font compiled into
//! the binary (`crates/cli/assets`), so the plots need no fontconfig and no
//! system font on the machine that draws them.

use super::results::TaskRuns;
use super::table::format_compact;
use fedhe_stats::Summary;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// DejaVu Sans cut down to ASCII and a few symbols; see `assets/README.md`.
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-subset.ttf");
/// The family name the plots ask for.
const FAMILY: &str = "sans-serif";
/// Line colours: matplotlib's "tab10", distinguishable on white (plotters'
/// `Palette99` starts with a yellow that vanishes on white).
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// Image size in pixels.
const SIZE: (u32, u32) = (960, 600);

/// Registers [`FONT`] under [`FAMILY`] once per process.
fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the embedded plot font does not parse".to_string())
        })
        .clone()
}

/// An axis tick: the compact form without trailing zeros ("800", not "800.00").
fn format_tick(v: f64) -> String {
    let s = format_compact(v);
    if s.contains('e') || !s.contains('.') {
        s
    } else {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// One curve: a method's mean best-so-far and its standard error per round.
pub struct Curve {
    /// Method name (legend).
    pub method: String,
    /// Mean over seeds after each round.
    pub mean: Vec<f64>,
    /// Standard error of that mean (0 with one seed).
    pub standard_error: Vec<f64>,
    /// Number of seeds.
    pub seeds: usize,
}

/// The curves of `task` for `methods` (those that ran on it), round by round.
pub fn curves(task: &TaskRuns, methods: &[String]) -> Vec<Curve> {
    methods
        .iter()
        .filter_map(|m| task.methods.get(m).map(|runs| (m, runs)))
        .map(|(method, runs)| {
            let (mean, standard_error) = (0..task.rounds)
                .map(|round| {
                    let at: Vec<f64> = runs.traces.iter().map(|t| t[round]).collect();
                    // Traces are non-empty and aligned (checked when grouping).
                    let s = Summary::of(&at).unwrap_or(Summary {
                        n: 0,
                        mean: f64::NAN,
                        std: 0.0,
                    });
                    (s.mean, s.standard_error())
                })
                .unzip();
            Curve {
                method: method.clone(),
                mean,
                standard_error,
                seeds: runs.traces.len(),
            }
        })
        .collect()
}

/// Draws `curves` of `task` into the PNG file `path`; `optimum` (when known)
/// is drawn as a horizontal line.
pub fn draw(path: &Path, task: &str, curves: &[Curve], optimum: Option<f64>) -> Result<(), String> {
    register_font()?;
    let rounds = curves.iter().map(|c| c.mean.len()).max().unwrap_or(0);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for c in curves {
        for (m, se) in c.mean.iter().zip(&c.standard_error) {
            lo = lo.min(m - se);
            hi = hi.max(m + se);
        }
    }
    if let Some(o) = optimum {
        lo = lo.min(o);
        hi = hi.max(o);
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(format!("{task}: nothing to plot"));
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        1.0f64.max(0.05 * hi.abs())
    };
    let (lo, hi) = (lo - pad, hi + pad);
    // A single round still needs a non-empty x range.
    let x_max = (rounds as f64).max(2.0);

    let err = |e: &dyn std::fmt::Display| format!("{task}: drawing failed: {e}");
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{task}: mean best-so-far, band = ±1 standard error"),
            (FAMILY, 24),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(96)
        .build_cartesian_2d(1.0..x_max, lo..hi)
        .map_err(|e| err(&e))?;
    let y_format = |v: &f64| format_tick(*v);
    let x_format = |v: &f64| format!("{}", v.round() as i64);
    chart
        .configure_mesh()
        .x_desc("round")
        .y_desc("best objective value so far")
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .y_label_formatter(&y_format)
        .x_label_formatter(&x_format)
        .draw()
        .map_err(|e| err(&e))?;

    for (i, curve) in curves.iter().enumerate() {
        let color = COLOURS[i % COLOURS.len()].to_rgba();
        let points: Vec<(f64, f64, f64)> = curve
            .mean
            .iter()
            .zip(&curve.standard_error)
            .enumerate()
            .map(|(i, (m, s))| ((i + 1) as f64, *m, *s))
            .collect();
        // The band: upper edge left to right, then lower edge back.
        let band: Vec<(f64, f64)> = points
            .iter()
            .map(|(x, m, s)| (*x, m + s))
            .chain(points.iter().rev().map(|(x, m, s)| (*x, m - s)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                band,
                color.mix(0.18).filled(),
            )))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|(x, m, _)| (*x, *m)),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(format!("{} (n = {})", curve.method, curve.seeds))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
    }
    if let Some(o) = optimum {
        chart
            .draw_series(LineSeries::new(
                [(1.0, o), (x_max, o)],
                BLACK.stroke_width(1),
            ))
            .map_err(|e| err(&e))?
            .label(format!("optimum {}", format_compact(o)))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// One line of [`draw_lines`]: a name and its (x, y) points.
pub type Line = (String, Vec<(f64, f64)>);

/// Draws `lines` (y against x, points marked) into the PNG file `path`: the
/// cost plots of `fedhe bench service`.
pub fn draw_lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<(), String> {
    register_font()?;
    let points = lines.iter().flat_map(|(_, p)| p.iter());
    let (x_max, y_max) = points.fold((0.0f64, 0.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    if !(x_max > 0.0 && y_max.is_finite()) {
        return Err(format!("{title}: nothing to plot"));
    }
    let err = |e: &dyn std::fmt::Display| format!("{title}: drawing failed: {e}");
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(96)
        .build_cartesian_2d(0.0..x_max * 1.05, 0.0..(y_max * 1.1).max(1e-9))
        .map_err(|e| err(&e))?;
    let format = |v: &f64| format_tick(*v);
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&format)
        .y_label_formatter(&format)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, points)) in lines.iter().enumerate() {
        let color = COLOURS[i % COLOURS.len()].to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
        chart
            .draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
