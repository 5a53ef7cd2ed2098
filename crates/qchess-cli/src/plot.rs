//! `qchess plot`: `qchess bench sim --json` lines in, an SVG of scaling charts out.
//!
//! Two panels share the state-count axis (logarithmic): the time of one operation and the
//! throughput in states per second (both logarithmic), one line per operation and thread
//! count. Lines of other benchmarks (`qchess bench game`) are skipped; blank lines too. The
//! drawing is the `plotters` crate's SVG backend.

use crate::error::CliError;
use clap::Args;
use plotters::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `qchess plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// JSON lines of `qchess bench sim ... --json` (`-` for standard input).
    #[arg(long)]
    pub input: PathBuf,
    /// Where to write the SVG chart.
    #[arg(long)]
    pub out: PathBuf,
    /// The chart's title.
    #[arg(long, default_value = "qchess-sim scaling")]
    pub title: String,
}

/// One measured run.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Basis states of the input.
    pub states: f64,
    /// Seconds of one operation.
    pub seconds: f64,
    /// States per second.
    pub per_sec: f64,
}

/// The runs of one operation at one thread count, keyed `"split, 2 threads"`.
pub type Series = BTreeMap<String, Vec<Point>>;

/// Runs `qchess plot`.
pub fn run(args: &PlotArgs) -> Result<(), CliError> {
    let text = if args.input.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(&args.input)
            .map_err(|e| CliError::usage(format!("cannot read {}: {e}", args.input.display())))?
    };
    if args.out.extension().and_then(|e| e.to_str()) != Some("svg") {
        return Err(CliError::usage(format!(
            "--out {}: the chart is an SVG file (name it *.svg)",
            args.out.display()
        )));
    }
    let series = parse(&text)?;
    let svg = chart(&series, &args.title)?;
    std::fs::write(&args.out, svg)
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", args.out.display())))
}

/// The simulator runs of `text`, grouped by operation and thread count, sorted by size.
pub fn parse(text: &str) -> Result<Series, CliError> {
    let mut series = Series::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| CliError::usage(format!("line {n}: invalid JSON: {e}")))?;
        if v.get("bench").is_some() {
            continue; // another benchmark's line (qchess bench game)
        }
        let num = |key: &str| {
            v.get(key)
                .and_then(Value::as_f64)
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| {
                    CliError::usage(format!(
                        "line {n}: \"{key}\" must be a positive number (a qchess bench sim \
                         --json line has op, states, threads, seconds, states_per_sec)"
                    ))
                })
        };
        let op = v
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| CliError::usage(format!("line {n}: \"op\" must be a string")))?;
        let threads = num("threads")?;
        let point = Point {
            states: num("states")?,
            seconds: num("seconds")?,
            per_sec: num("states_per_sec")?,
        };
        let plural = if threads == 1.0 { "" } else { "s" };
        series
            .entry(format!("{op}, {threads} thread{plural}"))
            .or_default()
            .push(point);
    }
    if series.is_empty() {
        return Err(CliError::usage(
            "no qchess bench sim --json lines in the input: nothing to plot",
        ));
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.states.total_cmp(&b.states));
    }
    Ok(series)
}

/// A logarithmic range holding every value, widened by a little on both sides.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    lo / 1.5..hi * 1.5
}

/// The SVG text of the two scaling panels.
pub fn chart(series: &Series, title: &str) -> Result<String, CliError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1280, 560)).into_drawing_area();
        draw(&root, series, title).map_err(|e| CliError::failure(format!("plotting: {e}")))?;
        root.present()
            .map_err(|e| CliError::failure(format!("plotting: {e}")))?;
    }
    Ok(svg)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    series: &Series,
    title: &str,
) -> DrawResult {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    let panels = root.split_evenly((1, 2));
    let all = || series.values().flatten();
    let x = log_range(all().map(|p| p.states));
    type Pick = fn(&Point) -> f64;
    let specs: [(&str, &str, Pick); 2] = [
        ("time of one operation", "seconds", |p| p.seconds),
        ("throughput", "states per second", |p| p.per_sec),
    ];
    for (k, (panel, (caption, y_desc, pick))) in panels.iter().zip(specs).enumerate() {
        let y = log_range(all().map(pick));
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x.clone().log_scale(), y.log_scale())?;
        chart
            .configure_mesh()
            .x_desc("basis states")
            .y_desc(y_desc)
            .x_label_formatter(&|v| format!("{v:.0e}"))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()?;
        for (i, (name, points)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.states, pick(p))),
                    color.stroke_width(2),
                ))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.states, pick(p)), 3, color.filled())),
            )?;
        }
        if k > 0 {
            continue; // both panels use the same colours: one legend, on the first
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = r#"{"op":"split","states":1000,"threads":1,"seconds":0.00001,"states_per_sec":1e8}
{"bench":"game","seed":1}

{"op":"split","states":100,"threads":1,"seconds":0.000001,"states_per_sec":1e8}
{"op":"iswap","states":1000,"threads":2,"seconds":0.000005,"states_per_sec":2e8}"#;

    #[test]
    fn groups_by_op_and_threads_sorted_by_size() {
        let s = parse(LINES).unwrap();
        assert_eq!(
            s.keys().collect::<Vec<_>>(),
            vec!["iswap, 2 threads", "split, 1 thread"]
        );
        let split = &s["split, 1 thread"];
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].states, 100.0);
        assert_eq!(split[1].per_sec, 1e8);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse("{\"op\":\"split\"}").unwrap_err();
        assert!(
            e.message.contains("line 1") && e.message.contains("threads"),
            "{e}"
        );
        let e = parse("x").unwrap_err();
        assert!(e.message.contains("line 1: invalid JSON"), "{e}");
        let e = parse("{\"bench\":\"game\"}").unwrap_err();
        assert!(e.message.contains("nothing to plot"));
        let e = parse(
            "{\"op\":\"split\",\"states\":0,\"threads\":1,\"seconds\":1,\"states_per_sec\":1}",
        )
        .unwrap_err();
        assert!(
            e.message.contains("\"states\" must be a positive number"),
            "{e}"
        );
    }

    #[test]
    fn draws_one_line_per_series_in_both_panels() {
        let svg = chart(&parse(LINES).unwrap(), "t").unwrap();
        assert!(svg.starts_with("<svg"));
        // One marker per run (three runs) in each of the two panels.
        assert_eq!(svg.matches("<circle").count(), 6);
        assert!(svg.contains("split, 1 thread") && svg.contains("iswap, 2 threads"));
        assert!(svg.contains("states per second") && svg.contains("basis states"));
    }
}
