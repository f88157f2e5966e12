//! Who may talk to the server: the checks every HTTP request (the WebSocket upgrade and `/mcp`)
//! passes before anything else happens, in this order.
//!
//! 1. **`Host`** (loopback binds only): `localhost`, a `127.x.y.z` address or `[::1]`, with any
//!    port, or a name on [`ServerConfig::allowed_hosts`]. Anything else is a web page that reached
//!    the loopback port through a DNS name it controls (DNS rebinding): **403**.
//! 2. **`Origin`**: absent (native clients — Godot's `WebSocketPeer` outside the web, tungstenite,
//!    curl) passes. A browser origin must be on [`ServerConfig::allowed_origins`]
//!    (`scheme://host[:port]`, `null` for the opaque origin, `*` for any); on a loopback bind the
//!    loopback origins (`http://localhost:8060`, `https://127.0.0.1`, …) are allowed too. Anything
//!    else — `http://evil.example`, `null` — is **403**, naming the origin and the setting that
//!    allows it.
//! 3. **Token** (when the server has one): `Authorization: Bearer <token>`, or, for browsers
//!    that cannot set headers, the WebSocket subprotocol entry `agents.token.<token>` offered
//!    together with [`SUBPROTOCOL`] (`new WebSocket(url, ["godot-agents",
//!    "agents.token.<token>"])`; the server selects `godot-agents`, never echoing the token).
//!    Compared in constant time. Missing or wrong: **401** with `WWW-Authenticate: Bearer`. Two
//!    credentials (two `Authorization` headers, two token entries, or a header and an entry) are
//!    refused even if one is right.
//!
//! A token in the URL (`?token=…`, or RFC 6750's `?access_token=…`, in any letter case or
//! percent-encoding) is refused (**400**) whether or not it is right: URLs end up in proxy and
//! server logs. The refusal never logs or echoes a presented token.

use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::ServerConfig;
use crate::admission::constant_time_eq;

/// The subprotocol the server selects when a client offers it (a browser that sends its token
/// as a subprotocol entry must offer this one too: a browser fails the handshake when the server
/// selects none of the offered entries).
pub const SUBPROTOCOL: &str = "godot-agents";

/// The prefix of the subprotocol entry that carries the token (`agents.token.<token>`).
pub const TOKEN_SUBPROTOCOL_PREFIX: &str = "agents.token.";

/// Why a request is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A `Host` that is not loopback on a loopback bind (or two `Host` headers).
    ForeignHost(String),
    /// A browser origin that is not allowed.
    ForeignOrigin(String),
    /// The token was in the URL.
    TokenInUrl,
    /// No token presented.
    MissingToken,
    /// The presented token is wrong.
    WrongToken,
    /// Two credentials presented (which ones).
    DuplicateToken(&'static str),
    /// The token came as a subprotocol entry without [`SUBPROTOCOL`] offered beside it.
    SubprotocolMissing,
}

impl Refusal {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::ForeignHost(_) | Refusal::ForeignOrigin(_) => StatusCode::FORBIDDEN,
            Refusal::TokenInUrl | Refusal::SubprotocolMissing => StatusCode::BAD_REQUEST,
            Refusal::MissingToken | Refusal::WrongToken | Refusal::DuplicateToken(_) => {
                StatusCode::UNAUTHORIZED
            }
        }
    }

    /// The text of the response body (also logged; never contains a token).
    pub fn message(&self) -> String {
        match self {
            Refusal::ForeignHost(host) => format!(
                "forbidden: Host '{host}' is not this loopback server's (a web page reaching it through another name?); allow a name with --allow-host"
            ),
            Refusal::ForeignOrigin(origin) => format!(
                "forbidden: origin '{origin}' may not connect; allow it with --allow-origin {origin} (AgentRuntime.websocket_allowed_origins)"
            ),
            Refusal::TokenInUrl => "the token does not go in the URL (it would end up in logs): send `Authorization: Bearer <token>`, or from a browser the subprotocols [\"godot-agents\", \"agents.token.<token>\"]".into(),
            Refusal::MissingToken | Refusal::WrongToken => "unauthorized: present the token as `Authorization: Bearer <token>`, or from a browser as the subprotocols [\"godot-agents\", \"agents.token.<token>\"]".into(),
            Refusal::DuplicateToken(what) => {
                format!("unauthorized: present the token once ({what})")
            }
            Refusal::SubprotocolMissing => format!(
                "a token sent as a subprotocol entry needs the subprotocol \"{SUBPROTOCOL}\" offered beside it"
            ),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = format!("{}\n", self.message());
        if status == StatusCode::UNAUTHORIZED {
            (status, [(header::WWW_AUTHENTICATE, "Bearer")], body).into_response()
        } else {
            (status, body).into_response()
        }
    }
}

