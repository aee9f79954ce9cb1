//! [`ClientAddr`]: the client's IP address behind a known number of proxies, read from
//! `Forwarded` or `X-Forwarded-For` from the right, for a keyed rate limit.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use http::HeaderValue;
use http::header::FORWARDED;
use http::request::Parts;

/// At most this many list elements of a chain are read, from its right end and empty ones
/// included, so that a request cannot make the search long. A chain as the proxies write it
/// has no empty elements on its right and at most 255 trusted entries, so it always resolves
/// within this many; a request whose entry lies further in reads the peer.
const MAX_ELEMENTS: usize = 256;

/// Where the client's IP address comes from when the server sits behind proxies: the
/// address the proxies vouch for in `Forwarded` or `X-Forwarded-For`, or else the TCP peer.
///
/// Behind a load balancer every request's TCP peer is the balancer, so a limit
/// [`by_peer`](super::QuotaLayer::by_peer) gives all clients one budget. Each proxy on
/// the way appends the address it received the request from to the chain in
/// `Forwarded: for=…` (RFC 7239 §4) or `X-Forwarded-For` (the convention RFC 7239 §7.4
/// standardises). The left of the chain is whatever the client sent, so it proves nothing
/// (RFC 7239 §8.1); only the entries appended by proxies of your own can be believed. With
/// `proxies = n`, the `n`-th entry from the right end is the client: the proxy nearest the
/// client appended it, and each of the other `n - 1` appended the proxy before it (the
/// nearest proxy to the server is the TCP peer, and is not in the chain). This is the
/// "trusted proxy count" way of MDN's `X-Forwarded-For` page: the right-most entry behind
/// one proxy, the one before it behind two. Everything further left can be forged by the
/// client, and is never read.
///
/// [`ip`](ClientAddr::ip) answers, in this order:
///
/// 1. **With `proxies = 0`** the headers are not read at all and the TCP peer is the client:
///    the one address a client cannot write, and the default.
/// 2. **The `n`-th entry from the right**, when the chain has one and it is an IP address,
///    with its port, if any, dropped.
/// 3. **Otherwise the TCP peer**, read as [`by_peer`](super::QuotaLayer::by_peer) reads
///    it (axum's `ConnectInfo<SocketAddr>` with the `axum` feature, or a bare `SocketAddr`
///    extension): when the header is absent, when the chain has fewer than `n` entries
///    (the request did not come through every proxy, so no entry in it is vouched for by
///    all of them), and when the `n`-th entry is not an address (`for=unknown`, an
///    obfuscated `for=_hidden`, RFC 7239 §6.2 and §6.3, or garbage). The peer is the
///    nearest proxy, so such requests share its budget: a malformed chain is limited
///    harder, never looser.
/// 4. **`None`** when there is no peer either; a keyed layer gives those requests one
///    shared budget.
///
/// An IPv4 address is answered as IPv4 however it was spelt: `::ffff:192.0.2.1`, the
/// IPv4-mapped form (RFC 4291 §2.5.5.2) in which a dual-stack listener reports every IPv4
/// peer and some proxies write their entries, is `192.0.2.1`, so that one client has one
/// budget whichever way its address reached the server. Every other address is answered as
/// it is, IPv4-compatible (`::192.0.2.1`) and NAT64 (`64:ff9b::192.0.2.1`) forms included,
/// and a peer's IPv6 scope (`%eth0`) is not part of its address.
///
/// # Reading the chain
///
/// Both headers are lists: several header fields form one list, in order (RFC 9110 §5.3),
/// and empty elements are skipped (RFC 9110 §5.6.1). An entry is an IPv4 address with an
/// optional port (`192.0.2.7`, `192.0.2.7:4711`) or an IPv6 address, bare (as
/// `X-Forwarded-For` often writes it) or in brackets with an optional port
/// (`"[2001:db8::1]:4711"`, quoted in `Forwarded` as RFC 7239 §6.1 requires); a port is
/// digits or an obfuscated `_name`. A zone (`fe80::1%eth0`) is not in RFC 7239's node
/// grammar, and an entry with one is not an address. In `Forwarded`, each element's `for=`
/// parameter is read (names in any case); an element without one, or with two, is an entry
/// without an address. The chain is read from its right end, one element at a time, and
/// never further than the entry wanted or 256 elements, however many the header holds, and
/// no input panics. Reading from the right is also what keeps a client's garbage harmless:
/// an unbalanced quote or a stray `;` on the left never changes how the proxies' entries on
/// the right are split.
///
/// # Which header
///
/// [`ProxyHeader::Either`], the default, reads `Forwarded` when the request has one and
/// `X-Forwarded-For` otherwise, never both: there is no telling how entries of two headers
/// interleave. It suits proxies that write `Forwarded`, or that remove it from what clients
/// send. A proxy that only appends `X-Forwarded-For` (nginx's `$proxy_add_x_forwarded_for`,
/// most cloud load balancers) passes a client's own `Forwarded` on untouched, and `Either`
/// would read it: name the header your proxies write, [`ProxyHeader::XForwardedFor`] there.
///
/// The count must match the path every request takes. A client that can reach the server
/// without passing the proxies writes the whole chain itself: let only the proxies connect.
/// For a different key from the same address (an IPv6 /64 prefix, say), pass
/// [`ip`](ClientAddr::ip) to [`keyed`](super::QuotaLayer::keyed).
///
/// # Default
///
/// `proxies: 0` (headers ignored, the peer is the client: the safe reading when nothing is
/// known of the proxies, RFC 7239 §8.1) and `header: ProxyHeader::Either`, the same as
/// [`ClientAddr::DIRECT`].
///
/// # Examples
///
/// ```
/// use std::net::{IpAddr, SocketAddr};
/// use http::Request;
/// use ironward_tower::{ClientAddr, ProxyHeader};
///
/// let head = |xff: &str| {
///     let mut request = Request::get("/").header("x-forwarded-for", xff).body(()).unwrap();
///     // The TCP peer: the load balancer.
///     request.extensions_mut().insert("10.0.0.2:50000".parse::<SocketAddr>().unwrap());
///     request.into_parts().0
/// };
/// let ip = |text: &str| text.parse::<IpAddr>().unwrap();
///
/// // The client sent "203.0.113.66" itself; the proxy in front appended the client's real
/// // address, and the load balancer the proxy's.
/// let through_two = head("203.0.113.66, 198.51.100.7, 10.0.0.1");
/// let client = ClientAddr { header: ProxyHeader::XForwardedFor, ..ClientAddr::behind(2) };
/// assert_eq!(client.ip(&through_two), Some(ip("198.51.100.7")));
/// // Trusting no proxy, the peer is the client; trusting more than the chain holds too.
/// assert_eq!(ClientAddr::DIRECT.ip(&through_two), Some(ip("10.0.0.2")));
/// assert_eq!(ClientAddr::behind(4).ip(&through_two), Some(ip("10.0.0.2")));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientAddr {
    /// How many proxies of your own append to the chain, between the client and this server
    /// (0: none, the TCP peer is the client).
    pub proxies: u8,
    /// Which header they write.
    pub header: ProxyHeader,
}

