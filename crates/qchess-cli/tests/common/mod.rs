//! The one way these tests run the `qchess` binary.

/// What one run of the binary left behind.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `qchess args` with `stdin` piped in; kills it (and fails) after 60 s so a hung
/// process cannot stall CI.
pub fn qchess_bytes(args: &[&str], stdin: &[u8]) -> Run {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_qchess"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the qchess binary starts");
    let mut input = child.stdin.take().expect("piped stdin");
    let data = stdin.to_vec();
    // Feed and drain on threads: a large answer must not block on a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let mut out_pipe = child.stdout.take().expect("piped stdout");
    let mut err_pipe = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait on qchess") {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("qchess {args:?} ran for more than 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    writer.join().expect("stdin writer");
    Run {
        code: status.code(),
        stdout: String::from_utf8(out_reader.join().expect("stdout reader"))
            .expect("stdout is UTF-8"),
        stderr: String::from_utf8_lossy(&err_reader.join().expect("stderr reader")).into_owned(),
    }
}
