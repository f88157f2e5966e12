//! [`Secret`]: an API key that never prints. A leaf: it uses nothing else of this crate, so the
//! wire formats ([`crate::api`]) and the HTTP client ([`crate::client`], which re-exports it)
//! both use it without using each other.

use std::fmt;

/// A secret (an API key). Shown as `***` everywhere; read it with [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Secret(key.into())
    }

    /// The key itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let key = Secret::new("sk-very-secret");
        assert_eq!(format!("{key}"), "***");
        assert_eq!(format!("{key:?}"), "Secret(***)");
        assert_eq!(key.expose(), "sk-very-secret");
    }
}
