//! HTTP origins (`scheme://host[:port]`): what a model endpoint is known by — the client brain
//! policy's list of allowed origins ([`super::policy`]) and the endpoint lanes of the model gate
//! both compare them. A leaf: it knows URLs, nothing of brains.

use std::fmt;
use std::str::FromStr;

/// An HTTP origin: `scheme://host[:port]`, scheme `http` or `https`, the host normalised as
/// URLs normalise it (lower case, IP addresses in their canonical form), the scheme's default
/// port left out. `https://API.openai.com:443` is `https://api.openai.com`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin(String);

impl Origin {
    /// The origin of a URL (a `base_url`). A URL with a user name or password is refused:
    /// credentials do not belong in a URL a policy compares.
    pub fn of_url(url: &str) -> Result<Origin, String> {
        let parsed =
            url::Url::parse(url.trim()).map_err(|e| format!("'{url}' is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("'{url}' is not an http:// or https:// URL"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(format!(
                "a URL with a user name or password is not accepted ('{}')",
                parsed.host_str().unwrap_or_default()
            ));
        }
        let host = parsed.host_str().unwrap_or_default();
        if host.is_empty() {
            return Err(format!("'{url}' names no host"));
        }
        // A name, an IPv4 address or a bracketed IPv6 one: nothing a list could not hold
        // (URL parsing lets a percent-encoded `,` through into a host).
        if !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b))
        {
            return Err(format!(
                "'{url}' names the host '{host}', which is not a host name or an IP address"
            ));
        }
        Ok(Origin(parsed.origin().ascii_serialization()))
    }
}

impl FromStr for Origin {
    type Err = String;

    /// `scheme://host[:port]`, nothing after the host but an optional `/`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let origin = Origin::of_url(text)?;
        let parsed = url::Url::parse(text).map_err(|e| e.to_string())?;
        if parsed.path() != "/" || parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(format!(
                "'{text}' is not an origin: give scheme://host[:port] with no path ({origin})"
            ));
        }
        Ok(origin)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a comma-separated list of origins (`--client-brain-origins`): blanks around entries
/// are ignored, an empty entry or one that is not an origin is an error naming it.
pub fn parse_origins(list: &str) -> Result<Vec<Origin>, String> {
    let mut origins = Vec::new();
    for (i, entry) in list.split(',').enumerate() {
        if entry.trim().is_empty() {
            return Err(format!("origin {} of the list is empty", i + 1));
        }
        let origin: Origin = entry.parse()?;
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}
