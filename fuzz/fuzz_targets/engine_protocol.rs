//! The engine protocol (`qchess engine`) on arbitrary input: every line is answered or
//! refused with `info string error: ...`, never a panic or a hang. Searches are kept short:
//! `infinite` is dropped from a `go` line and `movetime 20 nodes 2000` appended (the first
//! limit reached ends the search), so a fuzz input cannot ask for an hour of search.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut input = String::new();
    let mut searches = 0;
    for line in text.lines().take(64) {
        if line.split_whitespace().next() == Some("go") {
            searches += 1;
            if searches > 4 {
                continue;
            }
            let words: Vec<&str> = line
                .split_whitespace()
                .filter(|w| *w != "infinite")
                .collect();
            input.push_str(&words.join(" "));
            input.push_str(" movetime 20 nodes 2000\n");
        } else {
            input.push_str(line);
            input.push('\n');
        }
    }
    let mut out = Vec::new();
    qchess_cli::protocol::run_on(input.as_bytes(), &mut out).expect("the loop only fails on I/O");
    let answer = String::from_utf8(out).expect("the engine writes UTF-8");
    for line in answer.lines() {
        assert!(
            line.len() <= 1 << 16,
            "an unbounded answer line: {} bytes",
            line.len()
        );
    }
});
