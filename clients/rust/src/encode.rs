//! The two encodings the client writes itself: base64 for uploaded files
//! and percent-encoding for ids in paths.

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends `data` to `out` in standard base64 with padding.
pub(crate) fn base64_into(out: &mut String, data: &[u8]) {
    out.reserve((data.len() + 2) / 3 * 4);
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        let n = u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2]);
        for shift in [18, 12, 6, 0] {
            out.push(BASE64[(n >> shift & 63) as usize] as char);
        }
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.push(BASE64[(n >> 18 & 63) as usize] as char);
            out.push(BASE64[(n >> 12 & 63) as usize] as char);
            out.push_str("==");
        }
        [a, b] => {
            let n = u32::from(a) << 16 | u32::from(b) << 8;
            out.push(BASE64[(n >> 18 & 63) as usize] as char);
            out.push(BASE64[(n >> 12 & 63) as usize] as char);
            out.push(BASE64[(n >> 6 & 63) as usize] as char);
            out.push('=');
        }
        _ => {}
    }
}

/// Percent-encodes one path segment: everything but the unreserved
/// characters of RFC 3986, so that an id can never add a segment.
pub(crate) fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
    // "." and ".." are unreserved but mean something in a path.
    match out.as_str() {
        "." => "%2E".to_string(),
        ".." => "%2E%2E".to_string(),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_rfc4648_vectors() {
        for (input, want) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        {
            let mut out = String::new();
            base64_into(&mut out, input.as_bytes());
            assert_eq!(out, want, "{input:?}");
        }
        let mut out = String::new();
        base64_into(&mut out, &[0xff, 0xfe, 0x00]);
        assert_eq!(out, "//4A");
    }

    #[test]
    fn path_segments() {
        assert_eq!(path_segment("net-abc_1.2~"), "net-abc_1.2~");
        assert_eq!(path_segment("a/b c?d"), "a%2Fb%20c%3Fd");
        assert_eq!(path_segment(".."), "%2E%2E");
        assert_eq!(path_segment("é"), "%C3%A9");
    }
}
