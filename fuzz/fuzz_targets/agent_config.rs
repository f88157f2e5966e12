//! `AgentConfig` from JSON (the protocol's and the Godot Dictionary's shape) and its validation:
//! never a panic; a config that parses serialises back to the same config.
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
        assert_eq!(back, config, "{value} → {again}");
    }
});