/// An origin as RFC 6454 compares them: scheme, host and port (the default port made explicit).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Origin {
    /// The opaque origin, `null`.
    Null,
    /// `scheme://host:port`, lowercase, IPv6 hosts without brackets.
    Tuple {
        scheme: String,
        host: String,
        port: u16,
    },
}

impl Origin {
    /// Parses an `Origin` header value or an allow-list entry.
    fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Origin::Null);
        }
        let (scheme, rest) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
            return None;
        }
        let authority: axum::http::uri::Authority = rest.parse().ok()?;
        let port = match (authority.port_u16(), scheme.as_str()) {
            (Some(port), _) => port,
            (None, "http" | "ws") => 80,
            (None, "https" | "wss") => 443,
            (None, _) => 0,
        };
        Some(Origin::Tuple {
            host: normalize_host(authority.host()),
            scheme,
            port,
        })
    }

    fn is_loopback(&self) -> bool {
        matches!(self, Origin::Tuple { host, .. } if is_loopback_host(host))
    }
}

/// Lowercase, IPv6 brackets removed.
fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// `localhost`, `127.x.y.z`, `::1`.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The access rules of one server (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Access {
    token: Option<String>,
    loopback_bind: bool,
    any_origin: bool,
    origins: Vec<Origin>,
    hosts: Vec<String>,
}

impl Access {
    /// The rules of `config`; an allow-list entry that is not an origin is an error naming it.
    pub(crate) fn new(config: &ServerConfig) -> Result<Access, String> {
        let mut origins = Vec::new();
        let mut any_origin = false;
        for entry in &config.allowed_origins {
            if entry.trim() == "*" {
                any_origin = true;
                continue;
            }
            origins.push(Origin::parse(entry).ok_or_else(|| {
                format!(
                    "allowed origin '{entry}' is not an origin: write scheme://host[:port] (http://localhost:8060), null or *"
                )
            })?);
        }
        let mut hosts = Vec::new();
        for entry in &config.allowed_hosts {
            let authority: axum::http::uri::Authority = entry
                .trim()
                .parse()
                .map_err(|_| format!("allowed host '{entry}' is not a host name or address"))?;
            hosts.push(normalize_host(authority.host()));
        }
        Ok(Access {
            token: config.token.clone(),
            loopback_bind: config.bind.ip().is_loopback(),
            any_origin,
            origins,
            hosts,
        })
    }

