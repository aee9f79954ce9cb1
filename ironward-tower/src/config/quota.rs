//! [`QuotaConfig`]: a rate limit as a configuration writes it, one flat table.

use http::HeaderName;
use serde::{Deserialize, Serialize};

use super::value::{Burst, Count, Keys, Rate, Span};
use crate::{ClientAddr, ProxyHeader, Quota};

/// The keys a keyed rate limit holds when a configuration does not say.
pub const MAX_KEYS: usize = 10_000;

/// A rate limit ([`QuotaLayer`](crate::QuotaLayer)): its limit, what it is keyed by, how
/// many keys it holds, and whether admitted responses carry the `RateLimit` fields.
///
/// Written as one table, the limit's `kind` with its numbers beside the key's fields:
///
/// | `kind` | numbers | |
/// | --- | --- | --- |
/// | `"bucket"` | `rate` (tokens a second, over 0), `burst` (1 or more) | [`Quota::bucket`] |
/// | `"sliding"` | `quota` (1 or more), `window` (a duration) | [`Quota::sliding`] |
/// | `"period"` | `quota`, `period` (a duration), `align` (`false` by default) | [`Quota::period`], [`Quota::aligned`] |
///
/// | `key` | fields | |
/// | --- | --- | --- |
/// | `"global"` (the default) | | one budget for every request: [`QuotaLayer::new`](crate::QuotaLayer::new) |
/// | `"peer"` | `max_keys` | by TCP peer: [`QuotaLayer::by_peer`](crate::QuotaLayer::by_peer) |
/// | `"client"` | `proxies` (how many proxies of your own are in front, 0 to 255), `proxy_header` (`"either"`, the default, `"forwarded"` or `"x-forwarded-for"`), `max_keys` | by the client behind them: [`QuotaLayer::by_client`](crate::QuotaLayer::by_client) with [`ClientAddr`] |
/// | `"header"` | `header` (its name), `max_keys` | by a header's value: [`QuotaLayer::by_header`](crate::QuotaLayer::by_header) |
///
/// `max_keys` is [`MAX_KEYS`] when left out; `headers = true` puts the `RateLimit` fields on
/// admitted responses too ([`QuotaLayer::with_headers`](crate::QuotaLayer::with_headers)).
/// A field another kind or key would read is an error, not ignored.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::config::{QuotaConfig, QuotaKey};
/// use ironward_tower::{ClientAddr, ProxyHeader, Quota};
///
/// let quota: QuotaConfig = toml::from_str(r#"
///     kind = "sliding"
///     quota = 100
///     window = "1m"
///     key = "client"
///     proxies = 1
///     proxy_header = "x-forwarded-for"
/// "#).unwrap();
/// assert_eq!(quota.limit, Quota::sliding(100, Duration::from_secs(60)));
/// let client = ClientAddr { proxies: 1, header: ProxyHeader::XForwardedFor };
/// assert_eq!(quota.key, QuotaKey::Client(client));
/// assert_eq!(quota.max_keys, 10_000);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawQuota", into = "RawQuota")]
#[non_exhaustive]
pub struct QuotaConfig {
    /// The limit, with its kind.
    pub limit: Quota,
    /// What the budgets are kept by.
    pub key: QuotaKey,
    /// The most keys a keyed limit holds (see [`QuotaLayer::keyed`](crate::QuotaLayer::keyed));
    /// [`MAX_KEYS`] when a global one.
    pub max_keys: usize,
    /// Whether admitted responses carry the `RateLimit` fields.
    pub headers: bool,
}

/// What a [`QuotaConfig`]'s budgets are kept by.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuotaKey {
    /// One budget for every request.
    Global,
    /// One budget per TCP peer.
    Peer,
    /// One budget per client behind the proxies [`ClientAddr`] describes.
    Client(ClientAddr),
    /// One budget per value of the header.
    Header(HeaderName),
}

/// The limit's kind as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Bucket,
    Sliding,
    Period,
}

/// The key's kind as written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum KeyKind {
    #[default]
    Global,
    Peer,
    Client,
    Header,
}

/// [`ProxyHeader`] as written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ProxyHeaderName {
    #[default]
    Either,
    Forwarded,
    XForwardedFor,
}

/// A header's name, checked as read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
struct Name(HeaderName);

impl TryFrom<String> for Name {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        HeaderName::from_bytes(name.as_bytes())
            .map(Self)
            .map_err(|_| {
                format!("{name:?} is no header name: expected a token such as \"x-api-key\"")
            })
    }
}

impl From<Name> for String {
    fn from(name: Name) -> Self {
        name.0.as_str().to_owned()
    }
}

/// The table as written, each value checked alone.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuota {
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    rate: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    burst: Option<Burst>,
    #[serde(skip_serializing_if = "Option::is_none")]
    quota: Option<Count>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<Span>,
    #[serde(skip_serializing_if = "Option::is_none")]
    period: Option<Span>,
    #[serde(skip_serializing_if = "Option::is_none")]
    align: Option<bool>,
    #[serde(default)]
    key: KeyKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    proxies: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    proxy_header: Option<ProxyHeaderName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<Name>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_keys: Option<Keys>,
    #[serde(default)]
    headers: bool,
}

