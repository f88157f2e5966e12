//! `AgentConfig` from JSON (the protocol's and the Godot Dictionary's shape) and its validation:
//! never a panic; a config that parses serialises to a form that parses back and serialises the
//! same (a brain's inline `api_key` is written as `"***"`, so the first serialisation is where a
//! key is withheld; nothing else changes).
#![no_main]

use agents_core::runtime::AgentConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(config) = AgentConfig::from_json(&value) {
        let _ = config.validate();
        let again = serde_json::to_value(&config).expect("a config serialises");
        let back = AgentConfig::from_json(&again).expect("a serialised config parses");
        let twice = serde_json::to_value(&back).expect("a config serialises");
        assert_eq!(twice, again, "{value} → {again}");
        let has_inline_key = value
            .get("brain")
            .or_else(|| value.get("cli_backend"))
            .is_some_and(|b| b.get("api_key").is_some());
        if !has_inline_key {
            assert_eq!(back, config, "{value} → {again}");
        }
    }
});