    /// Checks a request's headers and URL (see the module docs for the order and the answers).
    pub(crate) fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        self.check_host(headers)?;
        self.check_origin(headers)?;
        self.check_token(headers, uri)
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if !self.loopback_bind {
            return Ok(());
        }
        let mut values = headers.get_all(header::HOST).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            // No Host at all is not a browser; two are refused below.
            return match headers.get_all(header::HOST).iter().count() {
                0 => Ok(()),
                _ => Err(Refusal::ForeignHost("(several Host headers)".into())),
            };
        };
        let text = value.to_str().unwrap_or("");
        let host = match text.parse::<axum::http::uri::Authority>() {
            Ok(authority) => normalize_host(authority.host()),
            Err(_) => return Err(Refusal::ForeignHost(printable(text))),
        };
        if is_loopback_host(&host) || self.hosts.contains(&host) {
            Ok(())
        } else {
            Err(Refusal::ForeignHost(printable(text)))
        }
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let Some(value) = values.next() else {
            return Ok(());
        };
        let text = value.to_str().unwrap_or("");
        if values.next().is_some() {
            return Err(Refusal::ForeignOrigin("(several Origin headers)".into()));
        }
        if self.any_origin {
            return Ok(());
        }
        let origin = Origin::parse(text).ok_or_else(|| Refusal::ForeignOrigin(printable(text)))?;
        if self.origins.contains(&origin) || (self.loopback_bind && origin.is_loopback()) {
            Ok(())
        } else {
            Err(Refusal::ForeignOrigin(printable(text)))
        }
    }

    fn check_token(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        if token_in_query(uri) {
            return Err(Refusal::TokenInUrl);
        }
        let Some(token) = &self.token else {
            return Ok(());
        };
        let presented = presented_token(headers)?;
        match presented {
            None => Err(Refusal::MissingToken),
            Some(p) if constant_time_eq(p.as_bytes(), token.as_bytes()) => Ok(()),
            Some(_) => Err(Refusal::WrongToken),
        }
    }
}

/// The query parameters that carry a token: ours, and RFC 6750's (`access_token`), which
/// generic bearer-token clients put in URLs.
const TOKEN_QUERY_KEYS: [&str; 2] = ["token", "access_token"];

/// Whether the query has a token parameter ([`TOKEN_QUERY_KEYS`], in any letter case, also
/// percent-encoded: `?%74oken=` is still a token in a URL).
fn token_in_query(uri: &Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split(['&', ';']).any(|pair| {
            let key = percent_decode(pair.split('=').next().unwrap_or(""));
            TOKEN_QUERY_KEYS
                .iter()
                .any(|k| key.eq_ignore_ascii_case(k.as_bytes()))
        })
    })
}

/// `%XX` sequences decoded (`+` stays: keys do not use it); a malformed escape stays as it is.
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            // Two hex digits: at most 0xFF.
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Whether `token` can be sent as the subprotocol entry `agents.token.<token>`: a subprotocol
/// name is an HTTP `token` (RFC 6455 §4.1, RFC 9110 §5.6.2), and browsers throw on anything else
/// (`new WebSocket(url, ["agents.token.a=b"])` is a `SyntaxError`). Such a server token still
/// works in the `Authorization` header.
pub fn token_fits_subprotocol(token: &str) -> bool {
    !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The one token presented in the headers, if any.
fn presented_token(headers: &HeaderMap) -> Result<Option<String>, Refusal> {
    let mut bearer = None;
    for (n, value) in headers.get_all(header::AUTHORIZATION).iter().enumerate() {
        if n > 0 {
            return Err(Refusal::DuplicateToken("two Authorization headers"));
        }
        let text = value.to_str().unwrap_or("").trim();
        bearer = Some(match text.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
                token.trim().to_owned()
            }
            // A malformed header is a wrong token, not a missing one.
            _ => String::new(),
        });
    }
    let mut entry = None;
    let mut offers_subprotocol = false;
    for value in headers.get_all(header::SEC_WEBSOCKET_PROTOCOL) {
        for item in value.to_str().unwrap_or("").split(',').map(str::trim) {
            if item == SUBPROTOCOL {
                offers_subprotocol = true;
            } else if let Some(token) = item.strip_prefix(TOKEN_SUBPROTOCOL_PREFIX) {
                if entry.is_some() {
                    return Err(Refusal::DuplicateToken("two token subprotocol entries"));
                }
                entry = Some(token.to_owned());
            }
        }
    }
    match (bearer, entry) {
        (Some(_), Some(_)) => Err(Refusal::DuplicateToken(
            "an Authorization header and a subprotocol entry",
        )),
        (Some(b), None) => Ok(Some(b)),
        (None, Some(_)) if !offers_subprotocol => Err(Refusal::SubprotocolMissing),
        (None, Some(e)) => Ok(Some(e)),
        (None, None) => Ok(None),
    }
}

