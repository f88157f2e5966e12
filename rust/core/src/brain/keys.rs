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

#[cfg(test)]
mod tests {
    use super::*;

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
