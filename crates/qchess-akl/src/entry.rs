//! Whole recorded turns: applying a `TurnEntry` atomically, inferring an unwritten collapse.

use crate::error::{AklError, kind_name};
use crate::game::{Game, GameStatus, Pending, TouchOutcome, TouchResult};
use crate::moves::{AklMove, moves_as};
use crate::piece::AklPiece;
use crate::position::AklPosition;
use crate::record::{Destination, TurnEntry};
use qchess_board::{PieceKind, Square};
use rand::Rng;

/// What a failing multi-step call must restore.
struct Snapshot {
    position: AklPosition,
    pending: Option<Pending>,
    status: GameStatus,
    history_len: usize,
    captured_len: usize,
}

impl Game {
    /// Plays one recorded turn. Written collapses are forced; an unwritten collapse of the
    /// touched piece is inferred from the move (its first type, primary then secondary, that
    /// makes the move legal), and any other unwritten random outcome is drawn from `rng`, or
    /// is an error when `rng` is `None`. The entry may also finish a pending touch of its
    /// square. On error the game is unchanged.
    pub fn apply_entry(
        &mut self,
        entry: &TurnEntry,
        rng: Option<&mut dyn rand::RngCore>,
    ) -> Result<TurnEntry, AklError> {
        let snapshot = self.snapshot();
        let result = self.apply_entry_inner(entry, rng);
        if result.is_err() {
            self.restore(snapshot);
        }
        result
    }

    fn apply_entry_inner(
        &mut self,
        entry: &TurnEntry,
        mut rng: Option<&mut dyn rand::RngCore>,
    ) -> Result<TurnEntry, AklError> {
        let touch = match &self.pending {
            Some(p) if p.square == entry.from => {
                if entry.collapse.is_some() && entry.collapse != p.collapse {
                    return Err(AklError::EntryMismatch {
                        message: format!("the piece on {} was already touched", entry.from),
                    });
                }
                TouchOutcome {
                    square: p.square,
                    collapsed: p.collapse,
                    kind: p.kind,
                    result: TouchResult::MustMove(p.moves.clone()),
                }
            }
            _ => {
                let piece = *self.check_touch(entry.from)?;
                let collapse = match (piece.is_quantum(), entry.collapse, entry.dest) {
                    (true, None, Some(dest)) => {
                        Some(self.infer_collapse(entry.from, &piece, &dest)?)
                    }
                    (true, None, None) => match rng.as_deref_mut() {
                        Some(r) => Some(piece.pair.get(r.random::<bool>())),
                        None => return Err(AklError::CollapseNotRecorded { square: entry.from }),
                    },
                    (_, given, _) => given,
                };
                self.touch_forced(entry.from, collapse)?
            }
        };
        match (&touch.result, entry.dest) {
            (TouchResult::MustMove(_), Some(dest)) => {
                let mv = AklMove {
                    from: entry.from,
                    to: dest.to,
                    promotion: dest.promotion,
                };
                if let Some(note) = dest.capture
                    && note.by != touch.kind
                {
                    return Err(AklError::EntryMismatch {
                        message: format!(
                            "the capture names the capturer as {} but it is {}",
                            kind_name(note.by),
                            kind_name(touch.kind)
                        ),
                    });
                }
                let target = self.position.piece(mv.to).copied();
                let captured = match (dest.capture, target) {
                    (Some(note), _) => Some(note.captured),
                    (None, Some(t)) if t.is_quantum() => {
                        self.check_play(mv)?;
                        match rng {
                            Some(r) => Some(t.pair.get(r.random::<bool>())),
                            None => return Err(AklError::CollapseNotRecorded { square: mv.to }),
                        }
                    }
                    (None, _) => None,
                };
                let done = self.play_forced(mv, captured)?;
                if dest.superposed && !done.dest.is_some_and(|d| d.superposed) {
                    return Err(AklError::EntryMismatch {
                        message: format!("the piece on {} is not in superposition", dest.to),
                    });
                }
                Ok(done)
            }
            (TouchResult::MustMove(_), None) => Err(AklError::EntryMismatch {
                message: format!(
                    "the piece on {} can move: the entry needs a destination (-> square)",
                    entry.from
                ),
            }),
            (ended, Some(_)) => Err(AklError::EntryMismatch {
                message: format!(
                    "touching {} ended the turn ({}): the entry cannot move it",
                    entry.from,
                    if *ended == TouchResult::NoLegalMove {
                        "no legal move"
                    } else {
                        "the collapse gave check"
                    }
                ),
            }),
            (_, None) => Ok(*self.history.last().expect("the touch ended the turn")),
        }
    }

    /// The first type of the pair (primary, then secondary) under which touching `from` lets
    /// the piece make the move `dest`.
    fn infer_collapse(
        &self,
        from: Square,
        piece: &AklPiece,
        dest: &Destination,
    ) -> Result<PieceKind, AklError> {
        let mv = AklMove {
            from,
            to: dest.to,
            promotion: dest.promotion,
        };
        piece
            .pair
            .types()
            .into_iter()
            .find(|&kind| {
                !self.collapse_gives_check(from, piece.color, kind)
                    && moves_as(&self.position, from, kind).contains(&mv)
            })
            .ok_or_else(|| {
                // Name only the types the players have seen: the message must not reveal a
                // secret secondary type.
                let known: Vec<&str> = piece.known.iter().map(kind_name).collect();
                AklError::IllegalMove {
                    mv: mv.to_string(),
                    reason: format!(
                        "neither type of the piece on {from} can make it (known: {})",
                        known.join(", ")
                    ),
                }
            })
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            position: self.position.clone(),
            pending: self.pending.clone(),
            status: self.status,
            history_len: self.history.len(),
            captured_len: self.captured.len(),
        }
    }

    fn restore(&mut self, s: Snapshot) {
        self.position = s.position;
        self.pending = s.pending;
        self.status = s.status;
        self.history.truncate(s.history_len);
        self.captured.truncate(s.captured_len);
    }
}
