//! What a client of the server may choose as an agent's brain.
//!
//! The game's own code (GDScript calling `AgentRuntime`, the Rust API) and the operator's
//! configuration (`--brains FILE`, `AgentRuntime.brain_profiles`, the flags below) are trusted:
//! they may name any brain object, a command line, an environment variable. What arrives over
//! the wire (the WebSocket protocol's `agent_spawn_request`) is not, and a brain is the most
//! powerful thing a request can name: a `cli` brain runs a program, a model brain sends a key
//! to an address and reads what comes back. So a client's `brain` is checked against a
//! [`ClientBrainPolicy`] before the runtime sees it:
//!
//! - **A name** is the operator's: a profile is always accepted, and so is the default brain
//!   (a config that names none). The presets — `scripted` and `claude`, the names `cli_backend`
//!   takes — run a fixed program, never one the client chose, and are accepted
//!   unless the operator turns them off ([`ClientBrainPolicy::presets`],
//!   `--no-client-presets`). Any other name is left to the runtime (a brain the application
//!   registered, or `unknown_brain`).
//! - **A brain object** is refused unless the operator allows them
//!   ([`ClientBrainPolicy::objects`], `--allow-client-brains`). Then only the HTTP providers
//!   (`openai`, `anthropic`, `ollama`: those of the brain registry), only the fields in
//!   [`CLIENT_FIELDS`] (never `api_key_env`, `headers`, `command`, `cli_backend`, a provider's
//!   own settings of the server it calls such as `num_ctx` or `keep_alive`, nor any field added
//!   later until it is listed), with
//!   the client's own key inline (`api_key`, required: the server's keys and environment are
//!   never lent to a client's brain), a `timeout_seconds` of at most
//!   [`MAX_CLIENT_TIMEOUT_SECONDS`], and a `base_url` whose origin the operator listed
//!   ([`ClientBrainPolicy::origins`], `--client-brain-origins`) when there is a list.
//!
//! Refusals are [`BrainRefusal`]s: the protocol's `brain_not_allowed`, naming the field and
//! the switch that would allow it.

use std::collections::BTreeMap;

use super::origin::Origin;
use super::spec::{BrainChoice, BrainSpec, CLAUDE_PRESET};

/// The fields a client's brain object may set. Anything else is refused by name, so a field
/// added to [`BrainSpec`] later stays the operator's until it is listed here.
pub const CLIENT_FIELDS: &[&str] = &[
    "provider",
    "model",
    "base_url",
    "api_key",
    "temperature",
    "max_tokens",
    "timeout_seconds",
    "max_retries",
    "token_budget",
    "trace_prompts",
];

/// The longest `timeout_seconds` a client's brain object may ask for: a call to an address a
/// client chose holds one of its endpoint's permits at most this long.
pub const MAX_CLIENT_TIMEOUT_SECONDS: f64 = 120.0;

/// Whether a client's brain object may use `provider`: the HTTP providers of the built-in
/// registry ([`super::BrainRegistry::http_api`]) only.
fn client_may_use(provider: &str) -> bool {
    super::llm::api(provider).is_some()
}

/// The providers a client's brain object may use, for messages (`anthropic, ollama or openai`).
fn client_providers() -> String {
    match super::BrainRegistry::builtins().http_names().as_slice() {
        [] => String::from("none"),
        [only] => only.to_string(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
    }
}

/// The preset names a client may use (unless presets are off): the values `cli_backend`
/// takes.
pub const PRESETS: &[&str] = &[super::scripted::NAME, CLAUDE_PRESET];

/// What brains clients of a server may choose. The default is the safe one: profiles and
/// presets by name, no brain objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientBrainPolicy {
    /// Accept brain objects from clients (of an HTTP provider, with their own key).
    /// Default off.
    pub objects: bool,
    /// The origins a client's brain object may point at; `None`: any (once objects are
    /// allowed). An empty list allows none.
    pub origins: Option<Vec<Origin>>,
    /// Accept the preset names `scripted` and `claude` from clients. Default on.
    pub presets: bool,
}

impl Default for ClientBrainPolicy {
    fn default() -> Self {
        ClientBrainPolicy {
            objects: false,
            origins: None,
            presets: true,
        }
    }
}

/// Why a client's brain was refused (`brain_not_allowed`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BrainRefusal(pub String);

