//! [`Format`]: which body a refusal is written in, from the request's `Accept`.

use http::HeaderMap;
use http::header::ACCEPT;

/// The media type of RFC 9457 problem details in JSON.
pub(super) const PROBLEM_JSON: &str = "application/problem+json";

/// The ranges that match the text body, the most specific first.
const TEXT: [&str; 3] = ["text/plain", "text/*", "*/*"];

/// The ranges that match the problem body, the most specific first: `application/json`
/// holds `application/problem+json` here, as a JSON client reads either.
const PROBLEM: [&str; 4] = [PROBLEM_JSON, "application/json", "application/*", "*/*"];

/// A weight of 1, in thousandths.
const ONE: u16 = 1000;

/// The body a refusal's response is written in.
///
/// [`Format::from_accept`] picks it from the request's `Accept` fields: problem details
/// (RFC 9457) for a client that would rather read JSON, whether it names
/// `application/problem+json` or only `application/json`, one line of plain text for
/// everyone else, including a client that accepts anything (`*/*`, curl's default), since a
/// person reading a terminal is better served by a sentence than by JSON.
///
/// # Examples
///
/// ```
/// use http::HeaderMap;
/// use ironward_tower::http::Format;
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(Format::from_accept(&headers), Format::Text);
/// headers.insert("accept", "application/json".parse().unwrap());
/// assert_eq!(Format::from_accept(&headers), Format::Problem);
/// headers.insert("accept", "text/plain, application/problem+json;q=0.9".parse().unwrap());
/// assert_eq!(Format::from_accept(&headers), Format::Text);
/// headers.insert("accept", "application/problem+json;q=nan".parse().unwrap());
/// assert_eq!(Format::from_accept(&headers), Format::Problem);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// `text/plain; charset=utf-8`: the refusal's title and its one-line reason.
    #[default]
    Text,
    /// `application/problem+json`: RFC 9457 problem details.
    Problem,
}

impl Format {
    /// The format the request's `Accept` fields weigh higher: [`Format::Problem`] when the
    /// problem body's weight is above the text's, [`Format::Text`] otherwise.
    ///
    /// This is RFC 9110 §12.5.1's negotiation between the two bodies there are:
    ///
    /// - **Each body's weight is that of the most specific range that matches it**: for the
    ///   text, `text/plain`, then `text/*`, then `*/*`; for the problem, which is answered as
    ///   `application/problem+json`, that type, then `application/json` (a JSON client that
    ///   does not know RFC 9457's type reads the problem as well), then `application/*`,
    ///   then `*/*`. A body that no range matches weighs 0, as does every body when there is
    ///   no `Accept`. So `application/json` and `application/*` get the problem (they accept
    ///   no text), and `application/problem+json;q=0, application/json` the text (the more
    ///   specific range refuses the problem).
    /// - **A tie goes to the text**: `*/*`, a browser's `text/html, …, */*;q=0.8`, a client
    ///   that names `text/plain` and `application/json` alike, and a request without
    ///   `Accept` or that accepts neither (`image/png`; a server may then answer anyway).
    /// - **Weights follow RFC 9110 §12.4.2's grammar**: 0 to 1 with at most three decimals
    ///   (`0`, `0.5`, `1.000`); 0 refuses. A `q` outside the grammar is read as 1, as a
    ///   malformed field should not cost the client the body it asked for: a word (`abc`),
    ///   `nan`, `inf` and `infinity` in any case and sign, a number out of range (`-1`,
    ///   `-0`, `2`, `1.5`) or with more than three decimals (`0.0001`, `0.0000`), an
    ///   exponent (`1e-3`), an empty value. A client that means to refuse a type writes
    ///   `q=0`, the one spelling the grammar gives.
    ///
    /// Media types are compared without regard to case (RFC 9110 §8.3.1) and their
    /// parameters other than `q` are ignored; a field that is not visible ASCII is skipped.
    pub fn from_accept(headers: &HeaderMap) -> Self {
        // No `Accept` at all is the text: settled without looking the field up, for every
        // request a layer answers or might answer.
        if headers.is_empty() {
            return Self::Text;
        }
        let mut text = Match::default();
        let mut problem = Match::default();
        let members = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','));
        for member in members {
            let (range, weight) = member_of(member);
            text.offer(&TEXT, range, weight);
            problem.offer(&PROBLEM, range, weight);
        }
        if problem.weight > text.weight {
            Self::Problem
        } else {
            Self::Text
        }
    }
}

