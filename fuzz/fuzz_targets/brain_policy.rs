//! The client brain policy: `--client-brain-origins` lists and the check of a client's `brain`.
//! Input: a first line with flags and an origin list, the rest a brain (JSON). Never a panic;
//! an origin list that parses prints back to one that parses the same; and whatever the policy
//! accepts keeps its promises — a brain object only when objects are allowed, then a model
//! provider, the client's own key, no field outside the client's list and a listed origin.
#![no_main]

use std::collections::BTreeMap;

use agents_core::brain::origin::{self, Origin};
use agents_core::brain::policy::{self, ClientBrainPolicy};
use agents_core::brain::{BrainChoice, BrainSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (first, brain) = text.split_once('\n').unwrap_or((text, ""));
    let flags = first.bytes().next().unwrap_or(0);
    let list = first.get(1..).unwrap_or("");
    let origins = match origin::parse_origins(list) {
        Ok(origins) => {
            let printed: Vec<String> = origins.iter().map(Origin::to_string).collect();
            let again = origin::parse_origins(&printed.join(",")).expect("printed origins parse");
            assert_eq!(again, origins, "{list:?}");
            Some(origins)
        }
        Err(_) => None,
    };
    let policy = ClientBrainPolicy {
        objects: flags & 1 != 0,
        origins: if flags & 2 != 0 { origins } else { None },
        presets: flags & 4 != 0,
    };
    let Ok(choice) = serde_json::from_str::<BrainChoice>(brain) else {
        return;
    };
    let mut profiles = BTreeMap::new();
    profiles.insert("local".to_string(), BrainSpec::provider("scripted"));
    if policy.check(Some(&choice), &profiles).is_err() {
        return;
    }
    match &choice {
        BrainChoice::Named(name) => {
            assert!(policy.presets || name == "local" || !policy::PRESETS.contains(&name.as_str()));
        }
        BrainChoice::Spec(spec) => {
            assert!(policy.objects, "an object without --allow-client-brains");
            let api = agents_core::brain::llm::api(&spec.provider);
            assert!(api.is_some(), "a client brain of provider {}", spec.provider);
            assert!(spec.api_key.is_some(), "a client brain without its own key");
            // A timeout that is no number is the provider's to refuse at spawn.
            assert!(
                spec.options
                    .get("timeout_seconds")
                    .and_then(serde_json::Value::as_f64)
                    .is_none_or(|t| t <= policy::MAX_CLIENT_TIMEOUT_SECONDS)
            );
            let fields = serde_json::to_value(spec).unwrap();
            for field in fields.as_object().unwrap().keys() {
                assert!(policy::CLIENT_FIELDS.contains(&field.as_str()), "{field}");
            }
            // A base URL that is no text is the provider's to refuse at spawn.
            let url = match spec.options.get("base_url") {
                None => api.map(|api| api.default_base_url()),
                Some(serde_json::Value::String(url)) => Some(url.as_str()),
                Some(_) => None,
            };
            if let (Some(allowed), Some(url)) = (&policy.origins, url) {
                assert!(allowed.contains(&Origin::of_url(url).unwrap()), "{url}");
            }
        }
    }
});