/// The one error for a field the kind or key in force does not read, or one it needs.
fn field(name: &str, present: bool, wanted: bool, whose: &str) -> Result<(), String> {
    match (present, wanted) {
        (true, false) => Err(format!("`{name}` is not read by {whose}: remove it")),
        (false, true) => Err(format!("{whose} needs `{name}`")),
        _ => Ok(()),
    }
}

impl TryFrom<RawQuota> for QuotaConfig {
    type Error = String;

    fn try_from(raw: RawQuota) -> Result<Self, String> {
        let whose = match raw.kind {
            Kind::Bucket => "`kind = \"bucket\"`",
            Kind::Sliding => "`kind = \"sliding\"`",
            Kind::Period => "`kind = \"period\"`",
        };
        let (bucket, sliding, period) = (
            raw.kind == Kind::Bucket,
            raw.kind == Kind::Sliding,
            raw.kind == Kind::Period,
        );
        field("rate", raw.rate.is_some(), bucket, whose)?;
        field("burst", raw.burst.is_some(), bucket, whose)?;
        field("quota", raw.quota.is_some(), !bucket, whose)?;
        field("window", raw.window.is_some(), sliding, whose)?;
        field("period", raw.period.is_some(), period, whose)?;
        if raw.align.is_some() && !period {
            field("align", true, false, whose)?;
        }
        let limit = match (raw.rate, raw.burst, raw.quota, raw.window, raw.period) {
            (Some(Rate(rate)), Some(Burst(burst)), ..) => Quota::bucket(rate, burst),
            (_, _, Some(Count(quota)), Some(Span(window)), _) => Quota::sliding(quota, window),
            (_, _, Some(Count(quota)), _, Some(Span(span))) if raw.align == Some(true) => {
                Quota::aligned(quota, span)
            }
            (_, _, Some(Count(quota)), _, Some(Span(span))) => Quota::period(quota, span),
            _ => return Err(format!("{whose} is missing its numbers")),
        };
        let whose = match raw.key {
            KeyKind::Global => "`key = \"global\"`",
            KeyKind::Peer => "`key = \"peer\"`",
            KeyKind::Client => "`key = \"client\"`",
            KeyKind::Header => "`key = \"header\"`",
        };
        let global = raw.key == KeyKind::Global;
        let client = raw.key == KeyKind::Client;
        field("max_keys", raw.max_keys.is_some() && global, false, whose)?;
        field("proxies", raw.proxies.is_some(), client, whose)?;
        if raw.proxy_header.is_some() && !client {
            field("proxy_header", true, false, whose)?;
        }
        field(
            "header",
            raw.header.is_some(),
            raw.key == KeyKind::Header,
            whose,
        )?;
        let key = match (raw.key, raw.proxies, raw.header) {
            (KeyKind::Global, ..) => QuotaKey::Global,
            (KeyKind::Peer, ..) => QuotaKey::Peer,
            (KeyKind::Client, Some(proxies), _) => QuotaKey::Client(ClientAddr {
                proxies,
                header: match raw.proxy_header.unwrap_or_default() {
                    ProxyHeaderName::Either => ProxyHeader::Either,
                    ProxyHeaderName::Forwarded => ProxyHeader::Forwarded,
                    ProxyHeaderName::XForwardedFor => ProxyHeader::XForwardedFor,
                },
            }),
            (KeyKind::Header, _, Some(Name(name))) => QuotaKey::Header(name),
            _ => return Err(format!("{whose} is missing its fields")),
        };
        Ok(Self {
            limit,
            key,
            max_keys: raw.max_keys.map_or(MAX_KEYS, |Keys(keys)| keys),
            headers: raw.headers,
        })
    }
}

impl From<QuotaConfig> for RawQuota {
    fn from(quota: QuotaConfig) -> Self {
        let mut raw = RawQuota {
            kind: Kind::Bucket,
            rate: None,
            burst: None,
            quota: None,
            window: None,
            period: None,
            align: None,
            key: KeyKind::Global,
            proxies: None,
            proxy_header: None,
            header: None,
            max_keys: Some(Keys(quota.max_keys)),
            headers: quota.headers,
        };
        match quota.limit {
            Quota::Bucket { rate, burst } => {
                (raw.rate, raw.burst) = (Some(Rate(rate)), Some(Burst(burst)))
            }
            Quota::Sliding { quota, window } => {
                raw.kind = Kind::Sliding;
                (raw.quota, raw.window) = (Some(Count(quota)), Some(Span(window)));
            }
            Quota::Period {
                quota,
                period,
                align,
            } => {
                raw.kind = Kind::Period;
                (raw.quota, raw.period, raw.align) =
                    (Some(Count(quota)), Some(Span(period)), Some(align));
            }
        }
        match quota.key {
            QuotaKey::Global => raw.max_keys = None,
            QuotaKey::Peer => raw.key = KeyKind::Peer,
            QuotaKey::Client(client) => {
                raw.key = KeyKind::Client;
                raw.proxies = Some(client.proxies);
                raw.proxy_header = Some(match client.header {
                    ProxyHeader::Either => ProxyHeaderName::Either,
                    ProxyHeader::Forwarded => ProxyHeaderName::Forwarded,
                    ProxyHeader::XForwardedFor => ProxyHeaderName::XForwardedFor,
                });
            }
            QuotaKey::Header(name) => {
                raw.key = KeyKind::Header;
                raw.header = Some(Name(name));
            }
        }
        raw
    }
}
