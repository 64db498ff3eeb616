//! A scripted HTTP server on a loopback port, for what a real server does
//! not do on demand: fail after reading a request, hang, ask for a retry.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the stub does with one connection's request.
pub enum Reply {
    /// Answers with these bytes, then closes the connection.
    Raw(String),
    /// Reads the request and closes the connection without a word.
    Close,
    /// Reads the request and says nothing for this long, then closes.
    Hang(Duration),
    /// Answers with these bytes, keeps the connection open, and serves
    /// the next request on it with the next reply.
    KeepAlive(String, Box<Reply>),
}

/// A JSON response that keeps the connection open.
pub fn keep_alive(body: &str, next: Reply) -> Reply {
    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
    Reply::KeepAlive(head + body, Box::new(next))
}

/// A response with a status, headers and a body (Connection: close).
pub fn http(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = format!("HTTP/1.1 {status} Stub\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for (k, v) in headers {
        s += &format!("{k}: {v}\r\n");
    }
    s += "\r\n";
    s += body;
    Reply::Raw(s)
}

/// A JSON response.
pub fn json(status: u16, body: &str) -> Reply {
    http(status, &[("Content-Type", "application/json"), ("X-Request-Id", "req_stub")], body)
}

/// An error response in the API's shape.
pub fn api_error(status: u16, code: &str, retry_after: Option<&str>) -> Reply {
    let body = format!(r#"{{"error":{{"message":"stub says {code}","type":"rate_limit_error","param":null,"code":"{code}"}}}}"#);
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(ra) = retry_after {
        headers.push(("Retry-After", ra));
    }
    http(status, &headers, &body)
}

/// An event stream of these events, ended by closing the connection.
pub fn events(events: &[&str]) -> Reply {
    let mut s = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    for e in events {
        s += &format!("data: {e}\n\n");
    }
    Reply::Raw(s)
}

/// A request the stub received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

pub struct Stub {
    /// The stub's root URL.
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Stub {
    /// Serves one connection per reply, in order.
    pub fn start(replies: Vec<Reply>) -> Stub {
        Stub::on(TcpListener::bind("127.0.0.1:0").unwrap(), replies)
    }

    /// Serves on a listener the caller bound.
    pub fn on(listener: TcpListener, replies: Vec<Reply>) -> Stub {
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for reply in replies {
                let (conn, _) = match listener.accept() {
                    Ok(c) => c,
                    Err(_) => return,
                };
                let log = log.clone();
                std::thread::spawn(move || serve(conn, reply, &log));
            }
        });
        Stub { url, seen }
    }

    /// The requests received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests received once `quiet` has passed without a new one.
    pub fn settled(&self, quiet: Duration) -> Vec<Seen> {
        let mut n = self.seen().len();
        loop {
            std::thread::sleep(quiet);
            let m = self.seen().len();
            if m == n {
                return self.seen();
            }
            n = m;
        }
    }
}

fn serve(conn: TcpStream, reply: Reply, log: &Mutex<Vec<Seen>>) {
    let mut r = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    let mut reply = reply;
    loop {
        if !read_request(&mut r, log) {
            return;
        }
        match reply {
            Reply::Raw(s) => {
                let _ = conn.write_all(s.as_bytes());
            }
            Reply::Close => {}
            Reply::Hang(d) => std::thread::sleep(d),
            Reply::KeepAlive(s, next) => {
                let _ = conn.write_all(s.as_bytes());
                reply = *next;
                continue;
            }
        }
        let _ = conn.shutdown(std::net::Shutdown::Both);
        return;
    }
}

/// Reads one request into the log; false at the end of the connection.
fn read_request(r: &mut BufReader<TcpStream>, log: &Mutex<Vec<Seen>>) -> bool {
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return false;
    }
    let at = Instant::now();
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line.trim_end().is_empty() {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len: usize = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-length")).and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    let _ = r.read_exact(&mut body);
    log.lock().unwrap().push(Seen { at, method, path, headers, body });
    true
}