/// Which header carries the chain of addresses for [`ClientAddr`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ProxyHeader {
    /// `Forwarded` when the request has one, else `X-Forwarded-For`.
    #[default]
    Either,
    /// `Forwarded` only (RFC 7239).
    Forwarded,
    /// `X-Forwarded-For` only.
    XForwardedFor,
}

impl ClientAddr {
    /// No proxy: the TCP peer is the client, and the headers are not read. The default.
    pub const DIRECT: Self = Self::behind(0);

    /// The client behind `proxies` proxies of your own, read from
    /// [`ProxyHeader::Either`].
    pub const fn behind(proxies: u8) -> Self {
        Self {
            proxies,
            header: ProxyHeader::Either,
        }
    }

    /// The client's IP address for the request head `head`: the entry `proxies` from the
    /// right of the chain, else the TCP peer, else `None`. See [`ClientAddr`] for the rules.
    pub fn ip(&self, head: &Parts) -> Option<IpAddr> {
        let from_chain = match self.proxies {
            0 => None,
            n => self.chain_entry(head, usize::from(n)),
        };
        from_chain.or_else(|| peer_ip(head))
    }

    /// The address of the `n`-th entry from the right of the chain, if it is one.
    fn chain_entry(&self, head: &Parts, n: usize) -> Option<IpAddr> {
        let forwarded = match self.header {
            ProxyHeader::Either => head.headers.contains_key(FORWARDED),
            ProxyHeader::Forwarded => true,
            ProxyHeader::XForwardedFor => false,
        };
        let ip = if forwarded {
            let element = nth_from_right(head.headers.get_all(FORWARDED).iter(), n)?;
            node(forwarded_for(element)?)
        } else {
            let entry = nth_from_right(head.headers.get_all("x-forwarded-for").iter(), n)?;
            node(entry)
        };
        ip.map(canonical)
    }
}

