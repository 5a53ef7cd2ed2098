//! The game: touch, collapse, move, capture, promotion, game end, and exact replay.

use crate::error::{AklError, kind_name};
use crate::moves::{AklMove, CastleSide, moves_as};
use crate::piece::{AklPiece, PieceState, TypePair};
use crate::position::{AklPosition, attacks_of, is_dark, landing_state};
use crate::record::{CaptureNote, Destination, TurnEntry};
use qchess_board::{Color, PieceKind, Square};

/// Who may see which types. The rules text reveals types only through collapses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Visibility {
    /// Only types revealed by collapses, promotions and the public start types are known, to
    /// both players alike (rules-notes 7). The default.
    #[default]
    Revealed,
    /// As `Revealed`, and each player also knows both types of their own pieces.
    OwnPairs,
}

/// Rule options of a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Rules {
    /// Who sees which types.
    pub visibility: Visibility,
}

/// Why a game was drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    /// Only the two kings are left.
    BareKings,
    /// 100 consecutive plies without a capture or a pawn move.
    QuietPlies,
}

/// Whether the game goes on, and how it ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameStatus {
    /// The game goes on.
    Ongoing,
    /// `winner` captured the enemy king.
    Won {
        /// The side that captured the king.
        winner: Color,
    },
    /// A draw.
    Drawn(DrawReason),
}

/// What a touch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TouchResult {
    /// The piece can move: call [`Game::play`] with one of these moves.
    MustMove(Vec<AklMove>),
    /// The piece has no legal move: the turn is over.
    NoLegalMove,
    /// The collapse put the enemy king in check: it counted as the move, the turn is over.
    CheckByCollapse,
}

/// The outcome of [`Game::touch`], all of it public (collapses are revealed to both players).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TouchOutcome {
    /// The touched square.
    pub square: Square,
    /// The type a quantum piece collapsed to; `None` when it was classical.
    pub collapsed: Option<PieceKind>,
    /// The piece's type now.
    pub kind: PieceKind,
    /// Whether it must move now or the turn ended.
    pub result: TouchResult,
}

/// A touch waiting for its move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    pub(crate) square: Square,
    pub(crate) collapse: Option<PieceKind>,
    pub(crate) kind: PieceKind,
    pub(crate) moves: Vec<AklMove>,
}

/// A game of Akl-style quantum chess: the true position, the turn in progress and the record.
///
/// A turn is two calls: [`Game::touch`] (which collapses a quantum piece at random) and, when
/// the piece can move, [`Game::play`]. [`Game::apply_entry`] plays a whole recorded turn.
///
/// ```
/// use qchess_akl::{Game, TouchResult};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let mut game = Game::new_random(&mut rng);
/// let touch = game.touch("g1".parse().unwrap(), &mut rng).unwrap();
/// if let TouchResult::MustMove(moves) = touch.result {
///     game.play(moves[0], &mut rng).unwrap();
/// }
/// assert_eq!(game.history().len(), 1);
/// // The record replays to the same game.
/// let replayed = game.record().replay().unwrap();
/// assert_eq!(replayed.position(), game.position());
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    pub(crate) start: AklPosition,
    pub(crate) position: AklPosition,
    pub(crate) rules: Rules,
    pub(crate) pending: Option<Pending>,
    pub(crate) status: GameStatus,
    pub(crate) history: Vec<TurnEntry>,
    pub(crate) captured: Vec<(Color, PieceKind)>,
}

impl Game {
    /// A game from `position` (between turns) with default rules.
    pub fn from_position(position: AklPosition) -> Game {
        Game::with_rules(position, Rules::default())
    }

    /// A game from `position` with `rules`.
    pub fn with_rules(position: AklPosition, rules: Rules) -> Game {
        let status = end_status(&position, false, None);
        Game {
            start: position.clone(),
            position,
            rules,
            pending: None,
            status,
            history: Vec::new(),
            captured: Vec::new(),
        }
    }

    /// The standard start with secondary types drawn from `rng`.
    pub fn new_random<R: rand::Rng + ?Sized>(rng: &mut R) -> Game {
        Game::from_position(AklPosition::startpos_random(rng))
    }

    /// The standard start with secondary types drawn by `ChaCha8Rng::seed_from_u64(seed)`.
    pub fn from_seed(seed: u64) -> Game {
        Game::from_position(AklPosition::startpos_seeded(seed))
    }

