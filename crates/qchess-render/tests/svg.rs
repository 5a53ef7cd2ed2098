//! The pictures parsed back as XML: what each square says.

use qchess_board::{Color, Square};
use qchess_cantwell::Game;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// Every `data-square` element of `svg`: square -> (attributes, text of its `<text>` children).
fn squares(svg: &str) -> BTreeMap<String, (BTreeMap<String, String>, Vec<String>)> {
    let doc = roxmltree::Document::parse(svg).expect("the picture is well-formed XML");
    let mut out = BTreeMap::new();
    for node in doc.descendants().filter(|n| n.has_attribute("data-square")) {
        let attrs = node
            .attributes()
            .map(|a| (a.name().to_string(), a.value().to_string()))
            .collect();
        let texts = node
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").to_string())
            .collect();
        let name = node.attribute("data-square").unwrap().to_string();
        assert!(
            out.insert(name.clone(), (attrs, texts)).is_none(),
            "{name} twice"
        );
    }
    out
}

/// Squares whose `data-probability` is positive, with the value and the percentage label.
fn occupied(svg: &str) -> BTreeMap<String, (f64, Vec<String>)> {
    squares(svg)
        .into_iter()
        .filter_map(|(sq, (attrs, texts))| {
            let p: f64 = attrs["data-probability"].parse().unwrap();
            (p > 0.0).then(|| {
                let labels = texts.into_iter().filter(|t| t.ends_with('%')).collect();
                (sq, (p, labels))
            })
        })
        .collect()
}

#[test]
fn start_position_has_32_squares_at_100_percent() {
    let svg = qchess_render::cantwell(&Game::new());
    let all = squares(&svg);
    assert_eq!(all.len(), 64);
    let occ = occupied(&svg);
    assert_eq!(occ.len(), 32);
    for (sq, (p, labels)) in &occ {
        assert_eq!(*p, 1.0, "{sq}");
        assert_eq!(labels, &vec!["100%".to_string()], "{sq}");
    }
    assert!(occ.contains_key("e1") && occ.contains_key("h8") && !occ.contains_key("e4"));
    assert_eq!(all["e1"].0["data-piece"], "K");
    assert_eq!(all["d8"].0["data-piece"], "q");
    // Empty squares say 0 and carry no label.
    assert_eq!(all["e4"].0["data-probability"], "0");
    assert!(all["e4"].1.iter().all(|t| !t.ends_with('%')));
}

#[test]
fn split_knight_renders_two_squares_at_50_percent() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut game = Game::new();
    game.apply("b1^a3c3", &mut rng).unwrap();
    let svg = qchess_render::cantwell(&game);
    let occ = occupied(&svg);
    let halves: Vec<_> = occ.iter().filter(|(_, (p, _))| *p < 1.0).collect();
    assert_eq!(halves.len(), 2);
    for (sq, (p, labels)) in halves {
        assert!(sq == "a3" || sq == "c3", "{sq}");
        assert!((p - 0.5).abs() < 1e-12, "{sq}: {p}");
        assert_eq!(labels, &vec!["50%".to_string()]);
    }
    // The 31 other pieces stay at 100 %, b1 is empty.
    assert_eq!(occ.len(), 33);
    assert_eq!(occ.values().filter(|(p, _)| *p == 1.0).count(), 31);
    assert!(!occ.contains_key("b1"));
    // The exact float the game reports, written so that it parses back to the same bits.
    let a3: f64 = squares(&svg)["a3"].0["data-probability"].parse().unwrap();
    assert_eq!(a3, game.probability(Square::A3));
}

#[test]
fn a_split_then_slide_shows_quarters() {
    // Knight split, then one half splits again: 50 %, 25 %, 25 %.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut game = Game::new();
    for mv in ["g1^f3h3", "a7a6", "f3^d4e5"] {
        game.apply(mv, &mut rng).unwrap();
    }
    let occ = occupied(&qchess_render::cantwell(&game));
    let labels: BTreeMap<_, _> = ["h3", "d4", "e5"]
        .iter()
        .map(|s| (s.to_string(), occ[*s].1[0].clone()))
        .collect();
    assert_eq!(labels["h3"], "50%");
    assert_eq!(labels["d4"], "25%");
    assert_eq!(labels["e5"], "25%");
}