/// The peer's IP address, [`canonical`]: axum's `ConnectInfo<SocketAddr>` (with the `axum`
/// feature), or else a bare `SocketAddr` in the request's extensions.
pub(super) fn peer_ip(parts: &Parts) -> Option<IpAddr> {
    #[cfg(feature = "axum")]
    if let Some(axum::extract::ConnectInfo(addr)) = parts
        .extensions
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
    {
        return Some(canonical(addr.ip()));
    }
    let addr = parts.extensions.get::<SocketAddr>()?;
    Some(canonical(addr.ip()))
}

/// The one address a client is keyed by, however it was spelt: an IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2, which a dual-stack listener reports for every
/// IPv4 client and some proxies write) is the IPv4 address it maps, every other address
/// stays as it is (`std`'s `IpAddr::to_canonical`).
///
/// Every address a keyed rate limit reads, from the peer or from a proxy's chain, passes
/// through here, so that one client is never two keys. A peer's IPv6 scope (the `%eth0` of
/// `fe80::1%eth0`) and flow label are the socket's, not the address's, and are never read.
fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

/// The `n`-th non-empty element (`n` ≥ 1) from the right of the list the fields `fields`
/// make together, trimmed, reading at most [`MAX_ELEMENTS`] elements.
///
/// Splitting on every comma, quoted or not, is deliberate: the addresses wanted never hold a
/// comma, so a quoted comma can only split a proxy's own element, which moves the count to
/// the right (towards the proxies), never to the left where a client writes.
fn nth_from_right<'a, I>(fields: I, n: usize) -> Option<&'a [u8]>
where
    I: DoubleEndedIterator<Item = &'a HeaderValue>,
{
    let elements = fields
        .rev()
        .flat_map(|field| field.as_bytes().rsplit(|&byte| byte == b','));
    elements
        .take(MAX_ELEMENTS)
        .map(<[u8]>::trim_ascii)
        .filter(|element| !element.is_empty())
        .nth(n - 1)
}

/// The value of the one `for` parameter of a `Forwarded` element (RFC 7239 §4, §5.2), or
/// `None` when it has none or more than one.
fn forwarded_for(element: &[u8]) -> Option<&[u8]> {
    let mut values = element.split(|&byte| byte == b';').filter_map(|pair| {
        let (name, value) = pair.split_at(pair.iter().position(|&byte| byte == b'=')?);
        name.trim_ascii()
            .eq_ignore_ascii_case(b"for")
            .then(|| value[1..].trim_ascii())
    });
    let value = values.next()?;
    values.next().is_none().then_some(value)
}

/// The IP address of a node (RFC 7239 §6), quoted or not, with its port dropped: `None`
/// for `unknown`, an obfuscated name, or anything else that is not an address.
fn node(value: &[u8]) -> Option<IpAddr> {
    let value = match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    };
    let text = std::str::from_utf8(value).ok()?;
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        if !after.is_empty() && !is_port(after.strip_prefix(':')?) {
            return None;
        }
        return v6.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let (v4, port) = text.split_once(':')?;
    if !is_port(port) {
        return None;
    }
    v4.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// Whether `port` is a node port (RFC 7239 §6): 1 to 5 digits, or an obfuscated `_name`.
