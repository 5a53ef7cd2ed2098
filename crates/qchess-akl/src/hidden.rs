//! Hidden information: a position as one player may know it, with every type that player has
//! not seen drawn at random from the distribution their view implies.

use crate::game::Visibility;
use crate::piece::{PieceState, TypePair};
use crate::position::{AklPosition, standard_types};
use qchess_board::{Color, Fraction, PieceKind, Square};

impl AklPosition {
    /// Whether `viewer` knows both types of the piece on `sq` (a king, a pair whose two types
    /// were both revealed, or, under [`Visibility::OwnPairs`], the viewer's own piece).
    pub fn pair_known_to(
        &self,
        sq: qchess_board::Square,
        viewer: Color,
        visibility: Visibility,
    ) -> bool {
        self.piece(sq).is_some_and(|p| {
            p.pair_public() || (visibility == Visibility::OwnPairs && p.color == viewer)
        })
    }

    /// The view of `viewer` as AKL-FEN: every piece whose pair `viewer` knows as it is, every
    /// other one with its unseen type left out and only its `?` kept (`(pn?)` becomes `(p?)`,
    /// `[p*n?]` becomes `[p*?]`). [`AklPosition::parse_view`] reads it back.
    ///
    /// ```
    /// use qchess_akl::{AklPosition, Visibility};
    /// use qchess_board::Color;
    /// let pos = AklPosition::startpos_seeded(3);
    /// let view = pos.view_fen(Color::White, Visibility::Revealed);
    /// assert!(view.starts_with("(r?)(n?)(b?)(q?)k(b?)(n?)(r?)/(p?)"), "{view}");
    /// ```
    pub fn view_fen(&self, viewer: Color, visibility: Visibility) -> String {
        let mut board = String::new();
        for rank in (0..8u8).rev() {
            let mut empty = 0;
            for file in 0..8u8 {
                let sq = qchess_board::Square::new(file, rank);
                let Some(p) = self.piece(sq) else {
                    empty += 1;
                    continue;
                };
                if empty > 0 {
                    board.push_str(&empty.to_string());
                    empty = 0;
                }
                if p.is_king() || self.pair_known_to(sq, viewer, visibility) {
                    board.push_str(&crate::fen::piece_token(p));
                } else {
                    // The primary type (public), a `*` when it is the current type, and a `?`
                    // for the secondary the viewer has not seen.
                    let mut letter = p.pair.primary.to_char();
                    if p.color == Color::White {
                        letter = letter.to_ascii_uppercase();
                    }
                    board.push_str(&match p.current() {
                        None => format!("({letter}?)"),
                        Some(_) => format!("[{letter}*?]"),
                    });
                }
            }
            if empty > 0 {
                board.push_str(&empty.to_string());
            }
            if rank > 0 {
                board.push('/');
            }
        }
        let text = self.to_string();
        let rest = text.split_once(' ').map_or("", |(_, r)| r);
        let out = board;
        format!("{out} {rest}")
    }

    /// This position as `viewer` sees it, with every secondary type `viewer` has not seen
    /// replaced by a draw from `rng`: the result depends only on what `viewer` knows (and the
    /// draws), never on the hidden types themselves.
    ///
    /// The draw for each side is its set-up multiset (8 pawns, 2 knights, 2 bishops, 2 rooks,
    /// 1 queen) less the secondary types of its pieces whose pair `viewer` knows, shuffled
    /// (Fisher-Yates with `u32` draws) and dealt to its unseen pieces from a1 to h8; when that
    /// pool runs short (promotions, captures), the rest are drawn uniformly from the 15 set-up
    /// types. Captured pieces are not taken out of the pool: the view cannot always say which
    /// of their types was the secondary (docs/engine.md).
    ///
    /// ```
    /// use qchess_akl::{AklPosition, Visibility};
    /// use qchess_board::Color;
    /// use rand::SeedableRng;
    /// let a = AklPosition::startpos_seeded(1);
    /// let b = AklPosition::startpos_seeded(2);
    /// let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    /// let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    /// // Nothing but the primary types is known at the start: the same draws either way.
    /// assert_eq!(
    ///     a.sample_hidden(Color::White, Visibility::Revealed, &mut r1),
    ///     b.sample_hidden(Color::White, Visibility::Revealed, &mut r2)
    /// );
    /// ```
    pub fn sample_hidden<R: rand::Rng + ?Sized>(
        &self,
        viewer: Color,
        visibility: Visibility,
        rng: &mut R,
    ) -> AklPosition {
        let mut out = self.clone();
        for color in Color::ALL {
            let mut pool: Vec<PieceKind> = standard_types().to_vec();
            let mut unseen = Vec::new();
            for (sq, p) in self.pieces() {
                if p.color != color || p.is_king() {
                    continue;
                }
                if self.pair_known_to(sq, viewer, visibility) {
                    if let Some(i) = pool.iter().position(|k| *k == p.pair.secondary) {
                        pool.remove(i);
                    }
                } else {
                    unseen.push(sq);
                }
            }
            for i in (1..pool.len()).rev() {
                let j = rng.random_range(0..=i as u32) as usize;
                pool.swap(i, j);
            }
            let all = standard_types();
            for (n, sq) in unseen.into_iter().enumerate() {
                let secondary = match pool.get(n) {
                    Some(k) => *k,
                    None => all[rng.random_range(0..all.len() as u32) as usize],
                };
                let piece = out.squares[sq.index() as usize]
                    .as_mut()
                    .expect("listed above");
                piece.pair = TypePair {
                    primary: piece.pair.primary,
                    secondary,
                };
            }
        }
        out
    }

