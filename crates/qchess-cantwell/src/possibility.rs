//! The possibility equations of the paper's section 8 (eq. 13-37) on the classical layer, with
//! rules-notes D9/D10: from a parsed move string decide the move type and variant, or say why
//! the move is impossible.
//!
//! All equations are written in the paper from White's side; for Black the letters swap case
//! (footnote 8) and "forward" points down the board.

use crate::circuit::{MoveType, OccupancyMove, Variant};
use crate::classical::ClassicalLayer;
use crate::notation::{MoveShape, QcanMove, VariantMark};
use qchess_board::{Color, Piece, PieceKind, Square};

/// A move string the classical layer has accepted as possible (eq. 13 holds).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Classified {
    /// The piece that moves (the letter on the source).
    pub mover: Piece,
    /// The paper's move type.
    pub move_type: MoveType,
    /// Standard (basic), blocked (excluded) or capture, derived from the target (D10).
    pub variant: Variant,
    /// The squares as typed.
    pub shape: MoveShape,
    /// The promotion piece kind, for a pawn reaching the last rank.
    pub promotion: Option<PieceKind>,
    /// The square of the pawn taken en passant.
    pub ep_square: Option<Square>,
    /// For castling: the rook's source and target.
    pub rook: Option<(Square, Square)>,
}

impl Classified {
    /// The layer-1 move (no forced outcome).
    pub fn occupancy_move(&self) -> OccupancyMove {
        let (source, source2, target, target2) = match self.shape {
            MoveShape::Standard { from, to } => (from, None, to, None),
            MoveShape::Split { from, to1, to2 } => (from, None, to1, Some(to2)),
            MoveShape::Merge { from1, from2, to } => (from1, Some(from2), to, None),
        };
        OccupancyMove {
            move_type: self.move_type,
            variant: self.variant,
            source,
            source2,
            target,
            target2,
            promotion: self.promotion.map(|k| k.to_char()),
            forced: None,
        }
    }

    /// Squares the mover lands on when the move proceeds, with the letter each then holds
    /// (the promoted piece on a promotion, the rook on its castling square).
    pub fn landings(&self) -> Vec<(Square, Piece)> {
        let landed = match self.promotion {
            Some(kind) => Piece::new(self.mover.color, kind),
            None => self.mover,
        };
        let mut out: Vec<(Square, Piece)> = self
            .shape
            .targets()
            .into_iter()
            .map(|t| (t, landed))
            .collect();
        if let Some((_, rook_to)) = self.rook {
            out.push((rook_to, Piece::new(self.mover.color, PieceKind::Rook)));
        }
        out
    }

    /// Every square the move involves (sources, targets, e.p. square, castling rook squares),
    /// as a mask: castling rights on any of them are lost (D13).
    pub fn involved_mask(&self) -> u64 {
        let mut m = 0u64;
        for sq in self.shape.sources().into_iter().chain(self.shape.targets()) {
            m |= 1u64 << sq.index();
        }
        if let Some(ep) = self.ep_square {
            m |= 1u64 << ep.index();
        }
        if let Some((a, b)) = self.rook {
            m |= (1u64 << a.index()) | (1u64 << b.index());
        }
        m
    }

    /// Whether this move is a pawn two-step (it sets the e.p. flag when it proceeds).
    pub fn is_two_step(&self) -> bool {
        self.move_type == MoveType::PawnTwoStep
    }
}

/// The direction "forward" for `color`: +1 rank for White, -1 for Black.
fn forward(color: Color) -> i8 {
    match color {
        Color::White => 1,
        Color::Black => -1,
    }
}