impl ClientBrainPolicy {
    /// Checks a client's `brain` (`None`: the default brain, always accepted) against this
    /// policy; `profiles` are the operator's. Only the policy is checked here: the runtime then
    /// resolves the brain as for any spawn (an unknown name, a missing model…).
    pub fn check(
        &self,
        brain: Option<&BrainChoice>,
        profiles: &BTreeMap<String, BrainSpec>,
    ) -> Result<(), BrainRefusal> {
        match brain {
            None => Ok(()),
            Some(BrainChoice::Named(name)) => self.check_name(name, profiles),
            Some(BrainChoice::Spec(spec)) => self.check_object(spec, profiles),
        }
    }

    fn check_name(
        &self,
        name: &str,
        profiles: &BTreeMap<String, BrainSpec>,
    ) -> Result<(), BrainRefusal> {
        if profiles.contains_key(name) || self.presets || !PRESETS.contains(&name) {
            return Ok(());
        }
        Err(BrainRefusal(format!(
            "brain '{name}' is a preset, and this server takes no presets from clients: name \
             one of its brain profiles ({})",
            profile_list(profiles)
        )))
    }

    fn check_object(
        &self,
        spec: &BrainSpec,
        profiles: &BTreeMap<String, BrainSpec>,
    ) -> Result<(), BrainRefusal> {
        if !self.objects {
            return Err(BrainRefusal(format!(
                "this server takes no brain objects from clients: name one of its brain \
                 profiles ({}) as `brain`; an operator allows brain objects with \
                 `agents-server serve --allow-client-brains` (AgentRuntime.allow_client_brains \
                 in a game)",
                profile_list(profiles)
            )));
        }
        if !client_may_use(&spec.provider) {
            let hint = if PRESETS.contains(&spec.provider.as_str()) {
                format!(" (name the preset as the string \"{}\")", spec.provider)
            } else {
                String::from(" (command-line brains come from the operator's profiles only)")
            };
            return Err(BrainRefusal(format!(
                "brain.provider: a client's brain object may use {} only, not '{}'{hint}",
                client_providers(),
                spec.provider
            )));
        }
        let fields = serde_json::to_value(spec).unwrap_or_default();
        if let Some(field) = fields
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .find(|k| !CLIENT_FIELDS.contains(&k.as_str()))
        {
            let hint = match field.as_str() {
                "api_key_env" => ": bring the key itself as brain.api_key",
                _ => "",
            };
            return Err(BrainRefusal(format!(
                "brain.{field} is not taken from a client (a client's brain object may set {})\
                 {hint}",
                CLIENT_FIELDS.join(", ")
            )));
        }
        if let Some(t) = spec
            .options
            .get("timeout_seconds")
            .and_then(serde_json::Value::as_f64)
            && t > MAX_CLIENT_TIMEOUT_SECONDS
        {
            return Err(BrainRefusal(format!(
                "brain.timeout_seconds: a client's brain may wait at most \
                 {MAX_CLIENT_TIMEOUT_SECONDS} s for an answer, not {t}"
            )));
        }
        if spec.api_key.is_none() {
            return Err(BrainRefusal(
                "brain.api_key is required in a client's brain object: the server's keys are \
                 never lent to a client's brain (give \"\" for a server that needs no key)"
                    .into(),
            ));
        }
        if let Some(allowed) = &self.origins {
            // The URL the provider will call, as it resolves it: a `base_url` left out and
            // one given as `null` both mean the provider's default, which must be listed too.
            let url = super::llm::resolved_base_url(spec).map_err(BrainRefusal)?;
            let origin =
                Origin::of_url(&url).map_err(|e| BrainRefusal(format!("brain.base_url: {e}")))?;
            if !allowed.contains(&origin) {
                return Err(BrainRefusal(format!(
                    "brain.base_url: {origin} is not an origin this server lets clients' brains \
                     call ({}; the operator lists them with --client-brain-origins)",
                    if allowed.is_empty() {
                        "none is".to_string()
                    } else {
                        format!("allowed: {}", origin_list(allowed))
                    }
                )));
            }
        }
        Ok(())
    }
}