/// The most specific range of an `Accept` list seen so far to match one body, and its
/// weight.
#[derive(Default)]
struct Match {
    /// 0 for none; higher is more specific.
    specificity: usize,
    /// In thousandths.
    weight: u16,
}

impl Match {
    /// Takes in the member `range` of `weight` if it is one of `ranges` (the most specific
    /// first) and at least as specific as the range kept; of two equally specific ranges,
    /// the higher weight counts.
    fn offer(&mut self, ranges: &[&str], range: &str, weight: u16) {
        let Some(index) = ranges.iter().position(|r| range.eq_ignore_ascii_case(r)) else {
            return;
        };
        let specificity = ranges.len() - index;
        if specificity > self.specificity {
            *self = Self {
                specificity,
                weight,
            };
        } else if specificity == self.specificity {
            self.weight = self.weight.max(weight);
        }
    }
}

/// One member of an `Accept` list: its media range, trimmed, and its weight in thousandths,
/// 1 when it has no `q` or one outside the grammar ([`qvalue`]).
fn member_of(member: &str) -> (&str, u16) {
    let mut parts = member.split(';');
    let range = parts.next().unwrap_or_default().trim();
    let weight = parts
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
        .and_then(|(_, q)| qvalue(q.trim()))
        .unwrap_or(ONE);
    (range, weight)
}