/// `valid(t, s, v_s)` of Definition 3 for the non-pawn pieces: the movement pattern on an
/// empty board (castling excluded).
pub fn valid_pattern(kind: PieceKind, s: Square, t: Square) -> bool {
    let df = (t.file() as i8 - s.file() as i8).abs();
    let dr = (t.rank() as i8 - s.rank() as i8).abs();
    if df == 0 && dr == 0 {
        return false;
    }
    match kind {
        PieceKind::Knight => (df == 1 && dr == 2) || (df == 2 && dr == 1),
        PieceKind::King => df <= 1 && dr <= 1,
        PieceKind::Bishop => df == dr,
        PieceKind::Rook => df == 0 || dr == 0,
        PieceKind::Queen => df == dr || df == 0 || dr == 0,
        PieceKind::Pawn => false,
    }
}

/// The squares strictly between `s` and `t` on a shared line or diagonal, as a mask (empty
/// for adjacent squares and for squares on no shared line).
pub fn path_between(s: Square, t: Square) -> u64 {
    let df = t.file() as i8 - s.file() as i8;
    let dr = t.rank() as i8 - s.rank() as i8;
    if !(df == 0 || dr == 0 || df.abs() == dr.abs()) {
        return 0;
    }
    let (sf, sr) = (df.signum(), dr.signum());
    let mut mask = 0u64;
    let mut cur = s;
    while let Some(next) = cur.offset(sf, sr) {
        if next == t {
            break;
        }
        mask |= 1u64 << next.index();
        cur = next;
    }
    mask
}

fn is_slider(kind: PieceKind) -> bool {
    matches!(kind, PieceKind::Bishop | PieceKind::Rook | PieceKind::Queen)
}

fn describe(p: Option<Piece>) -> String {
    match p {
        None => "nothing".into(),
        Some(p) => format!(
            "{} {} ({})",
            if p.color == Color::White {
                "a white"
            } else {
                "a black"
            },
            match p.kind {
                PieceKind::Pawn => "pawn",
                PieceKind::Knight => "knight",
                PieceKind::Bishop => "bishop",
                PieceKind::Rook => "rook",
                PieceKind::Queen => "queen",
                PieceKind::King => "king",
            },
            p.fen_char()
        ),
    }
}

/// Variant of a non-pawn standard move by the target's letter (D10).
fn variant_for(mover: Piece, target: Option<Piece>) -> Variant {
    match target {
        None => Variant::Basic,
        Some(p) if p == mover => Variant::Basic,
        Some(p) if p.color == mover.color => Variant::Excluded,
        Some(_) => Variant::Capture,
    }
}

