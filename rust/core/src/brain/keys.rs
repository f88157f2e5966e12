//! Where model brains find their API keys.
//!
//! A brain object names the environment variable that holds its key (`api_key_env`, default
//! `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`). [`ApiKeys`] answers for that name: a key handed to the
//! running process ([`ApiKeys::set`], `Runtime::set_api_key`, Godot
//! `AgentRuntime.set_api_key`) comes first, else the environment variable. Keys handed over
//! live in this process's memory only, as [`Secret`]s: they are never written to SQLite, a
//! resource, a log line, an error, an event or a trace, and they are gone when the process
//! ends. A game that asks its player for a key hands it over this way instead of setting an
//! environment variable.
//!
//! A brain object may also carry its key itself ([`InlineKey`], the object's `api_key`): the
//! way a client of the WebSocket server brings its own key, since the server's keys and
//! environment are never lent to a client's brain. An inline key is kept in memory like a key
//! handed over; the stored agent record says only that there was one (`"***"`).

use std::collections::HashMap;
use std::sync::Arc;

use agents_llm::client::Secret;
use parking_lot::RwLock;

/// API keys by variable name: handed over in memory, else from the environment. Cheap to clone
/// (clones share the keys).
#[derive(Clone, Debug, Default)]
pub struct ApiKeys(Arc<RwLock<HashMap<String, Secret>>>);

impl ApiKeys {
    /// No key handed over yet (the environment still answers).
    pub fn new() -> Self {
        ApiKeys::default()
    }

    /// Hands over the key for `name` (`OPENAI_API_KEY`, or a brain's `api_key_env`), replacing
    /// one handed over before. An empty or blank key removes it. Brains built from now on use
    /// it; running agents keep the key they were built with.
    pub fn set(&self, name: &str, key: &str) {
        let mut keys = self.0.write();
        if key.trim().is_empty() {
            keys.remove(name);
        } else {
            keys.insert(name.to_string(), Secret::new(key.trim()));
        }
    }

    /// The key for `name`: the one handed over, else the environment variable if it is set
    /// and not blank.
    pub fn get(&self, name: &str) -> Option<Secret> {
        if let Some(key) = self.0.read().get(name) {
            return Some(key.clone());
        }
        std::env::var(name)
            .ok()
            .filter(|k| !k.trim().is_empty())
            .map(Secret::new)
    }

    /// Whether a key for `name` is known (handed over or in the environment).
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

/// What a stored or serialized brain object writes instead of an inline key.
pub const WITHHELD_KEY: &str = "***";

/// A brain object's own API key (`api_key`): the key itself as given, or, read back from a
/// stored record, the mark that one was given and not stored.
///
/// Serialized, a key is never written: a non-empty key becomes [`WITHHELD_KEY`], an empty one
/// (a server that needs no key) stays `""`. Read, [`WITHHELD_KEY`] is [`InlineKey::Withheld`],
/// anything else the key. Debug output never shows a key.
#[derive(Clone, Debug)]
pub enum InlineKey {
    /// The key (empty: send none).
    Given(Secret),
    /// A key was given once and not stored: the brain cannot be built again without it.
    Withheld,
}

impl InlineKey {
    /// The key as given (empty: send none); an error naming the field when it was withheld
    /// (a stored agent whose brain brought its own key).
    pub fn key(&self) -> Result<Secret, super::BrainError> {
        match self {
            InlineKey::Given(key) => Ok(key.clone()),
            InlineKey::Withheld => Err(super::BrainError::KeyNotStored),
        }
    }
}

impl PartialEq for InlineKey {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (InlineKey::Given(a), InlineKey::Given(b)) => a.expose() == b.expose(),
            (InlineKey::Withheld, InlineKey::Withheld) => true,
            _ => false,
        }
    }
}

impl serde::Serialize for InlineKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            InlineKey::Given(key) if key.expose().is_empty() => serializer.serialize_str(""),
            _ => serializer.serialize_str(WITHHELD_KEY),
        }
    }
}

impl<'de> serde::Deserialize<'de> for InlineKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let key = String::deserialize(deserializer)?;
        Ok(if key == WITHHELD_KEY {
            InlineKey::Withheld
        } else {
            InlineKey::Given(Secret::new(key.trim()))
        })
    }
}

impl schemars::JsonSchema for InlineKey {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "InlineKey".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "maxLength": crate::limits::MAX_API_KEY_CHARS,
            "description": "The API key itself (kept in memory, never stored or logged); an \
                empty string for a server that needs none."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_key_is_never_written() {
        let key: InlineKey = serde_json::from_value(serde_json::json!(" sk-inline ")).unwrap();
        assert_eq!(key.key().unwrap().expose(), "sk-inline");
        assert_eq!(serde_json::to_value(&key).unwrap(), WITHHELD_KEY);
        assert!(!format!("{key:?}").contains("sk-inline"));
        let stored: InlineKey = serde_json::from_value(serde_json::json!(WITHHELD_KEY)).unwrap();
        assert_eq!(stored, InlineKey::Withheld);
        assert!(stored.key().is_err());
        let none: InlineKey = serde_json::from_value(serde_json::json!("")).unwrap();
        assert_eq!(none.key().unwrap().expose(), "");
        assert_eq!(serde_json::to_value(&none).unwrap(), "");
    }

    #[test]
    fn a_key_handed_over_comes_before_the_environment_and_blank_removes_it() {
        let keys = ApiKeys::new();
        let name = "GODOT_AGENTS_TEST_KEY_NEVER_SET";
        assert!(keys.get(name).is_none());
        assert!(!keys.has(name));
        keys.set(name, "  sk-in-memory ");
        assert_eq!(keys.get(name).unwrap().expose(), "sk-in-memory");
        assert!(keys.clone().has(name), "clones share the keys");
        assert_eq!(format!("{keys:?}").matches("sk-in-memory").count(), 0);
        keys.set(name, " ");
        assert!(keys.get(name).is_none());
        // The environment answers for what was not handed over.
        assert!(keys.get("PATH").is_some());
    }
}
