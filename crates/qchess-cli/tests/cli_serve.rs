//! `qchess serve`: the flags reach the server, which answers on the address it prints.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

/// The server process this test started; killed (by its own handle) when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_get(addr: &str, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn serve_listens_where_it_says_and_serves_the_page() {
    let child = Command::new(env!("CARGO_BIN_EXE_qchess"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--max-games",
            "3",
            "--memory",
            "1000000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let page = http_get(&addr, "/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("/assets/app.js"));
    let missing = http_get(&addr, "/api/games/0123?token=x");
    assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
    assert!(missing.contains("\"not_found\""));
}

#[test]
fn serve_refuses_bad_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_qchess"))
        .args(["serve", "--max-games", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-games"));
    let out = Command::new(env!("CARGO_BIN_EXE_qchess"))
        .args(["serve", "--bind", "localhost"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
