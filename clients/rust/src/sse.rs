//! Server-sent events, read incrementally into typed chunks.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::error::{DecodeError, ErrorEnvelope, TransportError};
use crate::Error;

/// Bounds one line and one event: a chunk with many log-probabilities or
/// much spiking activity is some kilobytes, so this is generous, and a
/// broken server cannot make the client buffer without limit.
const MAX_EVENT_BYTES: usize = 8 << 20;

/// Reads the data of server-sent events (the WHATWG EventSource format):
/// `data:` lines are joined with newlines, a blank line ends an event,
/// comments and other fields are skipped.
pub(crate) struct EventReader<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    data: Vec<u8>,
}

impl<R: Read> EventReader<R> {
    pub(crate) fn new(r: R) -> Self {
        EventReader { inner: BufReader::with_capacity(16 << 10, r), line: Vec::new(), data: Vec::new() }
    }

    /// The data of the next event that has data, or None at the end of
    /// the input. An event cut off by the end is an UnexpectedEof error.
    pub(crate) fn next_event(&mut self) -> io::Result<Option<&[u8]>> {
        self.data.clear();
        let mut have = false;
        loop {
            if !self.read_line()? {
                return if have { Err(io::ErrorKind::UnexpectedEof.into()) } else { Ok(None) };
            }
            let line = self.line.as_slice();
            if line.is_empty() {
                if have {
                    return Ok(Some(&self.data));
                }
                continue;
            }
            if line[0] == b':' {
                continue;
            }
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(i) => (&line[..i], line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..])),
                None => (line, &[][..]),
            };
            if field != b"data" {
                continue;
            }
            if have {
                self.data.push(b'\n');
            }
            if self.data.len() + value.len() > MAX_EVENT_BYTES {
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("event larger than {MAX_EVENT_BYTES} bytes")));
            }
            self.data.extend_from_slice(value);
            have = true;
        }
    }

    /// Reads a line without its end (\n or \r\n) into self.line; false
    /// at the end of the input.
    fn read_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return if self.line.is_empty() { Ok(false) } else { Err(io::ErrorKind::UnexpectedEof.into()) };
            }
            let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.line.extend_from_slice(&buf[..take]);
            self.inner.consume(take);
            if self.line.len() > MAX_EVENT_BYTES {
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("line longer than {MAX_EVENT_BYTES} bytes")));
            }
            if done {
                self.line.pop();
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(true);
            }
        }
    }
}

type Body = Box<dyn Read + Send + Sync + 'static>;

/// A streamed answer: an iterator of its chunks, decoded as they arrive.
///
/// The iterator ends after the server's `data: [DONE]` or, for a
/// response's stream, after its last event (`response.completed`,
/// `response.incomplete` or `response.failed`; the Responses API sends no
/// `[DONE]`). An error (an error chunk from the server, a broken
/// connection, a stream that ends before its end) is yielded once, and then
/// the iterator ends. (A response's stream carries a generation error as an
/// `error` event instead, followed by `response.failed`.)
/// Dropping the stream closes the connection, which makes the server stop
/// generating at once.
pub struct Stream<T> {
    events: Option<EventReader<Body>>,
    status: u16,
    request_id: Option<String>,
    /// Says whether an item is the stream's last (None: it ends at
    /// `data: [DONE]`); `ended` that one came.
    last: Option<fn(&T) -> bool>,
    ended: bool,
    _chunk: PhantomData<fn() -> T>,
}

impl<T> Stream<T> {
    pub(crate) fn new(body: Body, status: u16, request_id: Option<String>) -> Self {
        Stream { events: Some(EventReader::new(body)), status, request_id, last: None, ended: false, _chunk: PhantomData }
    }

    /// The stream ends after the item for which last is true, instead of at
    /// `data: [DONE]`.
    pub(crate) fn ending_after(mut self, last: fn(&T) -> bool) -> Self {
        self.last = Some(last);
        self
    }

    /// The `x-request-id` of the response, to quote in a report.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
}

impl<T> fmt::Debug for Stream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("open", &self.events.is_some()).field("request_id", &self.request_id).finish()
    }
}

impl<T: DeserializeOwned> Iterator for Stream<T> {
    type Item = crate::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        let events = self.events.as_mut()?;
        if self.ended {
            // Reads what follows the last event (normally the end of the
            // response), then closes.
            let _ = events.next_event();
            self.events = None;
            return None;
        }
        let responses = self.last.is_some();
        let item = match events.next_event() {
            Ok(Some(b"[DONE]")) => None,
            Ok(Some(data)) => Some(decode_event(data, self.status, &self.request_id)),
            Ok(None) => Some(Err(truncated(&self.request_id, responses))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Some(Err(truncated(&self.request_id, responses))),
            Err(e) => Some(Err(crate::client::read_error(e))),
        };
        if let (Some(Ok(v)), Some(last)) = (&item, self.last) {
            self.ended = last(v);
        }
        if !matches!(item, Some(Ok(_))) {
            self.events = None; // closes the connection
        }
        item
    }
}

/// After its end or its error, a stream yields nothing more.
impl<T: DeserializeOwned> std::iter::FusedIterator for Stream<T> {}

