//! `qchess render`: an SVG picture of a position, or of the position an `eval` answer reports.
//!
//! The input file holds one of:
//! * an `eval` answer line (`{"ok": true, ...}`) of any variant: a Cantwell answer is drawn
//!   from its `probabilities` and `pieces`, a Niel's Chess answer (it has `pairs`) and an Akl
//!   answer (it has `views`) from their serialised `position`;
//! * a serialised Cantwell quantum position (`{"fen": .., "amplitudes": [..]}`);
//! * a position text: a FEN (Cantwell, the default), a Niel's Chess position (`--variant
//!   niels`) or an AKL-FEN (`--variant akl`).
//!
//! A file of several JSON lines (the output of `qchess eval`) is drawn at `--line N` (1 =
//! the first non-blank line). The drawing itself is `qchess_render`'s.

use crate::error::CliError;
use clap::{Args, ValueEnum};
use qchess_board::{Color, Piece, Square};
use qchess_render::CantwellBoard;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The rule system of a position text.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Cantwell quantum chess (a FEN).
    Cantwell,
    /// Niel's Chess (its position text with indefinite halves).
    Niels,
    /// Akl-style quantum chess (an AKL-FEN).
    Akl,
}

/// Whose knowledge an Akl picture shows.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewer {
    /// White's view.
    White,
    /// Black's view.
    Black,
}

/// Who sees which Akl types (as `qchess eval`'s `"visibility"`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum VisibilityArg {
    /// Both players see the same: only revealed types.
    Revealed,
    /// Each player also knows both types of their own pieces.
    OwnPairs,
}

/// Arguments of `qchess render`.
#[derive(Args, Debug)]
pub struct RenderArgs {
    /// The position or eval answer to draw (`-` for standard input).
    #[arg(long)]
    pub input: PathBuf,
    /// Where to write the SVG picture.
    #[arg(long)]
    pub out: PathBuf,
    /// The rule system of a position text (JSON inputs say it themselves).
    #[arg(long, value_enum, default_value = "cantwell")]
    pub variant: Variant,
    /// Which non-blank line of a JSON-lines file to draw (1 = the first).
    #[arg(long, default_value_t = 1)]
    pub line: usize,
    /// Akl: whose view to draw.
    #[arg(long, value_enum, default_value = "white")]
    pub viewer: Viewer,
    /// Akl: who sees which types.
    #[arg(long, value_enum, default_value = "revealed")]
    pub visibility: VisibilityArg,
    /// Niel's Chess: rule options (comma-separated, as `qchess play --rules`); they set the
    /// collapse probabilities written on each half.
    #[arg(long, default_value = "")]
    pub rules: String,
}

/// Runs `qchess render`.
pub fn run(args: &RenderArgs) -> Result<(), CliError> {
    let text = if args.input.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(&args.input)
            .map_err(|e| CliError::usage(format!("cannot read {}: {e}", args.input.display())))?
    };
    let ext = args
        .out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("svg") {
        return Err(CliError::usage(format!(
            "--out {}: only SVG output is written (name the file *.svg)",
            args.out.display()
        )));
    }
    let svg = render_text(&text, args)?;
    std::fs::write(&args.out, svg)
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", args.out.display())))
}

/// The SVG picture of the input `text`.
pub fn render_text(text: &str, args: &RenderArgs) -> Result<String, CliError> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return Err(CliError::usage("the input is empty"));
    }
    if args.line == 0 || args.line > lines.len() {
        return Err(CliError::usage(format!(
            "--line {}: the input has {} non-blank line(s)",
            args.line,
            lines.len()
        )));
    }
    let line = lines[args.line - 1].trim();
    if line.starts_with('{') {
        let value: Value = serde_json::from_str(line)
            .map_err(|e| CliError::usage(format!("line {}: invalid JSON: {e}", args.line)))?;
        let Value::Object(obj) = value else {
            return Err(CliError::usage("a JSON input must be an object"));
        };
        return render_json(line, &obj, args);
    }
    match args.variant {
        Variant::Cantwell => {
            let game = qchess_cantwell::Game::from_fen(line)
                .map_err(|e| CliError::usage(format!("not a FEN: {e}")))?;
            Ok(qchess_render::cantwell(&game))
        }
        Variant::Niels => niels_text(line, args),
        Variant::Akl => akl_text(line, args),
    }
}

