//! The tool-set names the inspector offers for [member AgentConfig.tool_sets].
//!
//! Tools written in GDScript are registered while the game runs, so the editor cannot see them
//! being registered. The names it offers are therefore: the built-in sets (`world`, `games`), the
//! sets the project declares in the project setting [`SETTING`] (`godot_agents/tool_sets`,
//! Project Settings → General), and the sets registered in this process so far (a running game,
//! or a `@tool` script in the editor). An `AgentNode` whose config names a set that is none of
//! these gets a configuration warning that says how to declare it.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use agents_core::runtime::{GAME_TOOLS, WORLD_TOOLS};
use godot::classes::{Engine, Object};
use godot::prelude::*;
use godot::register::info::PropertyHint;

/// The project setting that declares the sets a game registers at run time.
pub const SETTING: &str = "godot_agents/tool_sets";

/// Sets registered in this process (by `AgentRuntime.register_tool`).
static REGISTERED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Adds the project setting (empty) when the project has none, so that it shows in Project
/// Settings; an empty list is the default and is not written to `project.godot`.
pub fn declare_setting() {
    let Some(mut settings) = project_settings() else {
        return;
    };
    let (name, empty) = (SETTING.to_variant(), PackedStringArray::new().to_variant());
    let has = settings
        .try_call("has_setting", std::slice::from_ref(&name))
        .is_ok_and(|v| v.try_to::<bool>().unwrap_or(false));
    if !has {
        let _ = settings.try_call("set_setting", &[name.clone(), empty.clone()]);
    }
    let _ = settings.try_call("set_initial_value", &[name.clone(), empty]);
    let _ = settings.try_call("set_as_basic", &[name, true.to_variant()]);
    let mut info = VarDictionary::new();
    info.set("name", SETTING);
    info.set("type", VariantType::PACKED_STRING_ARRAY.ord());
    let _ = settings.try_call("add_property_info", &[info.to_variant()]);
}

/// The `ProjectSettings` singleton (the extension's minimal class set has no typed API for it).
fn project_settings() -> Option<Gd<Object>> {
    Engine::singleton().get_singleton("ProjectSettings")
}

/// Remembers that `set` was registered (sets of one node, `node:<id>`, are not offered).
pub fn remember(set: &str) {
    if set.starts_with("node:") {
        return;
    }
    REGISTERED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(set.to_string());
}

/// The sets the project declares in [`SETTING`].
fn declared() -> Vec<String> {
    let Some(mut settings) = project_settings() else {
        return Vec::new();
    };
    settings
        .try_call("get_setting", &[SETTING.to_variant(), Variant::nil()])
        .ok()
        .and_then(|v| v.try_to::<PackedStringArray>().ok())
        .unwrap_or_default()
        .as_slice()
        .iter()
        .map(|n| n.to_string().trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Every name offered: built-in first, then declared and registered ones, sorted, each once.
pub fn known() -> Vec<String> {
    let mut others: BTreeSet<String> = declared().into_iter().collect();
    others.extend(
        REGISTERED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned(),
    );
    let builtin = [WORLD_TOOLS.to_string(), GAME_TOOLS.to_string()];
    others.retain(|n| !builtin.contains(n));
    builtin.into_iter().chain(others).collect()
}

/// The hint of [member AgentConfig.tool_sets]: an array of strings, each suggested from
/// [`known`] (any other name can still be typed).
pub fn property_hint() -> (PropertyHint, GString) {
    // A comma or a colon inside a name would break the hint string: leave such names out.
    let names: Vec<String> = known()
        .into_iter()
        .filter(|n| !n.contains([',', ':']))
        .collect();
    let hint_string = format!(
        "{}/{}:{}",
        VariantType::STRING.ord(),
        PropertyHint::ENUM_SUGGESTION.ord(),
        names.join(",")
    );
    (
        PropertyHint::TYPE_STRING,
        GString::from(hint_string.as_str()),
    )
}

/// The sets of `names` that are neither built in, declared nor registered.
pub fn unknown(names: &[String]) -> Vec<String> {
    let known = known();
    names
        .iter()
        .filter(|n| !n.starts_with("node:") && !known.contains(n))
        .cloned()
        .collect()
}
