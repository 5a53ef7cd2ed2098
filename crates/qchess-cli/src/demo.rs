//! `qchess demo`: the Cantwell paper's Bell states (eq. 45-51) and interference (section 11.2)
//! reproduced through real layer-1 moves (the long move form), each amplitude printed beside
//! the paper's value (with rules-notes E1, E4 and E5 applied where they matter).

use crate::error::CliError;
use clap::Args;
use num_complex::Complex64;
use qchess_cantwell::analysis::{
    BellReadout, ExactReproduction, Reproduction, exact_reproductions, paper_reproductions,
};
use qchess_sim::Exact;
use std::fmt::Write as _;

/// Arguments of `qchess demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Largest accepted |engine - paper| for an amplitude or probability.
    #[arg(long, default_value_t = 1e-12)]
    pub tolerance: f64,
    /// Replay in exact arithmetic (Z[i][1/sqrt2]): print every amplitude and probability
    /// exactly beside the paper's value and check exact equality (no tolerance).
    #[arg(long)]
    pub exact: bool,
}

/// Runs `qchess demo`: prints every step and fails (exit code 1) if anything differs from the
/// paper by more than the tolerance.
pub fn run(args: &DemoArgs) -> Result<(), CliError> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        return Err(CliError::usage(format!(
            "--tolerance must be a non-negative number, got {}",
            args.tolerance
        )));
    }
    if args.exact {
        return run_exact();
    }
    let reproductions = paper_reproductions()
        .map_err(|e| CliError::failure(format!("a paper move failed: {e}")))?;
    let (text, mismatches, checked) = render(&reproductions, args.tolerance);
    print!("{text}");
    if mismatches == 0 {
        println!(
            "RESULT: all {checked} amplitudes and probabilities match the paper (errata E1, E4, E5 applied) to {:e}.",
            args.tolerance
        );
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{mismatches} of {checked} values differ from the paper by more than {:e}",
            args.tolerance
        )))
    }
}

/// The whole report, the number of mismatches and the number of values checked.
fn render(reproductions: &[Reproduction], tolerance: f64) -> (String, usize, usize) {
    let mut out = String::new();
    let (mut mismatches, mut checked) = (0, 0);
    let _ = writeln!(
        out,
        "qchess demo: Cantwell (2019) quantum chess, section 11, replayed through layer-1 moves\n\
         (long form <squares>:<TYPE>:<VARIANT>; amplitudes: engine | paper)\n"
    );
    for (n, r) in reproductions.iter().enumerate() {
        let _ = writeln!(out, "== {}. {} ==", n + 1, r.title);
        let _ = writeln!(out, "   start: {}; basis {}", r.setup, r.basis_label());
        for note in &r.notes {
            let _ = writeln!(out, "   note: {note}");
        }
        for step in &r.steps {
            let _ = writeln!(out, "   {:<28} {}", step.mv, step.equation);
            for row in &step.amplitudes {
                let ok = (row.engine - row.paper).norm() <= tolerance;
                checked += 1;
                mismatches += usize::from(!ok);
                let _ = writeln!(
                    out,
                    "      {:<16} {:>24} | {:<24} {}",
                    r.ket(row.key),
                    complex(row.engine),
                    complex(row.paper),
                    if ok { "ok" } else { "MISMATCH" }
                );
            }
            if step.unlisted_weight > tolerance * tolerance {
                checked += 1;
                mismatches += 1;
                let _ = writeln!(
                    out,
                    "      MISMATCH: weight {:e} on basis states the paper does not list",
                    step.unlisted_weight
                );
            }
            if let Some(bell) = &step.bell {
                out.push_str(&bell_lines(bell));
            }
        }
        for &(square, paper, engine) in &r.probabilities {
            let ok = (paper - engine).abs() <= tolerance;
            checked += 1;
            mismatches += usize::from(!ok);
            let _ = writeln!(
                out,
                "   p({square}) = {engine:.16} | {paper:.16} {}",
                if ok { "ok" } else { "MISMATCH" }
            );
        }
        out.push('\n');
    }
    (out, mismatches, checked)
}

/// `qchess demo --exact`: fails (exit code 1) unless every value equals the paper's exactly.
fn run_exact() -> Result<(), CliError> {
    let reproductions = exact_reproductions()
        .map_err(|e| CliError::failure(format!("a paper move failed: {e}")))?;
    let (text, mismatches, checked) = render_exact(&reproductions);
    print!("{text}");
    if mismatches == 0 {
        println!(
            "RESULT: all {checked} amplitudes and probabilities equal the paper's values exactly \
             (errata E1, E4, E5 applied); the interference term p(a2) of section 11.2 is exactly 0."
        );
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{mismatches} of {checked} values differ from the paper's exact values"
        )))
    }
}