    /// The current true position.
    pub fn position(&self) -> &AklPosition {
        &self.position
    }

    /// The position the game started from.
    pub fn start_position(&self) -> &AklPosition {
        &self.start
    }

    /// The rule options.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The side whose turn it is.
    pub fn side_to_move(&self) -> Color {
        self.position.side_to_move
    }

    /// Whether the game goes on.
    pub fn status(&self) -> GameStatus {
        self.status
    }

    /// The completed turns, first to last.
    pub fn history(&self) -> &[TurnEntry] {
        &self.history
    }

    /// Captured pieces (their colour and the type they collapsed to), in order.
    pub fn captured(&self) -> &[(Color, PieceKind)] {
        &self.captured
    }

    /// The touched piece waiting to move, with its type and legal moves.
    pub fn pending_touch(&self) -> Option<(Square, PieceKind, &[AklMove])> {
        self.pending
            .as_ref()
            .map(|p| (p.square, p.kind, p.moves.as_slice()))
    }

    /// Every whole turn the side to move can play now, one entry per touch outcome and
    /// destination: a piece in superposition once per type it can collapse to (written
    /// `<T|sq>`), a classical piece as it is. A collapse that gives check, or a piece with no
    /// move, is a touch-only entry. While a touch is pending: the touched piece's moves (the
    /// entry's `from` is the touched square, `collapse` none). Captures and superposition are
    /// left for the game to fill in. Empty once the game is over.
    ///
    /// ```
    /// use qchess_akl::{AklPosition, Game};
    /// let game = Game::from_position(AklPosition::parse("4k3/8/8/8/8/8/8/1(NR)2K3 w - 0 1").unwrap());
    /// let entries: Vec<String> = game.legal_entries().iter().map(|e| e.to_string()).collect();
    /// assert!(entries.contains(&"<N|b1> -> c3".to_string()));
    /// assert!(entries.contains(&"<R|b1> -> b8".to_string()));
    /// assert!(entries.contains(&"e1 -> d1".to_string()));
    /// ```
    pub fn legal_entries(&self) -> Vec<TurnEntry> {
        let mut out = Vec::new();
        if self.status != GameStatus::Ongoing {
            return out;
        }
        let entry = |from: Square, collapse: Option<PieceKind>, mv: Option<&AklMove>| TurnEntry {
            from,
            collapse,
            dest: mv.map(|m| Destination {
                to: m.to,
                capture: None,
                promotion: m.promotion,
                superposed: false,
            }),
            check: false,
        };
        if let Some(p) = &self.pending {
            out.extend(p.moves.iter().map(|m| entry(p.square, None, Some(m))));
            return out;
        }
        let side = self.side_to_move();
        for (sq, piece) in self.position.pieces() {
            if piece.color != side {
                continue;
            }
            let outcomes: Vec<(Option<PieceKind>, PieceKind)> = match piece.state {
                PieceState::Classical(k) => vec![(None, k)],
                PieceState::Quantum => {
                    let mut kinds = piece.pair.types().to_vec();
                    kinds.dedup();
                    kinds.into_iter().map(|k| (Some(k), k)).collect()
                }
            };
            for (collapse, kind) in outcomes {
                if collapse.is_some() && self.collapse_gives_check(sq, side, kind) {
                    out.push(TurnEntry {
                        check: true,
                        ..entry(sq, collapse, None)
                    });
                    continue;
                }
                let moves = moves_as(&self.position, sq, kind);
                if moves.is_empty() {
                    out.push(entry(sq, collapse, None));
                }
                out.extend(moves.iter().map(|m| entry(sq, collapse, Some(m))));
            }
        }
        out
    }

    /// The squares the side to move may touch (every piece of theirs), or none while a touch
    /// is pending or the game is over.
    pub fn touchable(&self) -> Vec<Square> {
        if self.pending.is_some() || self.status != GameStatus::Ongoing {
            return Vec::new();
        }
        let side = self.side_to_move();
        self.position
            .pieces()
            .filter(|(_, p)| p.color == side)
            .map(|(sq, _)| sq)
            .collect()
    }

