//! Counts and spans as people write them, for the summary, the captions and the verdicts.

use core::time::Duration;

/// A count with its thousands grouped: 36,000,000.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A span as people say it: "90 s", "5 min", "1 h", "250 ms".
pub(crate) fn span(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        0 => "0 s".into(),
        ms if ms.is_multiple_of(3_600_000) => format!("{} h", ms / 3_600_000),
        ms if ms.is_multiple_of(60_000) && ms >= 120_000 => format!("{} min", ms / 60_000),
        ms if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        ms => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(36_000_000), "36,000,000");
    }

    #[test]
    fn spans_are_written_in_the_largest_whole_unit() {
        let s = Duration::from_secs;
        assert_eq!(span(s(3600)), "1 h");
        assert_eq!(span(s(300)), "5 min");
        assert_eq!(span(s(90)), "90 s");
        assert_eq!(span(Duration::from_millis(250)), "250 ms");
    }
}