fn is_port(port: &str) -> bool {
    match port.as_bytes() {
        [b'_', name @ ..] => {
            !name.is_empty()
                && name
                    .iter()
                    .all(|&byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
        }
        digits => (1..=5).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit),
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::Instant;

    use http::Request;

    use super::*;

    const PEER: &str = "10.0.0.9";

    /// A request head from the peer [`PEER`] with the header fields `fields`, in order.
    fn head(fields: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder();
        for &(name, value) in fields {
            request = request.header(name, value);
        }
        let mut head = request.body(()).unwrap().into_parts().0;
        let peer = SocketAddr::new(PEER.parse().unwrap(), 443);
        head.extensions.insert(peer);
        head
    }

    fn xff(value: &str) -> Parts {
        head(&[("x-forwarded-for", value)])
    }

    fn forwarded(value: &str) -> Parts {
        head(&[("forwarded", value)])
    }

    /// What `client` reads from `head`, as text ("none" for no address).
    fn read(client: ClientAddr, head: &Parts) -> String {
        client
            .ip(head)
            .map_or_else(|| "none".to_owned(), |ip| ip.to_string())
    }

    fn behind(n: u8) -> ClientAddr {
        ClientAddr::behind(n)
    }

    #[test]
    fn trusting_no_proxy_ignores_the_headers() {
        let head = head(&[
            ("forwarded", "for=192.0.2.1"),
            ("x-forwarded-for", "192.0.2.2"),
        ]);
        assert_eq!(read(ClientAddr::DIRECT, &head), PEER);
        assert_eq!(ClientAddr::default(), ClientAddr::DIRECT);
    }

    // MDN's trusted proxy count: the right-most entry behind one proxy, the one before it
    // behind two; the client's own entries on the left are never read.
    #[test]
    fn the_entry_n_from_the_right_is_the_client_and_the_left_is_ignored() {
        let chain = xff("6.6.6.6, 5.5.5.5, 198.51.100.7, 10.0.0.1");
        assert_eq!(read(behind(1), &chain), "10.0.0.1");
        assert_eq!(read(behind(2), &chain), "198.51.100.7");
        // The spoofed entries are reached only by trusting more proxies than there are.
        let spoofed = xff("6.6.6.6, 198.51.100.7");
        let honest = xff("198.51.100.7");
        assert_eq!(read(behind(1), &spoofed), read(behind(1), &honest));
    }

    #[test]
    fn a_chain_shorter_than_the_proxies_trusted_reads_the_peer() {
        let chain = xff("198.51.100.7, 10.0.0.1");
        assert_eq!(read(behind(3), &chain), PEER);
        assert_eq!(read(behind(255), &chain), PEER);
        assert_eq!(read(behind(1), &head(&[])), PEER);
    }

    #[test]
    fn without_a_peer_or_a_chain_there_is_no_address() {
        let bare = Request::new(()).into_parts().0;
        assert_eq!(behind(1).ip(&bare), None);
        assert_eq!(ClientAddr::DIRECT.ip(&bare), None);
    }

    // RFC 9110 §5.3: several fields form one list, in order; §5.6.1: empty elements are
    // skipped.
    #[test]
    fn several_fields_are_one_list_in_order() {
        let head = head(&[
            ("x-forwarded-for", "6.6.6.6, 198.51.100.7"),
            ("x-forwarded-for", "10.0.0.1,"),
            ("x-forwarded-for", ""),
            ("x-forwarded-for", " , 10.0.0.2 "),
        ]);
        assert_eq!(read(behind(1), &head), "10.0.0.2");
        assert_eq!(read(behind(2), &head), "10.0.0.1");
        assert_eq!(read(behind(3), &head), "198.51.100.7");
        assert_eq!(read(behind(5), &head), PEER);
    }

    #[test]
    fn whitespace_around_entries_and_parameters_is_trimmed() {
        let head = xff("\t192.0.2.1 ,  192.0.2.2\t");
        assert_eq!(read(behind(1), &head), "192.0.2.2");
        assert_eq!(read(behind(2), &head), "192.0.2.1");
        let head = forwarded("proto=https ; FOR = 192.0.2.3 ;by=_lb");
        assert_eq!(read(behind(1), &head), "192.0.2.3");
    }

    // RFC 7239 §6.1: IPv6 in brackets, quoted, with an optional port; IPv4 with an optional
    // port.
    #[test]
    fn forwarded_nodes_with_and_without_ports() {
        for (value, ip) in [
            ("for=192.0.2.60", "192.0.2.60"),
            ("for=192.0.2.60:4711", "192.0.2.60"),
            ("for=\"192.0.2.60:4711\"", "192.0.2.60"),
            ("for=192.0.2.60:_port", "192.0.2.60"),
            ("for=\"[2001:db8:cafe::17]\"", "2001:db8:cafe::17"),
            ("for=\"[2001:db8:cafe::17]:4711\"", "2001:db8:cafe::17"),
            ("for=\"[2001:db8:cafe::17]:_x.y-z\"", "2001:db8:cafe::17"),
            ("For=\"2001:db8:cafe::17\"", "2001:db8:cafe::17"),
            ("for=192.0.2.43;proto=http;by=203.0.113.43", "192.0.2.43"),
            ("for=\"[::ffff:192.0.2.60]:4711\"", "192.0.2.60"),
        ] {
            assert_eq!(read(behind(1), &forwarded(value)), ip, "{value}");
        }
    }

    #[test]
    fn x_forwarded_for_entries_with_and_without_ports() {
        for (value, ip) in [
            ("192.0.2.60", "192.0.2.60"),
            ("192.0.2.60:4711", "192.0.2.60"),
            ("2001:db8::17", "2001:db8::17"),
            ("[2001:db8::17]", "2001:db8::17"),
            ("[2001:db8::17]:4711", "2001:db8::17"),
            // RFC 4291 §2.5.5.2: an IPv4-mapped IPv6 address is the IPv4 client itself.
            ("::ffff:192.0.2.60", "192.0.2.60"),
            ("[::ffff:192.0.2.60]:4711", "192.0.2.60"),
            ("::FFFF:C000:023C", "192.0.2.60"),
        ] {
            assert_eq!(read(behind(1), &xff(value)), ip, "{value}");
        }
    }

    // RFC 4291 §2.5.5.2: a dual-stack listener sees an IPv4 client as `::ffff:a.b.c.d`, a
    // proxy may write either spelling: the client is one address, the IPv4 one. The scope
    // of a link-local peer is not part of its address. Other IPv6 forms that embed an IPv4
    // address are other addresses, and stay as they are.
    #[test]
    fn an_ipv4_client_is_one_address_however_it_is_spelt() {
        let from = |peer: SocketAddr| {
            let mut head = Request::new(()).into_parts().0;
            head.extensions.insert(peer);
            head
        };
        let v4: SocketAddr = "203.0.113.5:4711".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:203.0.113.5]:4711".parse().unwrap();
        for client in [ClientAddr::DIRECT, behind(1)] {
            assert_eq!(read(client, &from(v4)), "203.0.113.5");
            assert_eq!(read(client, &from(mapped)), "203.0.113.5");
        }
        let scoped = std::net::SocketAddrV6::new("fe80::1".parse().unwrap(), 443, 0, 2);
        assert_eq!(read(ClientAddr::DIRECT, &from(scoped.into())), "fe80::1");
        for other in [
            "::1",
            "::203.0.113.5",
            "64:ff9b::203.0.113.5",
            "2001:db8::1",
        ] {
            let ip: IpAddr = other.parse().unwrap();
            let peer = SocketAddr::new(ip, 443);
            assert_eq!(read(ClientAddr::DIRECT, &from(peer)), ip.to_string());
            assert_eq!(read(behind(1), &xff(other)), ip.to_string());
        }
    }

    // RFC 7239 §6.2 and §6.3: `unknown` and obfuscated names are nodes, but not addresses:
    // they count as entries, and the peer answers for them.
    #[test]
    fn unknown_and_obfuscated_nodes_count_but_are_not_addresses() {
        let head = forwarded("for=192.0.2.1, for=unknown, for=_hidden");
        assert_eq!(read(behind(1), &head), PEER);
        assert_eq!(read(behind(2), &head), PEER);
        assert_eq!(read(behind(3), &head), "192.0.2.1");
        assert_eq!(read(behind(1), &xff("unknown")), PEER);
    }

    #[test]
    fn malformed_entries_are_not_addresses() {
        for value in [
            "for=",
            "for",
            "for=\"",
            "for=\"[2001:db8::1]",
            "for=[2001:db8::1",
            "for=\"[2001:db8::1]:\"",
            "for=\"[2001:db8::1]:123456\"",
            "for=\"[2001:db8::1]x\"",
            "for=\"[192.0.2.1]\"",
            "for=192.0.2.1:",
            "for=192.0.2.1:_",
            "for=192.0.2.1:80:80",
            "for=192.0.2.256",
            "for=\"fe80::1%eth0\"",
            "for=192.0.2.1;for=192.0.2.2",
            "by=192.0.2.1",
            "proto=https",
            "=;=;;=",
        ] {
            assert_eq!(read(behind(1), &forwarded(value)), PEER, "{value}");
        }
        let garbage = HeaderValue::from_bytes(b"for=\xff\xfe").unwrap();
        let mut head = forwarded("x");
        head.headers.insert(FORWARDED, garbage);
        assert_eq!(read(behind(1), &head), PEER);
    }

    // A client's unbalanced quote on the left cannot swallow the proxy's entry on the right.
    #[test]
    fn a_hostile_left_end_does_not_change_the_right_end() {
        // The client sent everything up to the last comma; the proxy appended the rest.
        let head = forwarded("for=\"6.6.6.6, for=\"[;;for=7.7.7.7;, for=192.0.2.5");
        assert_eq!(read(behind(1), &head), "192.0.2.5");
        assert_eq!(read(behind(2), &head), PEER);
    }

    #[test]
    fn forwarded_is_preferred_and_never_mixed_with_x_forwarded_for() {
        let both = head(&[
            ("x-forwarded-for", "192.0.2.1, 192.0.2.2"),
            ("forwarded", "for=198.51.100.1"),
        ]);
        let either = behind(1);
        let with = |header| ClientAddr { header, ..either };
        assert_eq!(read(either, &both), "198.51.100.1");
        // Forwarded has one entry: trusting two reads the peer, not X-Forwarded-For.
        assert_eq!(read(behind(2), &both), PEER);
        let xff_only = with(ProxyHeader::XForwardedFor);
        assert_eq!(read(xff_only, &both), "192.0.2.2");
        assert_eq!(read(with(ProxyHeader::Forwarded), &both), "198.51.100.1");
        // Named, a header that is absent reads the peer.
        let xff_alone = xff("192.0.2.1");
        assert_eq!(read(with(ProxyHeader::Forwarded), &xff_alone), PEER);
        assert_eq!(read(either, &xff_alone), "192.0.2.1");
    }

    // The search stops after 256 elements from the right, however long the header, and no
    // length of entry panics.
    #[test]
    fn a_huge_header_is_read_only_at_its_right_end() {
        let mut chain = "6.6.6.6,".repeat(200_000);
        chain.push_str("192.0.2.1");
        let long = xff(&chain);
        let started = Instant::now();
        for _ in 0..1000 {
            assert_eq!(read(behind(1), &long), "192.0.2.1");
        }
        assert!(started.elapsed().as_secs() < 5);
        assert_eq!(read(behind(200), &long), "6.6.6.6");
        // Empty elements count towards the bound: past it, the peer answers.
        let empties = xff(&format!("192.0.2.1{}192.0.2.2", ",".repeat(300)));
        assert_eq!(read(behind(2), &empties), PEER);
        let one_entry = xff(&"9".repeat(1 << 20));
        assert_eq!(read(behind(1), &one_entry), PEER);
    }
}