/// Decides what `mv` means on `layer` (eq. 13-37, D9, D10), or why it is impossible.
pub fn classify(layer: &ClassicalLayer, mv: &QcanMove) -> Result<Classified, String> {
    let v = &layer.pieces;
    let side = layer.flags.side_to_move;
    let own = |sq: Square| -> Result<Piece, String> {
        match v.get(sq) {
            Some(p) if p.color == side => Ok(p),
            other => Err(format!(
                "{sq} holds {}: the source must hold a piece of the side to move ({})",
                describe(other),
                if side == Color::White {
                    "white"
                } else {
                    "black"
                }
            )),
        }
    };
    let sources = mv.shape.sources();
    let mover = own(sources[0])?;
    if let Some(k) = mv.piece {
        if k != mover.kind {
            return Err(format!(
                "the piece letter {} does not match {} on {}",
                k.to_char().to_ascii_uppercase(),
                describe(Some(mover)),
                sources[0]
            ));
        }
    }
    let classified = match mv.shape {
        MoveShape::Standard { from, to } => classify_standard(layer, mover, from, to, mv)?,
        MoveShape::Split { from, to1, to2 } => {
            if mover.kind == PieceKind::Pawn {
                return Err("pawns cannot split (section 10, rule 7)".into());
            }
            if to1 == to2 {
                return Err(format!("the two split targets are both {to1}"));
            }
            for t in [to1, to2] {
                if !valid_pattern(mover.kind, from, t) {
                    return Err(format!(
                        "{} cannot move from {from} to {t}",
                        describe(Some(mover))
                    ));
                }
                let vt = v.get(t);
                if vt.is_some() && vt != Some(mover) {
                    return Err(format!(
                        "split target {t} holds {}: split targets must be empty or hold the same piece (eq. 24/26)",
                        describe(vt)
                    ));
                }
            }
            Classified {
                mover,
                move_type: if is_slider(mover.kind) {
                    MoveType::SplitSlide
                } else {
                    MoveType::SplitJump
                },
                variant: Variant::Basic,
                shape: mv.shape,
                promotion: None,
                ep_square: None,
                rook: None,
            }
        }
        MoveShape::Merge { from1, from2, to } => {
            if mover.kind == PieceKind::Pawn {
                return Err("pawns cannot merge (section 10, rule 7)".into());
            }
            if from1 == from2 {
                return Err(format!("the two merge sources are both {from1}"));
            }
            if v.get(from2) != Some(mover) {
                return Err(format!(
                    "merge sources must hold the same piece: {from1} holds {}, {from2} holds {} (eq. 25/27)",
                    describe(Some(mover)),
                    describe(v.get(from2))
                ));
            }
            for s in [from1, from2] {
                if !valid_pattern(mover.kind, s, to) {
                    return Err(format!(
                        "{} cannot move from {s} to {to}",
                        describe(Some(mover))
                    ));
                }
            }
            let vt = v.get(to);
            if vt.is_some() && vt != Some(mover) {
                return Err(format!(
                    "merge target {to} holds {}: it must be empty or hold the same piece (eq. 25/27)",
                    describe(vt)
                ));
            }
            Classified {
                mover,
                move_type: if is_slider(mover.kind) {
                    MoveType::MergeSlide
                } else {
                    MoveType::MergeJump
                },
                variant: Variant::Basic,
                shape: mv.shape,
                promotion: None,
                ep_square: None,
                rook: None,
            }
        }
    };
    if mv.promotion.is_some() && classified.promotion.is_none() {
        return Err("a promotion piece is only allowed on a pawn move to the last rank".into());
    }
    check_mark(mv.mark, &classified)?;
    Ok(classified)
}

fn check_mark(mark: Option<VariantMark>, c: &Classified) -> Result<(), String> {
    let Some(mark) = mark else { return Ok(()) };
    let pawn_diagonal = matches!(c.move_type, MoveType::PawnCapture | MoveType::PawnEp);
    let ok = match mark {
        // Every diagonal pawn move captures something (the target or the e.p. pawn).
        VariantMark::Capture => {
            c.variant == Variant::Capture || (pawn_diagonal && c.variant != Variant::Excluded)
        }
        VariantMark::Excluded => c.variant == Variant::Excluded,
    };
    if ok {
        Ok(())
    } else {
        let (said, is) = (
            match mark {
                VariantMark::Capture => "x (capture)",
                VariantMark::Excluded => "w (excluded)",
            },
            match c.variant {
                Variant::Basic => "the standard variant",
                Variant::Excluded => "the excluded (blocked) variant",
                Variant::Capture => "the capture variant",
            },
        );
        Err(format!(
            "the mark {said} contradicts the position: this move is {is} (rules-notes D10)"
        ))
    }
}

