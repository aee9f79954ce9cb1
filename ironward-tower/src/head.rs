//! [`read`]: a request's head shown to a reader, where the request stays.

use http::Request;
use http::request::Parts;

/// What `reader` reads of `request`'s head.
///
/// An `http::Request` lends no `&Parts`, and taking it apart and putting it back moves the
/// whole request twice, a copy of a few hundred bytes each way that a layer would pay on
/// every request. The head's fields are swapped into a blank head instead, and back once
/// read, so that only the reader's own layers pay that price, and the request stays put.
pub(crate) fn read<B, T>(request: &mut Request<B>, reader: impl FnOnce(&Parts) -> T) -> T {
    let (mut head, ()) = Request::new(()).into_parts();
    swap(&mut head, request);
    let read = reader(&head);
    swap(&mut head, request);
    read
}

/// Swaps every field of `head` with `request`'s.
fn swap<B>(head: &mut Parts, request: &mut Request<B>) {
    std::mem::swap(&mut head.method, request.method_mut());
    std::mem::swap(&mut head.uri, request.uri_mut());
    std::mem::swap(&mut head.version, request.version_mut());
    std::mem::swap(&mut head.headers, request.headers_mut());
    std::mem::swap(&mut head.extensions, request.extensions_mut());
}

#[cfg(test)]
mod tests {
    use http::{Method, Version};

    use super::*;

    #[test]
    fn the_reader_sees_the_whole_head_and_the_request_gets_it_back() {
        let mut request = Request::post("/path?q=1")
            .version(Version::HTTP_2)
            .header("x-budget", "250")
            .extension(7_u32)
            .body("body")
            .unwrap();
        let seen = read(&mut request, |head| {
            (
                head.method.clone(),
                head.uri.to_string(),
                head.version,
                head.headers["x-budget"].clone(),
                head.extensions.get::<u32>().copied(),
            )
        });
        assert_eq!(
            seen,
            (
                Method::POST,
                "/path?q=1".to_owned(),
                Version::HTTP_2,
                "250".parse().unwrap(),
                Some(7)
            )
        );
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri(), "/path?q=1");
        assert_eq!(request.version(), Version::HTTP_2);
        assert_eq!(request.headers()["x-budget"], "250");
        assert_eq!(request.extensions().get::<u32>(), Some(&7));
        assert_eq!(*request.body(), "body");
    }
}
