//! [`Exact`]: a refusal's body written once, into a string of exactly its length.
//!
//! A refusal's body is a few dozen bytes of formatted text. Written into a growing `String`
//! it reallocates as it grows, and ends with spare room, which `Bytes` (an axum body) cannot
//! take over as it is: it allocates a header of its own to share the rest. Written here, on
//! the stack first, the body costs one allocation of its exact length, which `Bytes` takes as
//! it is.

use std::fmt;

/// How much a body may hold on the stack; a longer one is written into a `String` as it goes.
const ROOM: usize = 256;

/// A body being written: on the stack while it fits, in a `String` past that.
pub(super) struct Exact {
    buf: [u8; ROOM],
    len: usize,
    /// What did not fit, and everything written before it; empty while everything fits.
    spilled: String,
}

impl Exact {
    pub(super) fn new() -> Self {
        Self {
            buf: [0; ROOM],
            len: 0,
            spilled: String::new(),
        }
    }

    /// `args` written into a string of exactly their length.
    pub(super) fn format(args: fmt::Arguments<'_>) -> String {
        let mut exact = Self::new();
        // Writing to `Exact` never fails; a `Display` that fails leaves what it wrote, as
        // `to_string` would have panicked instead.
        let _ = fmt::write(&mut exact, args);
        exact.into_string()
    }

    /// Appends `s`.
    pub(super) fn push(&mut self, s: &str) {
        if self.spilled.is_empty() {
            if let Some(room) = self.buf.get_mut(self.len..self.len + s.len()) {
                room.copy_from_slice(s.as_bytes());
                self.len += s.len();
                return;
            }
            let mut spilled = String::with_capacity(2 * ROOM + s.len());
            spilled.push_str(self.written());
            self.spilled = spilled;
        }
        self.spilled.push_str(s);
    }

    /// What is written on the stack: whole `str`s, one after the other, so UTF-8.
    fn written(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    /// The body: exactly as long as it is, unless it did not fit on the stack.
    pub(super) fn into_string(self) -> String {
        if self.spilled.is_empty() {
            String::from(self.written())
        } else {
            self.spilled
        }
    }
}

impl fmt::Write for Exact {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s);
        Ok(())
    }
}

/// Writes a string as the contents of a JSON string, as `serde_json` escapes it: `"`, `\`
/// and the control characters below U+0020, the common ones by their short forms.
pub(super) struct Escaped<'a>(pub(super) &'a mut Exact);

impl fmt::Write for Escaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut start = 0;
        for (at, byte) in s.bytes().enumerate() {
            let short = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0x00..=0x1f => "",
                _ => continue,
            };
            // A byte below 0x80 is a whole character, so these are `str` boundaries.
            self.0.push(&s[start..at]);
            if short.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let code = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ];
                self.0.push(std::str::from_utf8(&code).unwrap_or_default());
            } else {
                self.0.push(short);
            }
            start = at + 1;
        }
        self.0.push(&s[start..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use super::*;

    #[test]
    fn a_body_is_exactly_as_long_as_it_is_on_the_stack_and_past_it() {
        let short = Exact::format(format_args!("{}: {}\n", "title", 42));
        assert_eq!(short, "title: 42\n");
        assert_eq!(short.capacity(), short.len());
        // Past the stack: written whole, in order.
        let long = "é".repeat(ROOM);
        let spilled = Exact::format(format_args!("{long}|{long}"));
        assert_eq!(spilled, format!("{long}|{long}"));
        let mut exact = Exact::new();
        exact.push("a");
        exact.push(&"b".repeat(ROOM));
        exact.push("c");
        assert_eq!(exact.into_string(), format!("a{}c", "b".repeat(ROOM)));
    }

    #[test]
    fn a_string_is_escaped_as_serde_json_escapes_it() {
        let every_control: String = (0u8..0x20).map(char::from).collect();
        for s in [
            "plain",
            "",
            "a \"quoted\" name",
            "back\\slash",
            "tab\tnew\nline\r",
            "é ü 日本 \u{7f} \u{2028}",
            every_control.as_str(),
            "\"",
        ] {
            let mut exact = Exact::new();
            exact.push("\"");
            write!(Escaped(&mut exact), "{s}").unwrap();
            exact.push("\"");
            assert_eq!(
                exact.into_string(),
                serde_json::to_string(s).unwrap(),
                "{s:?}"
            );
        }
    }
}