/// The exact report, the number of mismatches and the number of values checked.
fn render_exact(reproductions: &[ExactReproduction]) -> (String, usize, usize) {
    let mut out = String::new();
    let (mut mismatches, mut checked) = (0, 0);
    let _ = writeln!(
        out,
        "qchess demo --exact: Cantwell (2019) section 11 in exact arithmetic, amplitudes in \
         Z[i][1/sqrt2]\n(long form moves; amplitudes: engine | paper, compared with ==)\n"
    );
    for (n, r) in reproductions.iter().enumerate() {
        let f = &r.float;
        let _ = writeln!(out, "== {}. {} ==", n + 1, f.title);
        let _ = writeln!(out, "   start: {}; basis {}", f.setup, f.basis_label());
        for step in &r.steps {
            let norm = if step.norm.to_string() == "1" {
                String::new()
            } else {
                format!(
                    " (engine state kept unnormalised, N = {}; shown / sqrt(N))",
                    step.norm
                )
            };
            let _ = writeln!(out, "   {:<28} {}{norm}", step.mv, step.equation);
            for row in &step.rows {
                let ok = row.engine == row.paper;
                checked += 1;
                mismatches += usize::from(!ok);
                let _ = writeln!(
                    out,
                    "      {:<16} {:>24} | {:<24} {}",
                    f.ket(row.key),
                    complex_exact(row.engine),
                    complex_exact(row.paper),
                    if ok { "exact" } else { "MISMATCH" }
                );
            }
            if step.unlisted > 0 {
                checked += 1;
                mismatches += 1;
                let _ = writeln!(
                    out,
                    "      MISMATCH: {} basis states the paper does not list",
                    step.unlisted
                );
            }
        }
        for (square, paper, engine) in &r.probabilities {
            let ok = paper == engine;
            checked += 1;
            mismatches += usize::from(!ok);
            let _ = writeln!(
                out,
                "   p({square}) = {engine} | {paper} {}",
                if ok { "exact" } else { "MISMATCH" }
            );
        }
        out.push('\n');
    }
    (out, mismatches, checked)
}

/// An exact complex number: `re`, `(im)i` or `re + (im)i`, parts in the `x+y*sqrt2` form.
fn complex_exact(z: num_complex::Complex<Exact>) -> String {
    match (z.re == Exact::ZERO, z.im == Exact::ZERO) {
        (true, true) => "0".to_string(),
        (false, true) => z.re.to_string(),
        (true, false) => format!("({})i", z.im),
        (false, false) => format!("{} + ({})i", z.re, z.im),
    }
}

fn bell_lines(bell: &BellReadout) -> String {
    let m = &bell.measures;
    let (name, value) = m.max();
    format!(
        "      paper: {}\n      Bell measures of ({}, {}): Psi+ {:.6}  Psi- {:.6}  Phi+ {:.6}  Phi- {:.6}  \
         (largest: {name} = {value:.6}); log negativity {:.6}\n",
        bell.paper_names,
        bell.a,
        bell.b,
        m.psi[0],
        m.psi[2],
        m.phi[0],
        m.phi[2],
        bell.log_negativity
    )
}

/// A complex number as the paper writes it: `-0.7071068`, `+0.7071068i`, `0.5-0.5i`.
fn complex(z: Complex64) -> String {
    let clean = |x: f64| if x.abs() < 5e-16 { 0.0 } else { x };
    let (re, im) = (clean(z.re), clean(z.im));
    match (re == 0.0, im == 0.0) {
        (true, true) => "0".to_string(),
        (false, true) => format!("{re:+.10}"),
        (true, false) => format!("{im:+.10}i"),
        (false, false) => format!("{re:+.10}{im:+.10}i"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_matches_the_paper() {
        let reproductions = paper_reproductions().unwrap();
        let (text, mismatches, checked) = render(&reproductions, 1e-12);
        assert_eq!(mismatches, 0, "{text}");
        assert!(checked >= 40);
        assert!(text.contains("p(a1) = 0.7285533905932737"));
        assert!(text.contains("|11>|10000>"));
    }

    #[test]
    fn a_zero_tolerance_still_runs_and_a_bad_one_is_refused() {
        assert!(
            run(&DemoArgs {
                tolerance: f64::NAN,
                exact: false,
            })
            .is_err()
        );
        let reproductions = paper_reproductions().unwrap();
        let (_, _, checked) = render(&reproductions, 0.0);
        assert!(checked > 0);
    }

    #[test]
    fn the_exact_demo_equals_the_paper_exactly() {
        let reproductions = exact_reproductions().unwrap();
        let (text, mismatches, checked) = render_exact(&reproductions);
        assert_eq!(mismatches, 0, "{text}");
        assert!(checked >= 40);
        assert!(
            text.contains("p(a1) = 3/8+1/4*sqrt2 | 3/8+1/4*sqrt2 exact"),
            "{text}"
        );
        assert!(text.contains("p(a2) = 0 | 0 exact"), "{text}");
        assert!(text.contains("(1/2*sqrt2)i"), "{text}");
        assert_eq!(
            complex_exact(num_complex::Complex::new(Exact::new(-2, -1, 2), Exact::ONE)),
            "-1/2-1/4*sqrt2 + (1)i"
        );
    }

    #[test]
    fn complex_numbers_print_like_the_paper() {
        assert_eq!(complex(Complex64::new(0.0, 0.5)), "+0.5000000000i");
        assert_eq!(complex(Complex64::new(-0.25, 0.0)), "-0.2500000000");
        assert_eq!(complex(Complex64::new(0.0, 0.0)), "0");
    }
}