/// A weight in thousandths, if `text` is one by RFC 9110 §12.4.2:
/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`.
///
/// Integers only, so no float parsing lets `nan` or `inf` in.
fn qvalue(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let thousandths = fraction
        .bytes()
        .zip([100, 10, 1])
        .map(|(digit, place)| u16::from(digit - b'0') * place)
        .sum::<u16>();
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(ONE),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn format(accepts: &[&'static str]) -> Format {
        let mut headers = HeaderMap::new();
        for accept in accepts {
            headers.append(ACCEPT, HeaderValue::from_static(accept));
        }
        Format::from_accept(&headers)
    }

    #[test]
    fn a_client_asking_for_json_gets_problem_details() {
        assert_eq!(format(&["application/problem+json"]), Format::Problem);
        assert_eq!(
            format(&["text/html, Application/Problem+JSON"]),
            Format::Problem
        );
        // In a second field line of its own, as a proxy may split the list.
        assert_eq!(
            format(&["text/html", "application/problem+json"]),
            Format::Problem
        );
        // A JSON client that does not know RFC 9457's media type.
        assert_eq!(format(&["application/json"]), Format::Problem);
        assert_eq!(
            format(&["Application/JSON; charset=utf-8"]),
            Format::Problem
        );
        assert_eq!(
            format(&["application/json, text/html;q=0.9"]),
            Format::Problem
        );
        assert_eq!(format(&["*/*;q=0.5, application/json"]), Format::Problem);
        // A client that accepts any application type but no text gets the one it accepts.
        assert_eq!(format(&["application/*"]), Format::Problem);
        assert_eq!(format(&["*/*, text/plain;q=0"]), Format::Problem);
    }

    #[test]
    fn text_goes_to_everyone_else_and_wins_a_tie() {
        assert_eq!(format(&[]), Format::Text);
        assert_eq!(format(&["*/*"]), Format::Text);
        assert_eq!(format(&["text/plain"]), Format::Text);
        assert_eq!(format(&["text/plain, application/json"]), Format::Text);
        assert_eq!(format(&["text/*, application/*"]), Format::Text);
        assert_eq!(
            format(&["application/json;q=0.5, text/plain"]),
            Format::Text
        );
        // A browser's default: text and JSON both come through `*/*` at 0.8.
        assert_eq!(
            format(&["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"]),
            Format::Text
        );
        // Neither is acceptable: the server may answer anyway (RFC 9110 §12.5.1), in text.
        assert_eq!(format(&["image/png"]), Format::Text);
        assert_eq!(format(&["*/json, application"]), Format::Text);
    }

    // RFC 9110 §12.5.1: the most specific range that matches decides, and
    // `application/json` holds `application/problem+json` here.
    #[test]
    fn the_most_specific_range_decides() {
        assert_eq!(
            format(&["application/problem+json;q=0, application/json"]),
            Format::Text
        );
        assert_eq!(
            format(&["application/json;q=0, application/*"]),
            Format::Text
        );
        assert_eq!(
            format(&["application/*;q=0, application/json"]),
            Format::Problem
        );
        assert_eq!(
            format(&["text/plain;q=0.2, */*;q=0.9, application/json;q=0.3"]),
            Format::Problem
        );
    }

    // RFC 9110 §12.4.2: a weight of 0 means "not acceptable".
    #[test]
    fn a_weight_of_zero_refuses_it() {
        assert_eq!(format(&["application/problem+json;q=0"]), Format::Text);
        assert_eq!(
            format(&["application/problem+json ; Q=0.000"]),
            Format::Text
        );
        assert_eq!(
            format(&["application/problem+json;q=0.001"]),
            Format::Problem
        );
        assert_eq!(
            format(&["application/problem+json;charset=utf-8;q=1"]),
            Format::Problem
        );
    }

    // RFC 9110 §12.4.2: a qvalue is 0 to 1 with at most three decimals. Rust's float parser
    // also takes `nan`, `inf` and `infinity`, which are no weight: every value outside the
    // grammar is read as 1, NaN and the infinities with the rest.
    #[test]
    fn a_weight_outside_the_qvalue_grammar_is_read_as_one() {
        for q in [
            "nan",
            "NaN",
            "-nan",
            "+nan",
            "inf",
            "-inf",
            "+inf",
            "infinity",
            "-infinity",
            "Infinity",
            "-1",
            "-0",
            "+1",
            "2",
            "1.5",
            "1.001",
            "0.0001",
            "0.0000",
            "1e-3",
            ".5",
            "00",
            "0x1",
            "abc",
            "",
        ] {
            let member = std::format!("application/problem+json;q={q}");
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_str(&member).unwrap());
            assert_eq!(Format::from_accept(&headers), Format::Problem, "q={q}");
            // Text read the same way wins a tie.
            let both = std::format!("application/json;q={q}, text/plain;q={q}");
            headers.insert(ACCEPT, HeaderValue::from_str(&both).unwrap());
            assert_eq!(Format::from_accept(&headers), Format::Text, "q={q}");
        }
        for (q, format) in [
            ("0", Format::Text),
            ("0.", Format::Text),
            ("0.0", Format::Text),
            ("0.000", Format::Text),
            ("0.001", Format::Problem),
            ("0.5", Format::Problem),
            ("1", Format::Problem),
            ("1.", Format::Problem),
            ("1.000", Format::Problem),
        ] {
            let member = std::format!("application/json;q={q}");
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_str(&member).unwrap());
            assert_eq!(Format::from_accept(&headers), format, "q={q}");
        }
        // Against text at 0.5, a NaN is 1, not 0.
        assert_eq!(
            format(&["text/plain;q=0.5, application/problem+json;q=nan"]),
            Format::Problem
        );
    }

    #[test]
    fn malformed_fields_do_not_panic() {
        assert_eq!(format(&["application/problem+json;q=abc"]), Format::Problem);
        assert_eq!(format(&[";;;,,,="]), Format::Text);
        assert_eq!(format(&["application/problem+json;q"]), Format::Problem);
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_bytes(b"application/problem+json\xff").unwrap(),
        );
        assert_eq!(Format::from_accept(&headers), Format::Text);
    }
}
