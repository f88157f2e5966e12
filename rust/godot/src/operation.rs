//! `AgentOperation`: something asynchronous the game started (a campaign turn, a human's action
//! in an app), to `await`. It always finishes — with its result, or with why it failed — so an
//! awaiting coroutine never hangs.

use godot::classes::{IRefCounted, RefCounted};
use godot::prelude::*;

use crate::guard::put;

/// An asynchronous operation, to `await`: methods such as [method Campaign.turn] return its
/// [signal finished], so `var result = await campaign.turn("Where can I go?")` waits for the
/// end; the `_async` variants ([method Campaign.turn_async]) return the object itself, to poll
/// or keep. The result is always a Dictionary with `ok` (bool) and `error` (`{code, message}`
/// when `ok` is false, else empty), plus what the operation gives (a turn's `entry`, an
/// action's `record`).
///
/// ```gdscript
/// func ask_the_gm(campaign: Campaign) -> void:
///     var result: Dictionary = await campaign.turn("Where can I go from here?")
///     if result.ok:
///         print(result.entry.assistant_text)
///     else:
///         print(result.error.code, ": ", result.error.message)
/// ```
#[derive(GodotClass)]
#[class(init, base = RefCounted)]
pub struct AgentOperation {
    result: VarDictionary,
    finished: bool,
    base: Base<RefCounted>,
}

#[godot_api]
impl IRefCounted for AgentOperation {}

#[godot_api]
impl AgentOperation {
    /// The operation ended: [param result] has `ok`, `error` (`{code, message}`) and the
    /// operation's own keys.
    #[signal]
    fn finished(result: VarDictionary);

    /// Whether it has finished.
    #[func]
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The result once finished (see [signal finished]); empty before.
    #[func]
    pub fn get_result(&self) -> VarDictionary {
        self.result.clone()
    }

    /// Emits [signal finished] (deferred from `finish`; `_keep` holds this object alive until
    /// then).
    #[func(rename = _emit_finished)]
    fn emit_finished(&mut self, _keep: Variant) {
        let result = self.result.clone();
        self.signals().finished().emit(&result);
    }
}

impl AgentOperation {
    /// A new operation, not finished.
    pub fn start() -> Gd<AgentOperation> {
        AgentOperation::new_gd()
    }

    /// An operation finished already: with `result` (`ok` true), or failed.
    pub fn done(result: Result<VarDictionary, (&str, String)>) -> Gd<AgentOperation> {
        let mut op = Self::start();
        op.bind_mut().finish(result);
        op
    }

    /// The signal to await.
    pub fn signal(op: &Gd<AgentOperation>) -> Signal {
        Signal::from_object_signal(op, "finished")
    }

    /// Finishes it (once): with `Ok(keys)` (`ok` true, the keys added), or `Err((code,
    /// message))`. The result is readable now; [signal finished] is emitted at the next idle
    /// time, after the caller began to await it and never while the caller is busy.
    pub fn finish(&mut self, result: Result<VarDictionary, (&str, String)>) {
        if self.finished {
            return;
        }
        let mut out = VarDictionary::new();
        match result {
            Ok(keys) => {
                put(&mut out, "ok", true.to_variant());
                put(&mut out, "error", VarDictionary::new().to_variant());
                for (key, value) in keys.iter_shared() {
                    out.set(&key, &value);
                }
            }
            Err((code, message)) => {
                put(&mut out, "ok", false.to_variant());
                let mut error = VarDictionary::new();
                put(&mut error, "code", code.to_variant());
                put(&mut error, "message", message.to_variant());
                put(&mut out, "error", error.to_variant());
            }
        }
        self.finished = true;
        self.result = out;
        let keep = self.to_gd().to_variant();
        self.base_mut().call_deferred("_emit_finished", &[keep]);
    }
}