#[test]
fn niels_marks_and_pairs() {
    use qchess_niels::{Position, Rules};
    // The schools paper's example: a black rook pair on e6 (red) and d4 (blue), both marks
    // facing the opponent: an equal superposition.
    let pos: Position = "4k3/8/4[rro|1]3/5P2/3[rbo|1]4/8/8/4K3 w - - 0 1"
        .parse()
        .unwrap();
    let svg = qchess_render::niels(&pos, &Rules::default());
    let all = squares(&svg);
    assert_eq!(all.len(), 64);
    let e6 = &all["e6"].0;
    assert_eq!(e6["data-pair"], "r1");
    assert_eq!(e6["data-mark"], "red");
    assert_eq!(e6["data-facing"], "opponent");
    assert_eq!(e6["data-probability"], "0.5");
    assert_eq!(all["d4"].0["data-mark"], "blue");
    assert_eq!(all["f5"].0["data-piece"], "P");
    assert!(!all["f5"].0.contains_key("data-pair"));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let links: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("pair-link"))
        .map(|n| n.attribute("data-squares").unwrap().to_string())
        .collect();
    assert_eq!(links, vec!["e6 d4".to_string()]);
    // Marks are drawn: one red dot and one blue dot.
    let dots = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("mark"))
        .count();
    assert_eq!(dots, 2);
}

#[test]
fn niels_unequal_pair_probabilities_and_small_boards() {
    use qchess_board::Geometry;
    use qchess_niels::{Position, Rules};
    let pos = Position::startpos(Geometry::new(5, 6).unwrap()).unwrap();
    let all = squares(&qchess_render::niels(&pos, &Rules::default()));
    assert_eq!(all.len(), 30);
    assert!(all.contains_key("e6") && !all.contains_key("f1"));
    // Red facing the opponent, blue the owner: 4/6 and 2/6 (Article 7.5).
    let pos: Position = "4k3/8/4[rro|1]3/8/3[rbp|1]4/8/8/4K3 w - - 0 1"
        .parse()
        .unwrap();
    let all = squares(&qchess_render::niels(&pos, &Rules::default()));
    let p = |s: &str| all[s].0["data-probability"].parse::<f64>().unwrap();
    assert_eq!(p("e6"), 4.0 / 6.0);
    assert_eq!(p("d4"), 2.0 / 6.0);
    assert_eq!(all["d4"].0["data-facing"], "owner");
}

#[test]
fn akl_shows_only_what_the_viewer_knows() {
    use qchess_akl::{Game, Rules, Visibility};
    let game = Game::from_seed(5);
    let white = squares(&qchess_render::akl(&game.view(Color::White)));
    let black = squares(&qchess_render::akl(&game.view(Color::Black)));
    assert_eq!(white.len(), 64);
    // Revealed visibility: only the primary type of a fresh piece is known, to both players.
    assert_eq!(white["d1"].0["data-known"], "Q");
    assert_eq!(white["d1"].0["data-state"], "quantum");
    assert_eq!(black["d1"].0["data-known"], "Q");
    assert_eq!(white["e1"].0["data-known"], "K");
    assert_eq!(white["e1"].0["data-state"], "classical");
    assert_eq!(white["e8"].0["data-color"], "b");
    assert!(!white["e4"].0.contains_key("data-known"));
    // a1 is dark, h1 light.
    assert_eq!(
        white["a1"].0.get("data-dark").map(String::as_str),
        Some("true")
    );
    assert!(!white["h1"].0.contains_key("data-dark"));
    // Own pairs: White knows both types of its own pieces and only one of Black's.
    let rules = Rules {
        visibility: Visibility::OwnPairs,
    };
    let own = qchess_akl::Game::with_rules(game.position().clone(), rules);
    let white = squares(&qchess_render::akl(&own.view(Color::White)));
    let secondary = game.position().piece(Square::D1).unwrap().pair.secondary;
    let expected: String = [
        'Q',
        qchess_board::Piece::new(Color::White, secondary).fen_char(),
    ]
    .iter()
    .collect();
    assert_eq!(white["d1"].0["data-known"], expected);
    assert_eq!(white["d8"].0["data-known"], "q");
}
