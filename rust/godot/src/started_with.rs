//! What the properties of an [AgentRuntime](crate::agent_runtime::AgentRuntime) were when it
//! started, to say which were changed too late.
//!
//! Most of its properties are read once, at `start()` (the database, the world, the brains, the
//! server). A runtime with `autostart` starts in its own `_ready`, which Godot runs before its
//! parent's: a property the parent's `_ready` sets afterwards would be ignored without a word.
//! So the runtime keeps the values it started with ([`StartedWith::take`]) and, on the first
//! frame after (and on a `start()` while it runs), names every property that changed since in a
//! warning, with what to do instead.

use godot::classes::ClassDb;
use godot::prelude::*;

/// Properties that act while the runtime runs (read every frame, or changed by a method): a new
/// value is no late change.
const LIVE: [&str; 6] = [
    "autostart",
    "max_events_per_frame",
    "max_drain_usec_per_frame",
    "position_sync_interval",
    "merge_speech_deltas",
    "runtime_token_budget",
];

/// The values of a runtime's start-time properties.
#[derive(Default)]
pub(crate) struct StartedWith {
    values: Vec<(StringName, Variant)>,
}

impl StartedWith {
    /// The current values of `node`'s start-time properties (its class's own stored
    /// properties, but those in [`LIVE`]). Dictionaries and arrays are copied: a later change
    /// inside one counts.
    pub fn take(node: &Gd<Node>, class: &str) -> Self {
        let mut values = Vec::new();
        let properties = ClassDb::singleton()
            .class_get_property_list_ex(class)
            .no_inheritance(true)
            .done();
        for property in properties.iter_shared() {
            let usage = property
                .get("usage")
                .and_then(|u| u.try_to::<i64>().ok())
                .unwrap_or(0);
            // PROPERTY_USAGE_STORAGE: a saved property (not a group or a category).
            if usage & 2 == 0 {
                continue;
            }
            // The name is a String in the list: read as text either way.
            let Some(name) = property
                .get("name")
                .map(|n| StringName::from(&n.to_string()))
            else {
                continue;
            };
            if LIVE.contains(&name.to_string().as_str()) {
                continue;
            }
            let value = copied(node.get(&name));
            values.push((name, value));
        }
        StartedWith { values }
    }

    /// The properties of `node` whose value is no longer the one it started with, by name.
    pub fn changed(&self, node: &Gd<Node>) -> Vec<String> {
        self.values
            .iter()
            .filter(|(name, before)| node.get(name) != *before)
            .map(|(name, _)| name.to_string())
            .collect()
    }
}

/// `value`, with a Dictionary or an Array copied deeply.
fn copied(value: Variant) -> Variant {
    match value.get_type() {
        VariantType::DICTIONARY => value
            .try_to::<VarDictionary>()
            .map_or(value, |d| d.duplicate_deep().to_variant()),
        VariantType::ARRAY => value
            .try_to::<VarArray>()
            .map_or(value, |a| a.duplicate_deep().to_variant()),
        _ => value,
    }
}

/// The warning for `changed` properties of a running runtime.
pub(crate) fn warning(changed: &[String]) -> String {
    let names: Vec<String> = changed
        .iter()
        .map(|n| format!("AgentRuntime.{n}"))
        .collect();
    let (was, is, it, them) = if names.len() == 1 {
        ("was", "is", "it", "it")
    } else {
        ("were", "are", "they", "them")
    };
    format!(
        "{} {was} changed after the runtime started and {is} not applied: {it} {is} read at \
         start() (with autostart, in the runtime's own _ready, which runs before its parent's). \
         Set {them} in the inspector, or turn autostart off and call start() after setting {them}.",
        names.join(", ")
    )
}