fn truncated(request_id: &Option<String>, responses: bool) -> Error {
    let id = request_id.as_deref().unwrap_or("unknown");
    let end = if responses { "its last event" } else { "[DONE]" };
    Error::Transport(TransportError::new(format!("stream ended before {end} (request {id})"), true, None))
}

/// Decodes one event: a chunk, or the error event that ends a stream (a
/// chunk never has an "error" key).
fn decode_event<T: DeserializeOwned>(data: &[u8], status: u16, request_id: &Option<String>) -> crate::Result<T> {
    if data.windows(7).any(|w| w == b"\"error\"") {
        if let Ok(ErrorEnvelope { error: Some(e) }) = serde_json::from_slice::<ErrorEnvelope>(data) {
            return Err(e.into_error(status, request_id.clone(), None));
        }
    }
    serde_json::from_slice(data).map_err(|e| Error::Decode(DecodeError::new(status, data, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &str) -> (Vec<String>, Option<io::ErrorKind>) {
        let mut r = EventReader::new(input.as_bytes());
        let mut out = Vec::new();
        loop {
            match r.next_event() {
                Ok(Some(d)) => out.push(String::from_utf8(d.to_vec()).unwrap()),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e.kind())),
            }
        }
    }

    #[test]
    fn event_format() {
        let (ev, err) = events("data: a\n\n: comment\nevent: x\nid: 1\ndata:b\ndata:  c\n\r\n\n\ndata\n\ndata: [DONE]\n\n");
        assert_eq!(ev, ["a", "b\n c", "", "[DONE]"]);
        assert_eq!(err, None);
        let (ev, err) = events("data: a\r\n\r\ndata: b\n");
        assert_eq!(ev, ["a"]);
        assert_eq!(err, Some(io::ErrorKind::UnexpectedEof), "an event without its blank line");
        let (_, err) = events("data: a\n\ndata: b");
        assert_eq!(err, Some(io::ErrorKind::UnexpectedEof), "a line without its end");
    }

    /// A reader that returns one byte per read, as a slow network would.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn events_split_across_reads() {
        let input = "data: {\"x\":1}\r\n\r\ndata: [DONE]\n\n";
        let mut r = EventReader::new(Trickle(input.as_bytes()));
        assert_eq!(r.next_event().unwrap(), Some(&b"{\"x\":1}"[..]));
        assert_eq!(r.next_event().unwrap(), Some(&b"[DONE]"[..]));
        assert_eq!(r.next_event().unwrap(), None);
    }

    #[test]
    fn oversized_line_is_refused() {
        let input = format!("data: {}\n\n", "x".repeat(MAX_EVENT_BYTES + 1));
        let (_, err) = events(&input);
        assert_eq!(err, Some(io::ErrorKind::InvalidData));
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Chunk {
        x: i32,
    }

    fn stream(input: &'static str) -> Vec<Result<Chunk, String>> {
        Stream::<Chunk>::new(Box::new(input.as_bytes()), 200, Some("req_1".into())).map(|r| r.map_err(|e| e.to_string())).collect()
    }

    /// A response's stream: named events, no [DONE]; it ends after the
    /// item that `last` picks, and before it is a truncated stream.
    #[test]
    fn stream_ending_after_an_event() {
        fn last(c: &Chunk) -> bool {
            c.x == 9
        }
        let run = |input: &'static str| -> Vec<Result<Chunk, String>> {
            Stream::<Chunk>::new(Box::new(input.as_bytes()), 200, Some("req_1".into()))
                .ending_after(last)
                .map(|r| r.map_err(|e| e.to_string()))
                .collect()
        };
        let whole = run("event: a\ndata: {\"x\":1}\n\nevent: b\ndata: {\"x\":9}\n\nevent: c\ndata: {\"x\":3}\n\n");
        assert_eq!(whole, [Ok(Chunk { x: 1 }), Ok(Chunk { x: 9 })]);
        let cut = run("event: a\ndata: {\"x\":1}\n\n");
        assert_eq!(cut.len(), 2);
        assert!(cut[1].as_ref().unwrap_err().contains("stream ended before its last event (request req_1)"), "{cut:?}");
    }

    #[test]
    fn stream_items() {
        assert_eq!(stream("data: {\"x\":1}\n\ndata: {\"x\":2}\n\ndata: [DONE]\n\n"), [Ok(Chunk { x: 1 }), Ok(Chunk { x: 2 })]);
        let cut = stream("data: {\"x\":1}\n\n");
        assert_eq!(cut.len(), 2);
        assert!(cut[1].as_ref().unwrap_err().contains("stream ended before [DONE] (request req_1)"), "{cut:?}");
        let err = stream("data: {\"x\":1}\n\ndata: {\"error\":{\"message\":\"device lost\",\"type\":\"server_error\",\"param\":null,\"code\":\"internal_error\"}}\n\ndata: {\"x\":3}\n\n");
        assert_eq!(err, [Ok(Chunk { x: 1 }), Err("neuro: 200 internal_error: device lost [request req_1]".into())]);
        let bad = stream("data: {\"x\":\"one\"}\n\ndata: [DONE]\n\n");
        assert_eq!(bad.len(), 1);
        assert!(bad[0].as_ref().unwrap_err().starts_with("neuro: decoding a 200 response"), "{bad:?}");
    }
}