    /// Touches the piece on `sq`; a quantum piece collapses to either type with probability
    /// 1/2, drawn from `rng`.
    pub fn touch<R: rand::Rng + ?Sized>(
        &mut self,
        sq: Square,
        rng: &mut R,
    ) -> Result<TouchOutcome, AklError> {
        let piece = *self.check_touch(sq)?;
        let collapse = piece
            .is_quantum()
            .then(|| piece.pair.get(rng.random::<bool>()));
        Ok(self.commit_touch(sq, collapse))
    }

    /// Touches the piece on `sq` with a given collapse (replay): `Some(type)` for a quantum
    /// piece (one of its two types), `None` for a classical one.
    pub fn touch_forced(
        &mut self,
        sq: Square,
        collapse: Option<PieceKind>,
    ) -> Result<TouchOutcome, AklError> {
        let piece = *self.check_touch(sq)?;
        check_collapse(sq, &piece, collapse, false)?;
        Ok(self.commit_touch(sq, collapse))
    }

    /// Plays `mv` with the touched piece; a captured quantum piece collapses (drawn from `rng`)
    /// before it leaves the board.
    pub fn play<R: rand::Rng + ?Sized>(
        &mut self,
        mv: AklMove,
        rng: &mut R,
    ) -> Result<TurnEntry, AklError> {
        self.check_play(mv)?;
        let captured = self.position.piece(mv.to).map(|p| match p.state {
            PieceState::Quantum => p.pair.get(rng.random::<bool>()),
            PieceState::Classical(k) => k,
        });
        Ok(self.commit_play(mv, captured))
    }

