//! The extension's panic guard and its small shared helpers: no Rust panic crosses into Godot;
//! a method that panicked returns an `internal error in <what>: <panic message>` error instead.

use std::panic::{AssertUnwindSafe, catch_unwind};

use godot::builtin::{VarDictionary, Variant};
use godot::meta::ToGodot;

/// Runs `f`; a panic becomes the error `wrap("internal error in <what>: <message>")`.
pub(crate) fn guarded<T, E>(
    what: &str,
    f: impl FnOnce() -> Result<T, E>,
    wrap: impl FnOnce(String) -> E,
) -> Result<T, E> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".to_string());
        Err(wrap(format!("internal error in {what}: {detail}")))
    })
}

/// `dict[key] = value`.
pub(crate) fn put(dict: &mut VarDictionary, key: &str, value: Variant) {
    dict.set(&key.to_variant(), &value);
}