fn classify_standard(
    layer: &ClassicalLayer,
    mover: Piece,
    from: Square,
    to: Square,
    mv: &QcanMove,
) -> Result<Classified, String> {
    let v = &layer.pieces;
    let vt = v.get(to);
    let base = Classified {
        mover,
        move_type: MoveType::Jump,
        variant: Variant::Basic,
        shape: MoveShape::Standard { from, to },
        promotion: None,
        ep_square: None,
        rook: None,
    };
    if from == to {
        return Err(format!("source and target are both {from}"));
    }
    match mover.kind {
        PieceKind::Pawn => classify_pawn(layer, base, mv),
        PieceKind::King
            if from.rank() == to.rank() && (to.file() as i8 - from.file() as i8).abs() == 2 =>
        {
            // Castling, eq. 35/37: the king on e1 (e8) with the rook on h (a) and the right.
            let home = if mover.color == Color::White { 0 } else { 7 };
            let king_side = to.file() == 6;
            if from != Square::new(4, home) || !(to.file() == 6 || to.file() == 2) {
                return Err(format!("a king cannot move from {from} to {to}"));
            }
            let rook_from = Square::new(if king_side { 7 } else { 0 }, home);
            let rook_to = Square::new(if king_side { 5 } else { 3 }, home);
            if !layer.flags.castling.get(mover.color, king_side) {
                return Err(format!(
                    "{} castling right is gone (the king or rook was involved in an earlier move, D13)",
                    if king_side {
                        "the king side"
                    } else {
                        "the queen side"
                    }
                ));
            }
            if v.get(rook_from) != Some(Piece::new(mover.color, PieceKind::Rook)) {
                return Err(format!(
                    "castling needs the rook on {rook_from} (eq. 35/37)"
                ));
            }
            Ok(Classified {
                move_type: if king_side {
                    MoveType::KsCastle
                } else {
                    MoveType::QsCastle
                },
                variant: Variant::Basic,
                rook: Some((rook_from, rook_to)),
                ..base
            })
        }
        kind => {
            if !valid_pattern(kind, from, to) {
                return Err(format!(
                    "{} cannot move from {from} to {to}",
                    describe(Some(mover))
                ));
            }
            Ok(Classified {
                move_type: if is_slider(kind) {
                    MoveType::Slide
                } else {
                    MoveType::Jump
                },
                variant: variant_for(mover, vt),
                ..base
            })
        }
    }
}