    /// Plays `mv` with a given collapse of the captured piece (replay): `Some(type)` is
    /// required for a quantum target and allowed (equal to its type) for a classical one.
    pub fn play_forced(
        &mut self,
        mv: AklMove,
        captured: Option<PieceKind>,
    ) -> Result<TurnEntry, AklError> {
        self.check_play(mv)?;
        let captured = match (self.position.piece(mv.to), captured) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(AklError::EntryMismatch {
                    message: format!("a capture is recorded but {} is empty", mv.to),
                });
            }
            (Some(p), forced) => {
                check_collapse(mv.to, p, forced, true)?;
                Some(forced.or(p.current()).expect("checked"))
            }
        };
        Ok(self.commit_play(mv, captured))
    }

    /// The record of this game: start position and every completed turn.
    pub fn record(&self) -> crate::GameRecord {
        crate::GameRecord {
            start: self.start.clone(),
            rules: self.rules,
            entries: self.history.clone(),
        }
    }

    /// What `viewer` knows of the game.
    pub fn view(&self, viewer: Color) -> crate::PlayerView {
        crate::PlayerView::of(self, viewer)
    }

    pub(crate) fn check_touch(&self, sq: Square) -> Result<&AklPiece, AklError> {
        if self.status != GameStatus::Ongoing {
            return Err(AklError::GameOver);
        }
        if let Some(p) = &self.pending {
            return Err(AklError::TouchPending { square: p.square });
        }
        let piece = self
            .position
            .piece(sq)
            .ok_or(AklError::EmptySquare { square: sq })?;
        if piece.color != self.side_to_move() {
            return Err(AklError::NotYourPiece { square: sq });
        }
        Ok(piece)
    }

    pub(crate) fn check_play(&self, mv: AklMove) -> Result<(), AklError> {
        if self.status != GameStatus::Ongoing {
            return Err(AklError::GameOver);
        }
        let pending = self.pending.as_ref().ok_or(AklError::NothingTouched)?;
        if mv.from != pending.square {
            return Err(AklError::IllegalMove {
                mv: mv.to_string(),
                reason: format!(
                    "the touched piece is on {}, it must be the one to move",
                    pending.square
                ),
            });
        }
        if pending.moves.contains(&mv) {
            return Ok(());
        }
        let same_squares = pending.moves.iter().any(|m| m.to == mv.to);
        let reason = if same_squares && mv.promotion.is_none() {
            "a pawn reaching the last rank must promote: add q, r, b, n or p".to_string()
        } else if same_squares {
            "a pawn promotes to any type but king: a queen, rook, bishop, knight or pawn"
                .to_string()
        } else if mv.promotion.is_some() {
            "only a pawn reaching the last rank promotes".to_string()
        } else {
            format!(
                "{} on {} cannot go to {}",
                kind_name(pending.kind),
                pending.square,
                mv.to
            )
        };
        Err(AklError::IllegalMove {
            mv: mv.to_string(),
            reason,
        })
    }

    /// Whether `kind` on `from` (colour `color`) attacks the enemy king.
    pub(crate) fn collapse_gives_check(&self, from: Square, color: Color, kind: PieceKind) -> bool {
        self.position
            .king_square(color.opposite())
            .is_some_and(|k| attacks_of(kind, color, from, self.position.occupied()).contains(k))
    }

    fn commit_touch(&mut self, sq: Square, collapse: Option<PieceKind>) -> TouchOutcome {
        let piece = self.position.piece_mut(sq).expect("checked");
        if let Some(kind) = collapse {
            piece.state = PieceState::Classical(kind);
            piece.known = piece.known.with(kind);
        }
        let color = piece.color;
        let kind = piece.current().expect("a touched piece is classical");
        let result = if collapse.is_some() && self.collapse_gives_check(sq, color, kind) {
            TouchResult::CheckByCollapse
        } else {
            let moves = moves_as(&self.position, sq, kind);
            if moves.is_empty() {
                TouchResult::NoLegalMove
            } else {
                TouchResult::MustMove(moves)
            }
        };
        // The touch costs the castling rights the piece carries (after its own castling moves
        // were listed: touching the king is how one castles).
        self.position.lose_castling_rights(sq);
        match &result {
            TouchResult::MustMove(moves) => {
                self.pending = Some(Pending {
                    square: sq,
                    collapse,
                    kind,
                    moves: moves.clone(),
                });
            }
            ended => {
                let check = *ended == TouchResult::CheckByCollapse;
                let entry = TurnEntry {
                    from: sq,
                    collapse,
                    dest: None,
                    check,
                };
                self.finish_turn(entry, false, false, false);
            }
        }
        TouchOutcome {
            square: sq,
            collapsed: collapse,
            kind,
            result,
        }
    }

    fn commit_play(&mut self, mv: AklMove, captured: Option<PieceKind>) -> TurnEntry {
        let pending = self.pending.take().expect("checked");
        let mut piece = self.position.piece(mv.from).copied().expect("checked");
        let color = piece.color;
        let moved_as = pending.kind;
        self.position.set(mv.from, None);
        let mut king_captured = false;
        if let (Some(kind), Some(target)) = (captured, self.position.piece(mv.to)) {
            king_captured = target.is_king();
            self.captured.push((target.color, kind));
        }
        let mut final_kind = moved_as;
        if let Some(chosen) = mv.promotion {
            // The promoted piece keeps the pawn's quantum nature: the chosen type and the
            // pawn's other type.
            let other = piece.pair.other(PieceKind::Pawn);
            piece.pair = TypePair {
                primary: chosen,
                secondary: other,
            };
            // The other type is public only when the pawn's pair was: a second revealed type
            // besides pawn. A pawn-pawn pair looks like a half-known one to the players.
            let other_known = other != PieceKind::Pawn && piece.known.contains(other);
            piece.known = crate::TypeSet::EMPTY.with(chosen);
            if other_known {
                piece.known = piece.known.with(other);
            }
            final_kind = chosen;
        }
        piece.state = landing_state(&piece, final_kind, mv.to);
        // A capture on a corner takes that rook's right with it.
        self.position.lose_castling_rights(mv.to);
        self.position.set(mv.to, Some(piece));
        if piece.is_king()
            && let Some(side) = CastleSide::of_king_move(color, mv.from, mv.to)
        {
            let (rook_from, rook_to) = (side.rook_from(color), side.rook_to(color));
            let mut rook = self
                .position
                .piece(rook_from)
                .copied()
                .expect("castling was legal");
            // The rook keeps its quantum nature; a classical one regains it on a dark square.
            if is_dark(rook_to) {
                rook.state = PieceState::Quantum;
            }
            self.position.set(rook_from, None);
            self.position.set(rook_to, Some(rook));
        }
        let check = self
            .position
            .king_square(color.opposite())
            .is_some_and(|k| self.position.attacked_by_classical(k, color));
        let entry = TurnEntry {
            from: mv.from,
            collapse: pending.collapse,
            dest: Some(Destination {
                to: mv.to,
                capture: captured.map(|c| CaptureNote {
                    by: moved_as,
                    captured: c,
                }),
                promotion: mv.promotion,
                superposed: piece.is_quantum(),
            }),
            check,
        };
        self.finish_turn(
            entry,
            captured.is_some(),
            moved_as == PieceKind::Pawn,
            king_captured,
        );
        entry
    }

    fn finish_turn(
        &mut self,
        entry: TurnEntry,
        capture: bool,
        pawn_move: bool,
        king_captured: bool,
    ) {
        self.pending = None;
        self.history.push(entry);
        let pos = &mut self.position;
        pos.quiet_plies = if capture || pawn_move {
            0
        } else {
            pos.quiet_plies.saturating_add(1)
        };
        if pos.side_to_move == Color::Black {
            pos.fullmove = pos.fullmove.saturating_add(1);
        }
        let mover = pos.side_to_move;
        pos.side_to_move = mover.opposite();
        self.status = end_status(pos, king_captured, Some(mover));
    }
}

