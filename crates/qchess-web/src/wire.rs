//! The JSON shapes that `qchess eval` and this server's API share (docs/web.md: "the same
//! fields as `qchess eval`"), written once: a Niel's move outcome, a Niel's position's pieces,
//! pairs, groups and status, and an Akl turn.
//!
//! ```
//! use qchess_web::wire::{akl_letter, niels_mark};
//! assert_eq!(akl_letter(qchess_board::PieceKind::Knight), "N");
//! assert_eq!(niels_mark(qchess_niels::Mark::Blue), "blue");
//! ```

use qchess_akl::{TurnEntry, TypeSet};
use qchess_board::{Color, PieceKind, Square};
use qchess_niels::{
    Diagonal, DrawReason, Fraction, Mark, MoveOutcome, Occupant, PairId, Position, Rules, Status,
    group_outcomes,
};
use serde_json::{Map, Value, json};

/// `"w"` or `"b"`.
pub fn side(c: Color) -> &'static str {
    if c == Color::White { "w" } else { "b" }
}

/// A Niel's mark's name: `"red"` or `"blue"`.
pub fn niels_mark(m: Mark) -> &'static str {
    match m {
        Mark::Red => "red",
        Mark::Blue => "blue",
    }
}

/// A Niel's move outcome: `{"rolls": [{"player", "value"}], "collapses": [{"piece",
/// "square", "mark"}], "capture_attempted", "captured", "tunnelled", "aborted"}`.
pub fn niels_outcome(o: &MoveOutcome) -> Value {
    json!({
        "rolls": o.rolls.iter().map(|r| json!({"player": side(r.player), "value": r.value})).collect::<Vec<_>>(),
        "collapses": o.collapses.iter().map(|c| json!({
            "piece": c.piece.fen_char().to_string(), "square": c.square.to_string(), "mark": niels_mark(c.mark)
        })).collect::<Vec<_>>(),
        "capture_attempted": o.capture_attempted,
        "captured": o.captured.map(|p| p.fen_char().to_string()),
        "tunnelled": o.tunnelled,
        "aborted": o.aborted,
    })
}

/// A Niel's game status's name: `"ongoing"`, `"checkmate"`, `"stalemate"`,
/// `"insufficient_material"`, `"fifty_moves"` or `"repetition"`.
pub fn niels_status(status: Status) -> &'static str {
    match status {
        Status::Ongoing => "ongoing",
        Status::Checkmate { .. } => "checkmate",
        Status::Draw(DrawReason::Stalemate) => "stalemate",
        Status::Draw(DrawReason::InsufficientMaterial) => "insufficient_material",
        Status::Draw(DrawReason::FiftyMoves) => "fifty_moves",
        Status::Draw(DrawReason::Repetition) => "repetition",
    }
}

/// A Niel's pair's name in answers: its piece letter and pattern (`"Nro"`), or `""` for an
/// id the position does not hold.
fn niels_pair_name(pos: &Position, id: PairId) -> String {
    pos.pair(id).map_or(String::new(), |p| {
        format!("{}{}", p.piece.fen_char(), p.pattern)
    })
}

/// A Niel's position's conventional pieces: square name -> FEN letter.
pub fn niels_pieces(pos: &Position) -> Map<String, Value> {
    let mut pieces = Map::new();
    for sq in Square::ALL {
        if let Some(Occupant::Piece(p)) = pos.occupant(sq) {
            pieces.insert(sq.to_string(), json!(p.fen_char().to_string()));
        }
    }
    pieces
}

/// A Niel's position's indefinite pairs, one object each: `"id"`, `"piece"`, its `"red"` and
/// `"blue"` squares, `"facings"`, `"kind"` (`"equal"`, `"phase"` under the Hadamard rules,
/// `"unequal"`), `"diagonal"`, and per square its collapse `"probabilities"` (f64),
/// `"probabilities_exact"` (fractions, as text) and signed `"amplitudes"`, from its
/// entangled group's joint outcomes.
pub fn niels_pairs(pos: &Position, rules: &Rules) -> Vec<Value> {
    pos.pairs()
        .iter()
        .map(|p| {
            let outs = group_outcomes(pos, &pos.group_of(p.id), rules);
            let with = |m: Mark| outs.iter().filter(move |o| o.marks.contains(&(p.id, m)));
            let prob = |m: Mark| -> f64 { with(m).map(|o| o.probability).sum() };
            let exact = |m: Mark| -> String {
                with(m)
                    .fold(Fraction::ZERO, |acc, o| acc + o.probability_exact())
                    .to_string()
            };
            let kind = match (p.facings.is_equal(), rules.hadamard) {
                (true, _) => "equal",
                (false, true) => "phase",
                (false, false) => "unequal",
            };
            let amp = |m: Mark| p.facings.of(m).sign() * prob(m).sqrt();
            let (red, blue) = (p.red.to_string(), p.blue.to_string());
            json!({
                "id": niels_pair_name(pos, p.id),
                "piece": p.piece.fen_char().to_string(),
                "red": red,
                "blue": blue,
                "facings": p.facings.to_string(),
                "kind": kind,
                "diagonal": p.diagonal.map(|d| d.to_char().to_string()),
                "probabilities": {red.clone(): prob(Mark::Red), blue.clone(): prob(Mark::Blue)},
                "probabilities_exact": {red.clone(): exact(Mark::Red), blue.clone(): exact(Mark::Blue)},
                "amplitudes": {red: amp(Mark::Red), blue: amp(Mark::Blue)},
            })
        })
        .collect()
}