fn classify_pawn(
    layer: &ClassicalLayer,
    base: Classified,
    mv: &QcanMove,
) -> Result<Classified, String> {
    let v = &layer.pieces;
    let MoveShape::Standard { from, to } = base.shape else {
        unreachable!("pawn moves are standard")
    };
    let mover = base.mover;
    let fwd = forward(mover.color);
    let df = to.file() as i8 - from.file() as i8;
    let dr = to.rank() as i8 - from.rank() as i8;
    let start_rank = if mover.color == Color::White { 1 } else { 6 };
    let last_rank = if mover.color == Color::White { 7 } else { 0 };
    let vt = v.get(to);
    let same_pawn = vt == Some(mover);
    let promotion = if to.rank() == last_rank {
        match mv.promotion {
            Some(k) => Some(k),
            None => {
                return Err(format!(
                    "a pawn reaching {to} must promote: add Q, R, B or N (e.g. {from}{to}Q)"
                ));
            }
        }
    } else {
        None
    };
    let base = Classified { promotion, ..base };
    if df == 0 && dr == fwd {
        // eq. 28 / 29: the step; any other piece blocks it.
        let variant = if vt.is_none() || same_pawn {
            Variant::Basic
        } else {
            Variant::Excluded
        };
        return Ok(Classified {
            move_type: MoveType::PawnStep,
            variant,
            ..base
        });
    }
    if df == 0 && dr == 2 * fwd && from.rank() == start_rank {
        // eq. 30 (with E3) / 31: the two-step, a slide over the square in between.
        let variant = if vt.is_none() || same_pawn {
            Variant::Basic
        } else {
            Variant::Excluded
        };
        return Ok(Classified {
            move_type: MoveType::PawnTwoStep,
            variant,
            ..base
        });
    }
    if df.abs() == 1 && dr == fwd {
        let ep_rank = if mover.color == Color::White { 5 } else { 2 };
        let ep_square = Square::new(to.file(), from.rank());
        let enemy_pawn = Piece::new(mover.color.opposite(), PieceKind::Pawn);
        let ep_possible = layer.flags.en_passant_file == Some(to.file())
            && to.rank() == ep_rank
            && v.get(ep_square) == Some(enemy_pawn);
        if ep_possible {
            // eq. 33 / 34 and Capture E.P. (section 8.11.8).
            let variant = match vt {
                None => Variant::Basic,
                Some(p) if p == mover => Variant::Basic,
                Some(p) if p.color == mover.color => Variant::Excluded,
                Some(_) => Variant::Capture,
            };
            return Ok(Classified {
                move_type: MoveType::PawnEp,
                variant,
                ep_square: Some(ep_square),
                ..base
            });
        }
        return match vt {
            Some(p) if p.color != mover.color => Ok(Classified {
                move_type: MoveType::PawnCapture,
                variant: Variant::Capture,
                ..base
            }),
            _ => Err(format!(
                "a pawn moves diagonally only to capture (eq. 32): {to} holds {}",
                describe(vt)
            )),
        };
    }
    Err(format!("a pawn cannot move from {from} to {to}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(fen: &str) -> ClassicalLayer {
        ClassicalLayer::from_fen(fen).unwrap()
    }

    fn cls(fen: &str, mv: &str) -> Result<Classified, String> {
        classify(&layer(fen), &mv.parse().unwrap())
    }

    #[test]
    fn paths_and_patterns() {
        assert_eq!(path_between(Square::A1, Square::A4), (1 << 8) | (1 << 16));
        assert_eq!(
            path_between(Square::C1, Square::A3),
            1 << Square::B2.index()
        );
        assert_eq!(path_between(Square::A1, Square::B3), 0);
        assert!(valid_pattern(PieceKind::Knight, Square::B1, Square::C3));
        assert!(!valid_pattern(PieceKind::Bishop, Square::C1, Square::C3));
    }

    #[test]
    fn variants_follow_the_target() {
        let fen = "4k3/8/8/8/8/n1B5/8/1N2K3 w - - 0 1";
        assert_eq!(cls(fen, "b1a3").unwrap().variant, Variant::Capture);
        assert_eq!(cls(fen, "b1c3").unwrap().variant, Variant::Excluded);
        assert_eq!(cls(fen, "b1d2").unwrap().variant, Variant::Basic);
        assert_eq!(cls(fen, "b1d2").unwrap().move_type, MoveType::Jump);
        assert!(cls(fen, "b1xc3").unwrap_err().contains("contradicts"));
        assert!(cls(fen, "b1wa3").unwrap_err().contains("contradicts"));
        assert!(cls(fen, "b1xa3").is_ok());
        assert!(cls(fen, "Bb1d2").unwrap_err().contains("does not match"));
        assert!(cls(fen, "b1^c3d2").unwrap_err().contains("split target c3"));
        assert_eq!(cls(fen, "c3^a1e5").unwrap().move_type, MoveType::SplitSlide);
        assert!(cls(fen, "a3b1").unwrap_err().contains("side to move"));
    }

    #[test]
    fn pawns_castling_and_ep() {
        let fen = "r3k2r/8/8/3pP3/8/8/P7/R3K2R w KQkq d6 0 1";
        assert_eq!(cls(fen, "e5d6").unwrap().move_type, MoveType::PawnEp);
        assert_eq!(cls(fen, "e5d6").unwrap().ep_square, Some(Square::D5));
        assert_eq!(cls(fen, "a2a4").unwrap().move_type, MoveType::PawnTwoStep);
        assert!(cls(fen, "a2b3").is_err());
        assert!(cls(fen, "a2a5").is_err());
        let c = cls(fen, "e1g1").unwrap();
        assert_eq!(c.move_type, MoveType::KsCastle);
        assert_eq!(c.rook, Some((Square::H1, Square::F1)));
        assert_eq!(cls(fen, "e1c1").unwrap().move_type, MoveType::QsCastle);
        let no_rights = "r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1";
        assert!(
            cls(no_rights, "e1g1")
                .unwrap_err()
                .contains("castling right")
        );
        let promo = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1";
        assert!(cls(promo, "a7a8").unwrap_err().contains("must promote"));
        assert_eq!(
            cls(promo, "a7a8Q").unwrap().promotion,
            Some(PieceKind::Queen)
        );
        assert!(cls(promo, "e1e2Q").is_err());
    }
}