fn render_json(
    line: &str,
    obj: &Map<String, Value>,
    args: &RenderArgs,
) -> Result<String, CliError> {
    if obj.get("ok") == Some(&Value::Bool(false)) {
        let message = obj
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(CliError::usage(format!(
            "the eval answer is an error, there is no position to draw: {message}"
        )));
    }
    let position = || {
        obj.get("position")
            .and_then(Value::as_str)
            .ok_or_else(|| CliError::usage("the eval answer has no \"position\" string to draw"))
    };
    if obj.contains_key("amplitudes") {
        let pos = qchess_cantwell::Position::from_json(line)
            .map_err(|e| CliError::usage(format!("bad serialised position: {e}")))?;
        let game = qchess_cantwell::Game::from_position(&pos)
            .map_err(|e| CliError::usage(format!("bad serialised position: {e}")))?;
        Ok(qchess_render::cantwell(&game))
    } else if obj.contains_key("pairs") {
        niels_text(position()?, args)
    } else if obj.contains_key("views") {
        akl_text(position()?, args)
    } else if obj.contains_key("probabilities") {
        cantwell_answer(obj).map(|b| b.to_svg())
    } else {
        Err(CliError::usage(
            "not a position or eval answer: expected \"probabilities\" (Cantwell), \"pairs\" \
             (Niel's Chess), \"views\" (Akl) or \"amplitudes\" (a serialised position)",
        ))
    }
}

/// The picture model of a Cantwell `eval` answer.
fn cantwell_answer(obj: &Map<String, Value>) -> Result<CantwellBoard, CliError> {
    let mut board = CantwellBoard {
        probabilities: [0.0; 64],
        pieces: [None; 64],
        side_to_move: Color::White,
    };
    let Some(Value::Object(probs)) = obj.get("probabilities") else {
        return Err(CliError::usage("\"probabilities\" must be an object"));
    };
    for (name, p) in probs {
        let sq: Square = name
            .parse()
            .map_err(|e| CliError::usage(format!("probabilities.{name}: {e}")))?;
        let p = p
            .as_f64()
            .filter(|p| (0.0..=1.0 + 1e-9).contains(p))
            .ok_or_else(|| {
                CliError::usage(format!("probabilities.{name}: a number from 0 to 1"))
            })?;
        board.probabilities[usize::from(sq.index())] = p;
    }
    if let Some(Value::Object(pieces)) = obj.get("pieces") {
        for (name, letter) in pieces {
            let sq: Square = name
                .parse()
                .map_err(|e| CliError::usage(format!("pieces.{name}: {e}")))?;
            let piece = letter
                .as_str()
                .and_then(|s| {
                    let mut cs = s.chars();
                    match (cs.next(), cs.next()) {
                        (Some(c), None) => Some(c),
                        _ => None,
                    }
                })
                .ok_or_else(|| CliError::usage(format!("pieces.{name}: one letter")))?;
            // `?` (an occupancy-mode piece of unknown type) draws no symbol.
            board.pieces[usize::from(sq.index())] = Piece::from_fen_char(piece);
        }
    }
    board.side_to_move = match obj.get("side_to_move").and_then(Value::as_str) {
        Some("b") => Color::Black,
        _ => Color::White,
    };
    Ok(board)
}

fn niels_text(text: &str, args: &RenderArgs) -> Result<String, CliError> {
    let pos: qchess_niels::Position = text
        .parse()
        .map_err(|e| CliError::usage(format!("not a Niel's Chess position: {e}")))?;
    let rules = qchess_niels::Rules::parse_list(&args.rules)
        .map_err(|e| CliError::usage(format!("--rules: {e}")))?;
    Ok(qchess_render::niels(&pos, &rules))
}

fn akl_text(text: &str, args: &RenderArgs) -> Result<String, CliError> {
    let pos = qchess_akl::AklPosition::parse(text)
        .map_err(|e| CliError::usage(format!("not an AKL-FEN: {e}")))?;
    let rules = qchess_akl::Rules {
        visibility: match args.visibility {
            VisibilityArg::Revealed => qchess_akl::Visibility::Revealed,
            VisibilityArg::OwnPairs => qchess_akl::Visibility::OwnPairs,
        },
    };
    let game = qchess_akl::Game::with_rules(pos, rules);
    let viewer = match args.viewer {
        Viewer::White => Color::White,
        Viewer::Black => Color::Black,
    };
    Ok(qchess_render::akl(&game.view(viewer)))
}