/// A header value as it may be shown in a response and a log line: printable ASCII, at most 200
/// characters.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn access(bind: &str, token: Option<&str>, origins: &[&str]) -> Access {
        Access::new(&ServerConfig {
            bind: bind.parse().unwrap(),
            token: token.map(str::to_owned),
            allowed_origins: origins.iter().map(|s| s.to_string()).collect(),
            insecure_no_token: true,
            ..ServerConfig::default()
        })
        .unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn check(a: &Access, pairs: &[(&str, &str)], uri: &str) -> Result<(), Refusal> {
        a.check(&headers(pairs), &uri.parse().unwrap())
    }

    #[test]
    fn origins_native_loopback_listed_and_foreign() {
        let a = access("127.0.0.1:9080", None, &["https://game.example"]);
        assert_eq!(check(&a, &[], "/ws"), Ok(()));
        for ok in [
            "http://localhost:8060",
            "http://127.0.0.1",
            "https://[::1]:3000",
            "https://game.example",
            "https://GAME.example:443",
        ] {
            assert_eq!(check(&a, &[("origin", ok)], "/ws"), Ok(()), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "null",
            "https://game.example:8443",
            "http://game.example",
            "garbage",
        ] {
            let refused = check(&a, &[("origin", bad)], "/ws").unwrap_err();
            assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{bad}");
            assert!(refused.message().contains(bad), "{}", refused.message());
            assert!(refused.message().contains("--allow-origin"));
        }
        let two = check(
            &a,
            &[
                ("origin", "http://localhost"),
                ("origin", "http://localhost"),
            ],
            "/ws",
        );
        assert!(two.is_err());
        // Listed null and any origin.
        assert_eq!(
            check(
                &access("127.0.0.1:0", None, &["null"]),
                &[("origin", "null")],
                "/"
            ),
            Ok(())
        );
        assert_eq!(
            check(
                &access("127.0.0.1:0", None, &["*"]),
                &[("origin", "http://evil.example")],
                "/"
            ),
            Ok(())
        );
        // A non-loopback bind does not allow loopback origins by default.
        assert!(
            check(
                &access("0.0.0.0:0", None, &[]),
                &[("origin", "http://localhost")],
                "/"
            )
            .is_err()
        );
    }

    #[test]
    fn hosts_on_loopback_binds() {
        let a = access("127.0.0.1:9080", None, &[]);
        for ok in [
            "localhost:9080",
            "127.0.0.1",
            "[::1]:9080",
            "LOCALHOST",
            "127.1.2.3:1",
        ] {
            assert_eq!(check(&a, &[("host", ok)], "/ws"), Ok(()), "{ok}");
        }
        for bad in ["evil.example:9080", "evil.example", "192.168.1.4:9080"] {
            let refused = check(&a, &[("host", bad)], "/ws").unwrap_err();
            assert_eq!(refused, Refusal::ForeignHost(bad.into()));
            assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        }
        let mut config = ServerConfig {
            allowed_hosts: vec!["game.local".into()],
            ..ServerConfig::default()
        };
        let with_name = Access::new(&config).unwrap();
        assert_eq!(
            check(&with_name, &[("host", "game.local:9080")], "/"),
            Ok(())
        );
        // Not checked on other binds (reached by any name).
        assert_eq!(
            check(
                &access("0.0.0.0:9080", None, &[]),
                &[("host", "evil.example")],
                "/"
            ),
            Ok(())
        );
        config.allowed_hosts = vec!["not a host/".into()];
        assert!(Access::new(&config).unwrap_err().contains("not a host/"));
    }

    #[test]
    fn tokens_from_the_header_or_a_subprotocol_entry_once() {
        let a = access("127.0.0.1:0", Some("s3cret"), &[]);
        assert_eq!(
            check(&a, &[("authorization", "Bearer s3cret")], "/ws"),
            Ok(())
        );
        assert_eq!(
            check(&a, &[("authorization", "bearer  s3cret ")], "/ws"),
            Ok(())
        );
        assert_eq!(
            check(
                &a,
                &[(
                    "sec-websocket-protocol",
                    "godot-agents, agents.token.s3cret"
                )],
                "/ws"
            ),
            Ok(())
        );
        assert_eq!(check(&a, &[], "/ws"), Err(Refusal::MissingToken));
        assert_eq!(
            check(&a, &[("authorization", "Bearer nope")], "/ws"),
            Err(Refusal::WrongToken)
        );
        assert_eq!(
            check(&a, &[("authorization", "Basic s3cret")], "/ws"),
            Err(Refusal::WrongToken)
        );
        assert_eq!(
            check(
                &a,
                &[("sec-websocket-protocol", "agents.token.s3cret")],
                "/ws"
            ),
            Err(Refusal::SubprotocolMissing)
        );
        // Duplicates are refused even when one copy is right.
        for dup in [
            vec![
                ("authorization", "Bearer nope"),
                ("authorization", "Bearer s3cret"),
            ],
            vec![(
                "sec-websocket-protocol",
                "godot-agents, agents.token.nope, agents.token.s3cret",
            )],
            vec![
                ("authorization", "Bearer s3cret"),
                (
                    "sec-websocket-protocol",
                    "godot-agents, agents.token.s3cret",
                ),
            ],
        ] {
            let refused = check(&a, &dup, "/ws").unwrap_err();
            assert!(matches!(refused, Refusal::DuplicateToken(_)), "{dup:?}");
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        }
        // In the URL: refused, right or wrong, with or without a server token.
        for uri in ["/ws?token=s3cret", "/ws?a=1&token=x", "/?token"] {
            assert_eq!(
                check(&a, &[("authorization", "Bearer s3cret")], uri),
                Err(Refusal::TokenInUrl),
                "{uri}"
            );
        }
        let open = access("127.0.0.1:0", None, &[]);
        assert_eq!(check(&open, &[], "/ws?token=x"), Err(Refusal::TokenInUrl));
        assert_eq!(check(&open, &[], "/ws?tokens=x"), Ok(()));
        // RFC 6750's name, other letter cases, percent-encoded keys, `;` separators.
        for uri in [
            "/ws?access_token=s3cret",
            "/ws?TOKEN=s3cret",
            "/ws?%74oken=s3cret",
            "/ws?%61ccess%5Ftoken=s3cret",
            "/ws?a=1;token=s3cret",
        ] {
            assert_eq!(check(&open, &[], uri), Err(Refusal::TokenInUrl), "{uri}");
        }
        for uri in ["/ws?tok%en=x", "/ws?my_token=x", "/ws?q=token", "/ws?%"] {
            assert_eq!(check(&open, &[], uri), Ok(()), "{uri}");
        }
        // The refusal never shows the token.
        for r in [
            Refusal::WrongToken,
            Refusal::TokenInUrl,
            Refusal::MissingToken,
        ] {
            assert!(!r.message().contains("s3cret"));
        }
    }

    #[test]
    fn which_tokens_fit_a_subprotocol_entry() {
        for ok in ["s3cret", "a-b_c.d~e", "0123abcdef", "x!#$%&'*+^`|"] {
            assert!(token_fits_subprotocol(ok), "{ok}");
        }
        for bad in [
            "",
            "base64+/=",
            "a=b",
            "a/b",
            "a:b",
            "a\"b",
            "(x)",
            "a;b",
            "a@b",
        ] {
            assert!(!token_fits_subprotocol(bad), "{bad}");
        }
    }

    #[test]
    fn bad_allow_list_entries_are_config_errors() {
        let config = ServerConfig {
            allowed_origins: vec!["localhost:8060".into()],
            ..ServerConfig::default()
        };
        let e = Access::new(&config).unwrap_err();
        assert!(e.contains("'localhost:8060' is not an origin"), "{e}");
    }
}