    /// The chances of each secondary type of the piece on `sq` as `viewer` may know them: the
    /// true type (chance 1) when `viewer` knows the pair, else the distribution
    /// [`AklPosition::sample_hidden`] draws from, so the answer depends only on the view. The
    /// unseen pieces of a side share the pool of its set-up types less the known secondaries,
    /// and a shuffled pool gives each of them a uniform element of it; an unseen piece past
    /// the end of a pool that ran short (promotions, captures) gets the set-up multiset's
    /// frequencies. Empty when `sq` holds no piece; a king's is its own type.
    ///
    /// ```
    /// use qchess_akl::{AklPosition, Visibility};
    /// use qchess_board::{Color, Fraction, PieceKind, Square};
    /// // White's queen pair is public as (QR); every other White secondary is one of the
    /// // remaining 14 set-up types: a rook with chance 1/14, a pawn 8/14.
    /// let pos: AklPosition = "4k3/8/8/8/8/8/(PN?)7/3[Q*R]K3 b - 0 1".parse().unwrap();
    /// let chances = pos.secondary_chances(Square::A2, Color::Black, Visibility::Revealed);
    /// assert!(chances.contains(&(PieceKind::Rook, Fraction::new(1, 14))));
    /// assert!(chances.contains(&(PieceKind::Pawn, Fraction::new(8, 14))));
    /// ```
    pub fn secondary_chances(
        &self,
        sq: Square,
        viewer: Color,
        visibility: Visibility,
    ) -> Vec<(PieceKind, Fraction)> {
        let Some(piece) = self.piece(sq) else {
            return Vec::new();
        };
        if piece.is_king() || self.pair_known_to(sq, viewer, visibility) {
            return vec![(piece.pair.secondary, Fraction::ONE)];
        }
        let mut pool: Vec<PieceKind> = standard_types().to_vec();
        let mut rank = 0;
        let mut seen_target = false;
        for (s, p) in self.pieces() {
            if p.color != piece.color || p.is_king() {
                continue;
            }
            if self.pair_known_to(s, viewer, visibility) {
                if let Some(i) = pool.iter().position(|k| *k == p.pair.secondary) {
                    pool.remove(i);
                }
            } else if s == sq {
                seen_target = true;
            } else if !seen_target {
                rank += 1;
            }
        }
        let source: Vec<PieceKind> = if rank < pool.len() {
            pool
        } else {
            standard_types().to_vec()
        };
        let mut out: Vec<(PieceKind, Fraction)> = Vec::new();
        for kind in &source {
            if out.iter().any(|(k, _)| k == kind) {
                continue;
            }
            let count = source.iter().filter(|k| *k == kind).count() as u64;
            out.push((*kind, Fraction::new(count, source.len() as u64)));
        }
        out
    }

    /// The chances of each type a touch or a capture reveals for the piece on `sq`, as
    /// `viewer` may know them: a classical piece its type; a quantum one its primary with
    /// chance 1/2 and its secondary, as [`AklPosition::secondary_chances`] gives it, with the
    /// other 1/2. Types are listed once, primary first.
    ///
    /// ```
    /// use qchess_akl::{AklPosition, Visibility};
    /// use qchess_board::{Color, Fraction, PieceKind, Square};
    /// let pos: AklPosition = "4k3/8/8/8/8/8/8/1(RN)2K3 w - 0 1".parse().unwrap();
    /// let half = Fraction::new(1, 2);
    /// assert_eq!(
    ///     pos.collapse_chances_seen_by(Square::B1, Color::White, Visibility::OwnPairs),
    ///     vec![(PieceKind::Rook, half), (PieceKind::Knight, half)]
    /// );
    /// ```
    pub fn collapse_chances_seen_by(
        &self,
        sq: Square,
        viewer: Color,
        visibility: Visibility,
    ) -> Vec<(PieceKind, Fraction)> {
        let Some(piece) = self.piece(sq) else {
            return Vec::new();
        };
        if self.pair_known_to(sq, viewer, visibility) {
            return piece.collapse_chances();
        }
        if let PieceState::Classical(k) = piece.state {
            return vec![(k, Fraction::ONE)];
        }
        let half = Fraction::new(1, 2);
        let mut out = vec![(piece.pair.primary, half)];
        for (kind, c) in self.secondary_chances(sq, viewer, visibility) {
            let share = half * c;
            match out.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, total)) => *total = *total + share,
                None => out.push((kind, share)),
            }
        }
        out
    }
}
