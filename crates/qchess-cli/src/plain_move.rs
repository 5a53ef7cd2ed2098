//! The plain move forms every variant's front end accepts, `e2e4`, `e2 e4`, `e2-e4` and the
//! promotions `e7e8q`, `e7e8=Q`, and each variant's canonical text for them: one reading shared
//! by `qchess play` and `qchess eval`, so a script can send what a player types.
//!
//! ```
//! use qchess_cli::plain_move::{cantwell_text, niels_text, rewrite};
//! assert_eq!(rewrite("e2-e4", cantwell_text), "e2e4");
//! assert_eq!(rewrite("e7 e8=q", cantwell_text), "e7e8Q");
//! assert_eq!(rewrite("e7e8Q", niels_text), "e7e8=q");
//! // Anything else is left as it is, for the variant's own notation.
//! assert_eq!(rewrite("b1^a3c3", cantwell_text), "b1^a3c3");
//! ```

use qchess_board::{PieceKind, Square};
use std::borrow::Cow;

/// Whether `word` starts with a square name such as `e2`.
pub fn starts_with_square(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 2 && (b'a'..=b'h').contains(&b[0].to_ascii_lowercase()) && b[1].is_ascii_digit()
}

/// A plain move typed `e2e4`, `e2 e4`, `e2-e4`, `E2E4`, with an optional promotion `e7e8q`,
/// `e7e8=Q`, `e7e8Q`, `e7 e8=q`. `None` when the text is not one of these forms.
pub fn plain_move(text: &str) -> Option<(Square, Square, Option<PieceKind>)> {
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    let squares_part = text.trim();
    // Only spaces or one hyphen may separate the squares.
    if squares_part.matches('-').count() > 1 {
        return None;
    }
    let b = compact.as_bytes();
    if b.len() < 4 || !starts_with_square(&compact) || !starts_with_square(&compact[2..]) {
        return None;
    }
    let from: Square = compact[0..2].parse().ok()?;
    let to: Square = compact[2..4].parse().ok()?;
    let rest = compact[4..].strip_prefix('=').unwrap_or(&compact[4..]);
    let promotion = match rest {
        "" => None,
        "q" => Some(PieceKind::Queen),
        "r" => Some(PieceKind::Rook),
        "b" => Some(PieceKind::Bishop),
        "n" => Some(PieceKind::Knight),
        _ => return None,
    };
    Some((from, to, promotion))
}

/// Cantwell's canonical text (QCAN): `e2e4`, promotion `e7e8Q`.
pub fn cantwell_text(from: Square, to: Square, promotion: Option<PieceKind>) -> String {
    let mut s = format!("{from}{to}");
    if let Some(k) = promotion {
        s.push(k.to_char().to_ascii_uppercase());
    }
    s
}

/// Niel's canonical text: `e2e4`, promotion `e7e8=q`.
pub fn niels_text(from: Square, to: Square, promotion: Option<PieceKind>) -> String {
    match promotion {
        None => format!("{from}{to}"),
        Some(k) => format!("{from}{to}={}", k.to_char().to_ascii_lowercase()),
    }
}

/// Akl's canonical text: `e2 -> e4`, promotion `e7 -> e8=Q` (the collapse left to infer).
pub fn akl_text(from: Square, to: Square, promotion: Option<PieceKind>) -> String {
    match promotion {
        None => format!("{from} -> {to}"),
        Some(k) => format!("{from} -> {to}={}", k.to_char().to_ascii_uppercase()),
    }
}

/// `text` in the variant's canonical form (`canonical`, e.g. [`cantwell_text`]) when it is a
/// plain move, else unchanged.
pub fn rewrite(
    text: &str,
    canonical: fn(Square, Square, Option<PieceKind>) -> String,
) -> Cow<'_, str> {
    match plain_move(text) {
        Some((from, to, promotion)) => Cow::Owned(canonical(from, to, promotion)),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_moves_in_every_shared_form() {
        let e2e4 = Some((Square::E2, Square::E4, None));
        for text in ["e2e4", "e2 e4", "e2-e4", "E2E4", "e2  e4", "e2 - e4"] {
            assert_eq!(plain_move(text), e2e4, "{text}");
        }
        let promo = Some((Square::E7, Square::E8, Some(PieceKind::Queen)));
        for text in ["e7e8q", "e7e8=Q", "e7e8Q", "e7 e8=q", "e7-e8=q"] {
            assert_eq!(plain_move(text), promo, "{text}");
        }
        assert_eq!(
            plain_move("a7a8n"),
            Some((Square::A7, Square::A8, Some(PieceKind::Knight)))
        );
        for text in [
            "e2", "e2e9", "e2e4k", "b1^a3c3", "e2--e4", "hlep", "e2e4.m0", "e2e4x",
        ] {
            assert_eq!(plain_move(text), None, "{text}");
        }
    }

    #[test]
    fn each_variant_has_its_canonical_form() {
        let q = Some(PieceKind::Queen);
        assert_eq!(cantwell_text(Square::E7, Square::E8, q), "e7e8Q");
        assert_eq!(niels_text(Square::E7, Square::E8, q), "e7e8=q");
        assert_eq!(akl_text(Square::E7, Square::E8, q), "e7 -> e8=Q");
        assert_eq!(akl_text(Square::E2, Square::E4, None), "e2 -> e4");
        assert_eq!(rewrite("e2 e4", niels_text), "e2e4");
        assert_eq!(rewrite("b1a3[3,4]", niels_text), "b1a3[3,4]");
        assert_eq!(rewrite("e2e4.m1", cantwell_text), "e2e4.m1");
    }
}