/// Checks a given collapse of the piece on `sq`: a quantum piece needs one of its types
/// (`required`), a classical one accepts none (or, for a captured piece, its own type).
pub(crate) fn check_collapse(
    sq: Square,
    piece: &AklPiece,
    collapse: Option<PieceKind>,
    captured: bool,
) -> Result<(), AklError> {
    match (piece.state, collapse) {
        (PieceState::Quantum, None) => Err(AklError::CollapseNotRecorded { square: sq }),
        (PieceState::Quantum, Some(k)) if !piece.pair.contains(k) => {
            Err(AklError::ImpossibleCollapse {
                square: sq,
                kind: k,
            })
        }
        (PieceState::Classical(_), None) | (PieceState::Quantum, Some(_)) => Ok(()),
        (PieceState::Classical(c), Some(k)) if captured => {
            if c == k {
                Ok(())
            } else {
                Err(AklError::EntryMismatch {
                    message: format!(
                        "the piece on {sq} is {}, not {}",
                        kind_name(c),
                        kind_name(k)
                    ),
                })
            }
        }
        (PieceState::Classical(_), Some(_)) => Err(AklError::NotQuantum { square: sq }),
    }
}

/// The status after a turn of `mover` (or of a fresh position when `mover` is `None`).
fn end_status(pos: &AklPosition, king_captured: bool, mover: Option<Color>) -> GameStatus {
    if let (true, Some(winner)) = (king_captured, mover) {
        return GameStatus::Won { winner };
    }
    for color in Color::ALL {
        if pos.king_square(color).is_none() {
            return GameStatus::Won {
                winner: color.opposite(),
            };
        }
    }
    if pos.pieces().count() == 2 {
        GameStatus::Drawn(DrawReason::BareKings)
    } else if pos.quiet_plies >= 100 {
        GameStatus::Drawn(DrawReason::QuietPlies)
    } else {
        GameStatus::Ongoing
    }
}

impl GameStatus {
    /// A short name: `ongoing`, `white_wins`, `black_wins` or `draw`.
    pub fn name(self) -> &'static str {
        match self {
            GameStatus::Ongoing => "ongoing",
            GameStatus::Won {
                winner: Color::White,
            } => "white_wins",
            GameStatus::Won {
                winner: Color::Black,
            } => "black_wins",
            GameStatus::Drawn(_) => "draw",
        }
    }

    /// Why the game ended: `king_captured`, `bare_kings` or `quiet_plies`; `None` while it
    /// goes on.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            GameStatus::Ongoing => None,
            GameStatus::Won { .. } => Some("king_captured"),
            GameStatus::Drawn(DrawReason::BareKings) => Some("bare_kings"),
            GameStatus::Drawn(DrawReason::QuietPlies) => Some("quiet_plies"),
        }
    }
}

impl std::fmt::Display for GameStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GameStatus::Ongoing => f.write_str("ongoing"),
            GameStatus::Won { winner } => {
                write!(
                    f,
                    "{} wins: the king was captured",
                    crate::position::color_name(*winner)
                )
            }
            GameStatus::Drawn(DrawReason::BareKings) => {
                f.write_str("draw: only the two kings are left")
            }
            GameStatus::Drawn(DrawReason::QuietPlies) => {
                f.write_str("draw: 100 plies without a capture or a pawn move")
            }
        }
    }
}
