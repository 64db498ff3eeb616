//! Starts `examples/server` on a loopback port for the tests and the
//! overhead example.
//!
//! The binary is `NEURO_TEST_SERVER` when set, else built once per process
//! with `go build` from the repository root. Each server runs under a small
//! `sh` watchdog that reads this process's pipe and stops the server when
//! the pipe closes, so that no server outlives the tests, however they end.

#![allow(dead_code)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The names of the API keys the servers accept (`sk-test-<name>`): each
/// test that counts requests (telemetry, rate limits) has a key of its own.
pub const KEY_NAMES: &[&str] = &[
    "main",
    "other",
    "errors",
    "quota",
    "rate",
    "retry",
    "drop",
    "telemetry",
    "snn",
    "runs",
    "bench0",
    "bench1",
    "bench2",
    "bench3",
    "bench4",
    "bench5",
    "bench6",
    "bench7",
    "bench8",
    "bench9",
    "bench10",
    "bench11",
    "bench12",
    "bench13",
    "bench14",
    "bench15",
];

/// The API key named `name` (one of KEY_NAMES).
pub fn key(name: &str) -> String {
    assert!(KEY_NAMES.contains(&name), "no test key named {name:?}");
    format!("sk-test-{name}")
}

/// A running server.
pub struct Server {
    /// The server root, such as http://127.0.0.1:41234.
    pub url: String,
    pub mock: bool,
    /// Where the server's log goes.
    pub log: PathBuf,
    // The watchdog's stdin, held open for the life of the process: the
    // watchdog stops the server when it closes. The watchdog itself is
    // never waited for; it ends with this process.
    _watchdog: Mutex<(Child, ChildStdin)>,
}

static MOCK: Mutex<Option<Arc<Server>>> = Mutex::new(None);
static REAL: Mutex<Option<Arc<Server>>> = Mutex::new(None);
static BINARY: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The process's server in mock mode, started on first use.
pub fn mock() -> Arc<Server> {
    shared(&MOCK, true)
}

/// The process's server in real mode (the models run), started on first use.
pub fn real() -> Arc<Server> {
    shared(&REAL, false)
}

fn shared(slot: &Mutex<Option<Arc<Server>>>, mock: bool) -> Arc<Server> {
    let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(srv) = &*s {
        return srv.clone();
    }
    let srv = Arc::new(start(mock));
    *s = Some(srv.clone());
    srv
}

/// The repository root (the crate is clients/rust).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// A directory for files the tests make, kept under target/.
pub fn scratch_dir() -> PathBuf {
    let dir = match option_env!("CARGO_TARGET_TMPDIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("tmp"),
    };
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The server binary: NEURO_TEST_SERVER, or one built from ./examples/server.
pub fn binary() -> PathBuf {
    let mut b = BINARY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = &*b {
        return p.clone();
    }
    let path = match std::env::var_os("NEURO_TEST_SERVER").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => {
            let out = scratch_dir().join("neuro-test-server");
            let status = Command::new("go")
                .args(["build", "-o"])
                .arg(&out)
                .arg("./examples/server")
                .current_dir(repo_root())
                .status()
                .expect("running `go build` (set NEURO_TEST_SERVER to a built server instead)");
            assert!(status.success(), "go build ./examples/server failed ({status})");
            out
        }
    };
    assert!(path.is_file(), "no server binary at {}", path.display());
    *b = Some(path.clone());
    path
}

/// Starts a server of its own (in mock mode when `mock`), with `extra`
/// flags.
pub fn start_with(mock: bool, extra: &[&str]) -> Server {
    let bin = binary();
    let name = if mock { "mock" } else { "real" };
    let log = scratch_dir().join(format!("server-{name}-{}.log", std::process::id()));
    let keys: Vec<String> = KEY_NAMES.iter().map(|n| key(n)).collect();
    let mut cmd = Command::new("sh");
    // $0 names the watchdog; "$@" is the server and its flags. The server
    // runs in the background (its stdin /dev/null) while `read` waits for
    // this process's end of the pipe to close.
    cmd.arg("-c").arg(r#""$@" & pid=$!; read _; kill $pid 2>/dev/null; wait $pid"#).arg("neuro-test-watchdog").arg(&bin);
    cmd.args(["-addr", "127.0.0.1:0", "-console=false"]);
    if mock {
        cmd.arg("-mock");
    }
    cmd.args(extra)
        .env("NEURO_API_KEYS", keys.join(","))
        .env_remove("NEURO_CORS_ORIGINS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(File::create(&log).expect("server log"));
    let mut child = cmd.spawn().expect("starting the server");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout);
        let mut line = String::new();
        let mut url = None;
        while url.is_none() && lines.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if let Some(rest) = line.strip_prefix("Serving on ") {
                url = rest.split_whitespace().next().map(str::to_string);
            }
            line.clear();
        }
        let _ = tx.send(url);
        // Keep reading, so that the server never blocks on a full pipe.
        let _ = std::io::copy(&mut lines, &mut std::io::sink());
    });
    let url = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(Some(url)) => url,
        other => {
            let log_text = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("the {name} server did not start ({other:?}); its log:\n{log_text}");
        }
    };
    Server { url, mock, log, _watchdog: Mutex::new((child, stdin)) }
}

/// Starts a server of its own.
pub fn start(mock: bool) -> Server {
    start_with(mock, &[])
}