/// A Niel's position's entangled groups, one per diagonal that holds pairs: `"diagonal"`,
/// the `"pairs"`' names, and the joint `"outcomes"`, each with every pair's `"squares"`,
/// its `"probability"` (f64), `"probability_exact"` (a fraction, as text) and
/// `"amplitude"`.
pub fn niels_groups(pos: &Position, rules: &Rules) -> Vec<Value> {
    let name = |id| niels_pair_name(pos, id);
    Diagonal::ALL
        .iter()
        .filter(|d| !pos.group(**d).is_empty())
        .map(|d| {
            let ids = pos.group(*d);
            let outcomes: Vec<Value> = group_outcomes(pos, &ids, rules)
                .iter()
                .map(|o| {
                    let squares: Map<String, Value> = o
                        .marks
                        .iter()
                        .map(|(id, m)| {
                            (
                                name(*id),
                                json!(pos.pair(*id).map(|p| p.square(*m).to_string())),
                            )
                        })
                        .collect();
                    json!({"squares": squares, "probability": o.probability,
                           "probability_exact": o.probability_exact().to_string(),
                           "amplitude": o.amplitude})
                })
                .collect();
            json!({"diagonal": d.to_char().to_string(),
                   "pairs": ids.iter().map(|id| name(*id)).collect::<Vec<_>>(),
                   "outcomes": outcomes})
        })
        .collect()
}

/// An Akl piece type as its upper-case letter (`"N"`).
pub fn akl_letter(kind: PieceKind) -> String {
    kind.to_char().to_ascii_uppercase().to_string()
}

/// The letters of a set of Akl types, in the set's order.
pub fn akl_letters(set: TypeSet) -> Vec<String> {
    set.iter().map(akl_letter).collect()
}

/// One Akl turn: `{"turn": "moved" | "check_by_collapse" | "no_legal_move", "from",
/// "collapse", "to", "captured", "promotion", "superposed"}`.
pub fn akl_turn(e: &TurnEntry) -> Value {
    let turn = match e.dest {
        Some(_) => "moved",
        None if e.check => "check_by_collapse",
        None => "no_legal_move",
    };
    json!({
        "turn": turn,
        "from": e.from.to_string(),
        "collapse": e.collapse.map(akl_letter),
        "to": e.dest.map(|d| d.to.to_string()),
        "captured": e.dest.and_then(|d| d.capture).map(|c| akl_letter(c.captured)),
        "promotion": e.dest.and_then(|d| d.promotion).map(akl_letter),
        "superposed": e.dest.is_some_and(|d| d.superposed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qchess_niels::{Game, Move};

    /// Fig. 9 of the rule text: a rook pair, a knight pair and a bishop pair entangled on one
    /// group; every pair is at one half, so each square has probability 1/2 and amplitude
    /// +-1/sqrt(2), and the group has two joint outcomes of 1/2.
    #[test]
    fn niels_pairs_and_groups_of_the_fig_9_group() {
        let pos: Position = "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1"
            .parse()
            .unwrap();
        let mut game = Game::from_position(Rules::default(), pos);
        for m in ["f6&f6d5:oo@e4", "e2&c4e2:oo@d5"] {
            let mv: Move = m.parse().unwrap();
            game.play_with_rolls(&mv, &[]).unwrap();
        }
        let (pos, rules) = (game.position(), game.rules());
        let pairs = niels_pairs(pos, rules);
        assert_eq!(pairs.len(), 3);
        let bishop = &pairs[2];
        assert_eq!(bishop["id"], "B1");
        assert_eq!(
            (bishop["red"].as_str(), bishop["blue"].as_str()),
            (Some("c4"), Some("e2"))
        );
        assert_eq!(bishop["kind"], "equal");
        assert_eq!(bishop["diagonal"], "-");
        for sq in ["c4", "e2"] {
            assert_eq!(bishop["probabilities"][sq], 0.5);
            assert_eq!(bishop["probabilities_exact"][sq], "1/2");
            let a = bishop["amplitudes"][sq].as_f64().unwrap();
            assert!(
                (a.abs() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15,
                "{a}"
            );
        }
        let groups = niels_groups(pos, rules);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0]["pairs"], json!(["R1", "n1", "B1"]));
        let outcomes = groups[0]["outcomes"].as_array().unwrap();
        assert_eq!(outcomes.len(), 2);
        for o in outcomes {
            assert_eq!(o["probability"], 0.5);
            assert_eq!(o["probability_exact"], "1/2");
        }
        assert_eq!(outcomes[1]["squares"]["B1"], "c4");
        assert_eq!(niels_pieces(pos)["a4"], "r");
        assert_eq!(niels_status(game.status()), "ongoing");
    }
}
