//! What an attempt's response says of its ending: its status code, whether it is
//! trailers-only, and the server's pushback.

use http::HeaderMap;
use ironward::grpc::{Code, PUSHBACK};

/// Whether the response is trailers-only: its status is in its headers (gRPC over HTTP/2).
pub(super) fn is_trailers_only(headers: &HeaderMap) -> bool {
    headers.contains_key("grpc-status")
}

/// A trailers-only response's code; a value that is no code is `UNKNOWN`, as grpc-go reads
/// it.
pub(super) fn code(headers: &HeaderMap) -> Code {
    headers
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u32>().ok())
        .and_then(Code::from_number)
        .unwrap_or(Code::Unknown)
}

/// The values of `grpc-retry-pushback-ms`; one that is not UTF-8 is passed as `""`, which
/// says stop as grpc-go's reading of it would.
pub(super) fn pushback(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(PUSHBACK)
        .iter()
        .map(|value| value.to_str().unwrap_or("").to_owned())
        .collect()
}

/// The code of an attempt that failed without a response: a `tonic::Status` in the error's
/// chain says its own; any other (a refused connection, a reset stream) is `UNAVAILABLE`, as
/// grpc-go reads a transport's failure.
pub(super) fn error_code(error: &(dyn std::error::Error + 'static)) -> Code {
    let mut source = Some(error);
    while let Some(error) = source {
        if let Some(status) = error.downcast_ref::<tonic::Status>() {
            return Code::from_number(status.code() as u32).unwrap_or(Code::Unknown);
        }
        source = error.source();
    }
    Code::Unavailable
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn reads_a_status_code_as_grpc_go_does() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert("grpc-status", HeaderValue::from_static(value));
            code(&headers)
        };
        assert_eq!(with("14"), Code::Unavailable);
        assert_eq!(with("0"), Code::Ok);
        assert_eq!(with("17"), Code::Unknown);
        assert_eq!(with("x"), Code::Unknown);
    }

    #[test]
    fn an_error_is_unavailable_unless_it_carries_a_status() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(error_code(&refused), Code::Unavailable);
        let status = tonic::Status::permission_denied("no");
        assert_eq!(error_code(&status), Code::PermissionDenied);
    }
}
