//! When a failed call is sent again, and after how long.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The retry settings of a client.
#[derive(Debug, Clone)]
pub(crate) struct RetryPolicy {
    /// Retries after the first attempt.
    pub(crate) max_retries: u32,
    /// The first backoff; each retry doubles it, up to `max_backoff`.
    pub(crate) initial_backoff: Duration,
    pub(crate) max_backoff: Duration,
    /// The longest Retry-After the client waits for; a server that asks
    /// for longer gets its error returned at once.
    pub(crate) max_retry_after: Duration,
    /// Also retry a POST whose connection failed after the request was
    /// sent (the server may have run it).
    pub(crate) non_idempotent: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            non_idempotent: false,
        }
    }
}

/// Why an attempt failed, as far as retrying is concerned.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failure {
    /// The server answered with this status (and maybe Retry-After).
    Status { status: u16, retry_after: Option<Duration>, quota: bool },
    /// The connection failed; `sent` when the request may have reached
    /// the server. `permanent` for failures a retry cannot mend (a bad
    /// URL, too many redirects).
    Connection { sent: bool, permanent: bool },
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first) of a call
    /// that failed with `failure`, or None when it is not retried.
    pub(crate) fn delay(&self, retry: u32, idempotent: bool, failure: Failure) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        match failure {
            // A quota stays exceeded until the caller deletes something.
            Failure::Status { status: 429, quota: true, .. } => None,
            Failure::Status { status: 429 | 503, retry_after: Some(d), .. } => (d <= self.max_retry_after).then_some(d),
            Failure::Status { status: 429 | 503, retry_after: None, .. } => Some(self.backoff(retry)),
            Failure::Status { .. } => None,
            Failure::Connection { permanent: true, .. } => None,
            Failure::Connection { sent, .. } if !sent || idempotent || self.non_idempotent => Some(self.backoff(retry)),
            Failure::Connection { .. } => None,
        }
    }

    /// Exponential backoff with jitter: initial × 2^retry, capped, less up
    /// to a quarter at random so that clients that failed together do not
    /// come back together.
    fn backoff(&self, retry: u32) -> Duration {
        let base = self.initial_backoff.saturating_mul(1u32 << retry.min(16)).min(self.max_backoff);
        base.mul_f64(1.0 - 0.25 * random_unit())
    }
}

/// A number in [0, 1) from the standard library's per-process random
/// keys; good enough for jitter.
fn random_unit() -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses Retry-After: delay-seconds, or an HTTP date (IMF-fixdate, as
/// servers write it). Anything else, or a date in the past, is None.
pub(crate) fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(s) = v.parse::<u64>() {
        return Some(Duration::from_secs(s));
    }
    let at = parse_http_date(v)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    at.checked_sub(now).map(Duration::from_secs)
}

/// Parses "Sun, 06 Nov 1994 08:49:37 GMT" into Unix seconds.
fn parse_http_date(v: &str) -> Option<u64> {
    let mut parts = v.split(' ');
    let (_weekday, day, month, year, time, zone) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if zone != "GMT" || parts.next().is_some() {
        return None;
    }
    let day: u64 = day.parse().ok()?;
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=31).contains(&day) || year < 1970 || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86400 + h * 3600 + m * 60 + s)
}

/// Days since 1970-01-01 of a date in the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm), for years from 1970.
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, retry_after: Option<u64>) -> Failure {
        Failure::Status { status, retry_after: retry_after.map(Duration::from_secs), quota: false }
    }

    #[test]
    fn what_is_retried() {
        let p = RetryPolicy::default();
        let post = false;
        assert_eq!(p.delay(0, post, status(429, Some(1))), Some(Duration::from_secs(1)));
        assert_eq!(p.delay(0, post, status(503, Some(0))), Some(Duration::ZERO));
        assert!(p.delay(0, post, status(503, None)).is_some());
        assert_eq!(p.delay(0, post, status(429, Some(3600))), None, "a wait longer than max_retry_after");
        assert_eq!(p.delay(0, post, Failure::Status { status: 429, retry_after: None, quota: true }), None);
        for s in [400, 401, 403, 404, 409, 413, 422, 500, 502] {
            assert_eq!(p.delay(0, true, status(s, None)), None, "{s}");
        }
        assert!(p.delay(0, post, Failure::Connection { sent: false, permanent: false }).is_some());
        assert!(p.delay(0, true, Failure::Connection { sent: true, permanent: false }).is_some());
        assert_eq!(p.delay(0, post, Failure::Connection { sent: true, permanent: false }), None);
        assert_eq!(p.delay(0, true, Failure::Connection { sent: false, permanent: true }), None);
        let asked = RetryPolicy { non_idempotent: true, ..RetryPolicy::default() };
        assert!(asked.delay(0, post, Failure::Connection { sent: true, permanent: false }).is_some());
        assert_eq!(p.delay(2, true, status(503, None)), None, "after max_retries");
    }

    #[test]
    fn backoff_doubles_with_jitter_and_a_cap() {
        let p = RetryPolicy::default();
        for retry in 0..8 {
            let d = p.backoff(retry);
            let base = (Duration::from_millis(500) * (1 << retry)).min(Duration::from_secs(8));
            assert!(d <= base && d >= base.mul_f64(0.75), "retry {retry}: {d:?}");
        }
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), None, "in the past");
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784111777));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"), Some(1835438400));
        let later = parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT").unwrap();
        assert!(later > Duration::from_secs(365 * 86400));
    }
}