fn profile_list(profiles: &BTreeMap<String, BrainSpec>) -> String {
    if profiles.is_empty() {
        "it has none".into()
    } else {
        profiles.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

fn origin_list(origins: &[Origin]) -> String {
    origins
        .iter()
        .map(Origin::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::brain::origin::parse_origins;

    fn profiles() -> BTreeMap<String, BrainSpec> {
        let mut profiles = BTreeMap::new();
        let local = BrainSpec::provider("cli").with("command", vec!["my-model"]);
        profiles.insert("local".to_string(), local);
        profiles
    }

    fn object(value: serde_json::Value) -> BrainChoice {
        serde_json::from_value(value).unwrap()
    }

    fn refusal(policy: &ClientBrainPolicy, brain: serde_json::Value) -> String {
        policy
            .check(Some(&object(brain)), &profiles())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn by_default_names_pass_and_objects_are_refused_naming_the_switch() {
        let policy = ClientBrainPolicy::default();
        for name in ["local", "scripted", "claude", "registered-by-the-game"] {
            assert_eq!(
                policy.check(Some(&BrainChoice::named(name)), &profiles()),
                Ok(())
            );
        }
        assert_eq!(policy.check(None, &profiles()), Ok(()));
        let e = refusal(
            &policy,
            json!({"provider": "openai", "model": "m", "api_key": "k"}),
        );
        assert!(e.contains("--allow-client-brains"), "{e}");
        assert!(e.contains("profiles (local)"), "{e}");
        let e = refusal(
            &policy,
            json!({"provider": "cli", "command": ["sh", "-c", "id"]}),
        );
        assert!(e.contains("no brain objects"), "{e}");
    }

    #[test]
    fn presets_can_be_turned_off_but_a_profile_of_that_name_stays() {
        let policy = ClientBrainPolicy {
            presets: false,
            ..ClientBrainPolicy::default()
        };
        let e = policy
            .check(Some(&BrainChoice::named("claude")), &profiles())
            .unwrap_err()
            .to_string();
        assert!(e.contains("preset") && e.contains("(local)"), "{e}");
        assert!(
            policy
                .check(Some(&BrainChoice::named("scripted")), &profiles())
                .is_err()
        );
        let mut with_scripted = profiles();
        with_scripted.insert("scripted".into(), BrainSpec::provider("scripted"));
        assert_eq!(
            policy.check(Some(&BrainChoice::named("scripted")), &with_scripted),
            Ok(())
        );
        assert_eq!(
            policy.check(Some(&BrainChoice::named("local")), &profiles()),
            Ok(())
        );
    }

    #[test]
    fn allowed_objects_are_model_brains_with_their_own_key_and_client_fields_only() {
        let policy = ClientBrainPolicy {
            objects: true,
            ..ClientBrainPolicy::default()
        };
        let ok = json!({"provider": "openai", "model": "m", "api_key": "sk-client",
                        "base_url": "http://10.0.0.9/v1", "temperature": 0.5});
        assert_eq!(policy.check(Some(&object(ok)), &profiles()), Ok(()));
        let ok = json!({"provider": "anthropic", "model": "m", "api_key": ""});
        assert_eq!(policy.check(Some(&object(ok)), &profiles()), Ok(()));
        let ok = json!({"provider": "ollama", "model": "llama3.2", "api_key": "",
                        "temperature": 0.2, "max_tokens": 100});
        assert_eq!(policy.check(Some(&object(ok)), &profiles()), Ok(()));
        let only = format!("may use {} only, not 'cli'", client_providers());
        assert!(only.contains("anthropic, ollama or openai"), "{only}");
        for (brain, says) in [
            (
                json!({"provider": "cli", "command": ["sh", "-c", "id"]}),
                only.as_str(),
            ),
            (
                json!({"provider": "cli", "cli_backend": "claude"}),
                "not 'cli'",
            ),
            (
                json!({"provider": "scripted"}),
                "name the preset as the string \"scripted\"",
            ),
            (
                json!({"provider": "openai", "model": "m", "api_key_env": "DB_PASSWORD"}),
                "brain.api_key_env is not taken from a client",
            ),
            (
                json!({"provider": "openai", "model": "m", "api_key": "k",
                       "headers": {"X-Forwarded-For": "1"}}),
                "brain.headers is not taken from a client",
            ),
            (
                json!({"provider": "openai", "model": "m"}),
                "brain.api_key is required",
            ),
            (
                json!({"provider": "openai", "model": "m", "api_key": "k",
                       "timeout_seconds": 3600}),
                "at most 120 s",
            ),
            // The server's own settings of a provider are the operator's.
            (
                json!({"provider": "ollama", "model": "m", "api_key": "", "num_ctx": 131072}),
                "brain.num_ctx is not taken from a client",
            ),
            (
                json!({"provider": "ollama", "model": "m", "api_key": "", "keep_alive": -1}),
                "brain.keep_alive is not taken from a client",
            ),
        ] {
            let e = refusal(&policy, brain.clone());
            assert!(e.contains(says), "{brain}: {e}");
        }
    }

    #[test]
    fn listed_origins_confine_the_base_url() {
        let policy = ClientBrainPolicy {
            objects: true,
            origins: Some(
                parse_origins("https://api.openai.com, http://127.0.0.1:11434/").unwrap(),
            ),
            ..ClientBrainPolicy::default()
        };
        let with_url = |url: &str| {
            object(json!({"provider": "openai", "model": "m", "api_key": "k", "base_url": url}))
        };
        for url in [
            "https://api.openai.com/v1",
            "HTTPS://API.OPENAI.COM:443/v1",
            "http://127.0.0.1:11434/v1",
        ] {
            assert_eq!(
                policy.check(Some(&with_url(url)), &profiles()),
                Ok(()),
                "{url}"
            );
        }
        // The provider's default base URL is api.openai.com: allowed.
        let default = object(json!({"provider": "openai", "model": "m", "api_key": "k"}));
        assert_eq!(policy.check(Some(&default), &profiles()), Ok(()));
        let anthropic = object(json!({"provider": "anthropic", "model": "m", "api_key": "k"}));
        let e = policy
            .check(Some(&anthropic), &profiles())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("https://api.anthropic.com is not an origin"),
            "{e}"
        );
        for (url, says) in [
            (
                "http://127.0.0.1:9/v1",
                "http://127.0.0.1:9 is not an origin",
            ),
            ("http://api.openai.com/v1", "http://api.openai.com is not"),
            ("https://api.openai.com.evil.test/v1", "is not an origin"),
            ("http://2130706433:11434/v1", "http://127.0.0.1:11434"),
            ("https://user:pw@api.openai.com/v1", "user name or password"),
            ("file:///etc/passwd", "not an http:// or https:// URL"),
            ("not a url", "is not a URL"),
        ] {
            let result = policy.check(Some(&with_url(url)), &profiles());
            if url.starts_with("http://2130706433") {
                // The decimal form of 127.0.0.1 is the same origin, normalised.
                assert_eq!(result, Ok(()), "{url}");
                assert_eq!(Origin::of_url(url).unwrap().to_string(), says, "normalised");
                continue;
            }
            let e = result.unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
        }
        // `base_url: null` is the provider's default, as leaving it out is: checked the same,
        // for every HTTP provider. Only Ollama's default is on loopback (this list's origin).
        let local_only = ClientBrainPolicy {
            origins: Some(parse_origins("http://127.0.0.1:11434").unwrap()),
            ..policy.clone()
        };
        let providers = crate::brain::BrainRegistry::builtins().http_names();
        assert!(providers.len() >= 3, "{providers:?}");
        for provider in providers {
            let default = crate::brain::llm::api(provider).unwrap().default_base_url();
            let on_the_list =
                Origin::of_url(default).unwrap().to_string() == "http://127.0.0.1:11434";
            assert_eq!(on_the_list, provider == "ollama", "{provider}: {default}");
            for brain in [
                json!({"provider": provider, "model": "m", "api_key": "k", "base_url": null}),
                json!({"provider": provider, "model": "m", "api_key": "k"}),
            ] {
                let result = local_only.check(Some(&object(brain.clone())), &profiles());
                if on_the_list {
                    assert_eq!(result, Ok(()), "{brain}");
                } else {
                    let e = result.unwrap_err().to_string();
                    assert!(e.contains("is not an origin"), "{brain}: {e}");
                }
            }
        }
        // A base_url of another type is refused by the policy itself, naming the field.
        let e = refusal(
            &local_only,
            json!({"provider": "openai", "model": "m", "api_key": "k", "base_url": 7}),
        );
        assert!(e.contains("brain.base_url: invalid type"), "{e}");
        let none = ClientBrainPolicy {
            origins: Some(Vec::new()),
            ..policy
        };
        let e = none
            .check(Some(&default), &profiles())
            .unwrap_err()
            .to_string();
        assert!(e.contains("none is"), "{e}");
    }

    #[test]
    fn origin_lists_are_read_strictly() {
        let origins = parse_origins(" https://a.test ,http://b.test:8080").unwrap();
        assert_eq!(
            origins.iter().map(Origin::to_string).collect::<Vec<_>>(),
            ["https://a.test", "http://b.test:8080"]
        );
        assert_eq!(
            parse_origins("https://a.test,https://A.test:443")
                .unwrap()
                .len(),
            1
        );
        for (bad, says) in [
            ("", "origin 1 of the list is empty"),
            ("https://a.test,", "origin 2 of the list is empty"),
            ("https://a.test/v1", "is not an origin"),
            ("https://a.test/?q=1", "is not an origin"),
            ("ftp://a.test", "not an http:// or https:// URL"),
            ("a.test", "is not a URL"),
            ("https:/%2c", "not a host name or an IP address"),
        ] {
            let e = parse_origins(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
