//! Godot's paths as the operating system's: `res://` and `user://` made absolute, for the core
//! (a database file, a campaign folder, a model file), which opens files by their paths.

use godot::classes::{Engine, Os};
use godot::prelude::*;

/// `path` as an operating-system path: `user://` and `res://` through
/// `ProjectSettings.globalize_path`, anything else unchanged.
pub fn globalize_path(path: &str) -> String {
    if !(path.starts_with("user://") || path.starts_with("res://")) {
        return path.to_string();
    }
    let engine = Engine::singleton();
    if let Some(mut settings) = engine.get_singleton("ProjectSettings")
        && let Ok(result) = settings.try_call("globalize_path", &[path.to_variant()])
        && let Ok(global) = result.try_to::<GString>()
        && !global.is_empty()
    {
        return global.to_string();
    }
    match path.strip_prefix("user://") {
        Some(rest) => format!("{}/{rest}", Os::singleton().get_user_data_dir()),
        None => path.to_string(),
    }
}
