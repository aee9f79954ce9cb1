//! [`Format`]: which body a refusal is written in, from the request's `Accept`.

use http::HeaderMap;
use http::header::ACCEPT;

/// The media type of RFC 9457 problem details in JSON.
pub(super) const PROBLEM_JSON: &str = "application/problem+json";

/// The body a refusal's response is written in.
///
/// [`Format::from_accept`] picks it from the request's `Accept` fields: problem details
/// (RFC 9457) for a client that asks for `application/problem+json`, one line of plain text
/// for everyone else, including a client that accepts anything (`*/*`, curl's default),
/// since a person reading a terminal is better served by a sentence than by JSON.
///
/// # Examples
///
/// ```
/// use http::HeaderMap;
/// use ironward_tower::http::Format;
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(Format::from_accept(&headers), Format::Text);
/// headers.insert("accept", "application/json, application/problem+json;q=0.9".parse().unwrap());
/// assert_eq!(Format::from_accept(&headers), Format::Problem);
/// headers.insert("accept", "application/problem+json;q=0".parse().unwrap());
/// assert_eq!(Format::from_accept(&headers), Format::Text);
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
    /// [`Format::Problem`] when any `Accept` field lists `application/problem+json` with a
    /// weight above zero; [`Format::Text`] otherwise.
    ///
    /// The media type is compared without regard to case (RFC 9110 §8.3.1) and its
    /// parameters other than `q` are ignored; a `q` that is not a number is read as 1, as a
    /// malformed field should not cost the client the body it asked for. Only the exact
    /// type counts: `application/*` and `*/*` accept anything, and a client that accepts
    /// anything gets the text.
    pub fn from_accept(headers: &HeaderMap) -> Self {
        let asked = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(names_problem);
        if asked { Self::Problem } else { Self::Text }
    }
}

/// Whether one member of an `Accept` list is `application/problem+json` with a weight
/// above zero.
fn names_problem(member: &str) -> bool {
    let mut parts = member.split(';');
    let media = parts.next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case(PROBLEM_JSON) {
        return false;
    }
    let weight = parts
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
        .and_then(|(_, q)| q.trim().parse::<f32>().ok())
        .unwrap_or(1.0);
    weight > 0.0
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
    fn only_a_client_asking_for_problem_json_gets_it() {
        assert_eq!(format(&[]), Format::Text);
        assert_eq!(format(&["*/*"]), Format::Text);
        assert_eq!(format(&["application/*"]), Format::Text);
        assert_eq!(format(&["application/json"]), Format::Text);
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
