//! What one player knows: the board as seen, without any type that was never revealed to them.

use crate::game::{Game, GameStatus, Visibility};
use crate::moves::AklMove;
use crate::piece::{PieceState, TypePair, TypeSet};
use crate::record::TurnEntry;
use qchess_board::{Color, PieceKind, Square};

/// A piece as one player sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ViewPiece {
    /// Its square.
    pub square: Square,
    /// Its side.
    pub color: Color,
    /// Superposed, or collapsed to a (public) type.
    pub state: PieceState,
    /// The types of its pair this player knows.
    pub known: TypeSet,
    /// Both types, primary first, when this player knows the whole pair: a king, a piece
    /// whose two different types were both revealed, or (under [`Visibility::OwnPairs`]) the
    /// player's own piece. `known` alone cannot say that a pair is two equal types.
    pub pair: Option<TypePair>,
}

/// Everything one player may know about the game; bots and interfaces read only this.
///
/// ```
/// use qchess_akl::Game;
/// use qchess_board::{Color, PieceKind, Square};
/// let game = Game::from_seed(5);
/// let view = game.view(Color::Black);
/// let d1 = view.piece(Square::D1).unwrap();
/// // Only the standard (primary) type of a fresh piece is known.
/// assert_eq!(d1.known.iter().collect::<Vec<_>>(), vec![PieceKind::Queen]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerView {
    /// Whose view this is.
    pub viewer: Color,
    /// The side whose turn it is.
    pub side_to_move: Color,
    /// Every piece on the board, a1 first.
    pub pieces: Vec<ViewPiece>,
    /// The touched piece waiting to move, its type, and its moves (all public).
    pub pending: Option<(Square, PieceKind, Vec<AklMove>)>,
    /// The game's status.
    pub status: GameStatus,
    /// Consecutive plies without a capture or pawn move.
    pub quiet_plies: u32,
    /// Captured pieces and the types they collapsed to.
    pub captured: Vec<(Color, PieceKind)>,
    /// The turns played (every outcome in them was revealed to both players).
    pub history: Vec<TurnEntry>,
}

impl PlayerView {
    /// The view of `viewer` in `game`.
    pub fn of(game: &Game, viewer: Color) -> PlayerView {
        let own_pairs = game.rules().visibility == Visibility::OwnPairs;
        let pieces = game
            .position()
            .pieces()
            .map(|(square, p)| {
                let own = own_pairs && p.color == viewer;
                let mut known = p.known;
                if own {
                    known = known.with(p.pair.primary).with(p.pair.secondary);
                }
                ViewPiece {
                    square,
                    color: p.color,
                    state: p.state,
                    known,
                    pair: (own || p.pair_public()).then_some(p.pair),
                }
            })
            .collect();
        PlayerView {
            viewer,
            side_to_move: game.side_to_move(),
            pieces,
            pending: game.pending_touch().map(|(s, k, m)| (s, k, m.to_vec())),
            status: game.status(),
            quiet_plies: game.position().quiet_plies,
            captured: game.captured().to_vec(),
            history: game.history().to_vec(),
        }
    }

    /// The piece on `sq`, as seen.
    pub fn piece(&self, sq: Square) -> Option<&ViewPiece> {
        self.pieces.iter().find(|p| p.square == sq)
    }
}

impl PlayerView {
    /// The board as text, White at the bottom: `(N?)` a piece in superposition of which only
    /// the knight is known, `(NB)` one known to be a knight or a bishop (primary first; `(PP)`
    /// when its two types are known to be equal), `[N]` a collapsed
    /// knight, `K` a king; upper case White. Dark empty squares show `:`, light ones `.`.
    ///
    /// ```
    /// use qchess_akl::Game;
    /// use qchess_board::Color;
    /// let text = Game::from_seed(1).view(Color::White).render();
    /// assert!(text.contains(" K  ") && text.contains("(Q?)"));
    /// ```
    pub fn render(&self) -> String {
        self.render_oriented(false)
    }

    /// [`PlayerView::render`], seen from Black's side when `flipped` (rank 1 at the top, file
    /// h on the left).
    ///
    /// ```
    /// use qchess_akl::Game;
    /// use qchess_board::Color;
    /// let text = Game::from_seed(1).view(Color::Black).render_oriented(true);
    /// assert!(text.starts_with("    h   g   f   e   d   c   b   a\n1  "));
    /// ```
    pub fn render_oriented(&self, flipped: bool) -> String {
        let mut ranks: Vec<u8> = (0..8).rev().collect();
        let mut files: Vec<u8> = (0..8).collect();
        if flipped {
            ranks.reverse();
            files.reverse();
        }
        let letters: String = files
            .iter()
            .map(|f| format!("   {}", (b'a' + f) as char))
            .collect();
        let mut s = format!(" {letters}\n");
        for &rank in &ranks {
            s.push_str(&format!("{}  ", rank + 1));
            for &file in &files {
                let sq = Square::new(file, rank);
                s.push_str(&match self.piece(sq) {
                    None if crate::is_dark(sq) => " :  ".to_string(),
                    None => " .  ".to_string(),
                    Some(p) => cell(p),
                });
            }
            s.push_str(&format!(" {}\n", rank + 1));
        }
        s.push_str(&format!(" {letters}\n"));
        s
    }
}

/// A four-character cell for one piece.
fn cell(p: &ViewPiece) -> String {
    let letter = |k: PieceKind| {
        let c = k.to_char();
        if p.color == Color::White {
            c.to_ascii_uppercase()
        } else {
            c
        }
    };
    match p.state {
        PieceState::Classical(PieceKind::King) => format!(" {}  ", letter(PieceKind::King)),
        PieceState::Classical(k) => format!("[{}] ", letter(k)),
        PieceState::Quantum => {
            if let Some(pair) = p.pair {
                return format!("({}{})", letter(pair.primary), letter(pair.secondary));
            }
            let known: Vec<char> = p.known.iter().map(letter).collect();
            match known.as_slice() {
                [a] => format!("({a}?)"),
                [a, b] => format!("({a}{b})"),
                _ => "(??)".to_string(),
            }
        }
    }
}
