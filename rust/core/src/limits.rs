//! Every cap on what a client, a game or a brain may store or send, in one place.
//!
//! The runtime enforces them whatever the front end (the Godot node, the WebSocket protocol,
//! MCP): [`AgentConfig::validate`](crate::runtime::AgentConfig::validate) and the runtime's
//! methods refuse an over-long value with an error naming the field and the limit
//! (`prompt is 1048576 characters long; the limit is 16384`). The protocol's JSON Schemas carry
//! the same numbers (`maxLength`, `maxItems`), so a request over a limit is refused before it
//! reaches the runtime, and the published schemas document them. Lengths are in characters
//! (Unicode scalar values), as JSON Schema counts them. `docs/protocol.md` has the table.

/// A request's `request_id` given as a string (every reply echoes it).
pub const MAX_REQUEST_ID_CHARS: usize = 128;
/// An agent id (`agent_001`, or one a game chose).
pub const MAX_AGENT_ID_CHARS: usize = 64;
/// Characters of an agent's `key` (the game's stable name for it).
pub const MAX_AGENT_KEY_CHARS: usize = 128;
/// An agent's display name.
pub const MAX_NAME_CHARS: usize = 100;
/// An agent's role.
pub const MAX_ROLE_CHARS: usize = 200;
/// An agent's role prompt.
pub const MAX_PROMPT_CHARS: usize = 16_384;
/// A brain name.
pub const MAX_BRAIN_NAME_CHARS: usize = 64;
/// The longest inline API key a brain object may carry (`api_key`), in characters.
pub const MAX_API_KEY_CHARS: usize = 1024;
/// A seed given as a string.
pub const MAX_SEED_CHARS: usize = 256;
/// Replies in an agent's `script`.
pub const MAX_SCRIPT_REPLIES: usize = 100;
/// Who speaks in `send_message` (an id).
pub const MAX_SENDER_CHARS: usize = 64;
/// The longest an agent may wait idle before it decides on its own (`idle_think_seconds`):
/// a day.
pub const MAX_IDLE_THINK_SECONDS: f64 = 86_400.0;
/// The longest the scripted brain may take to think (`thinking_seconds`), and the longest a
/// line may take to say (`speaking_seconds`): ten minutes. Longer would keep an agent
/// thinking or speaking — deaf to its next decision — for as long.
pub const MAX_ACT_SECONDS: f64 = 600.0;
/// The latest game time, in seconds, a memory may be stamped with (about 31,700 years of game
/// time; exact in a float, so later times still count up from it), and the longest
/// `recency_half_life_seconds`.
pub const MAX_GAME_TIME_SECONDS: f64 = 1e12;
/// A message or line sent to an agent.
pub const MAX_MESSAGE_CHARS: usize = 4_000;
/// The longest text of one memory, in characters.
pub const MAX_MEMORY_TEXT_CHARS: usize = 2_000;
/// What a game tells an agent it perceives (`observe`): the longest text one memory holds, since
/// each observation becomes a memory as it is, so a longer one is refused rather than cut.
pub const MAX_OBSERVATION_CHARS: usize = MAX_MEMORY_TEXT_CHARS;
/// A task name.
pub const MAX_TASK_NAME_CHARS: usize = 200;
/// A tool name.
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// Tool sets an agent is attached to (`tools` in its config).
pub const MAX_TOOL_SETS: usize = 16;
/// A tool set's name.
pub const MAX_TOOL_SET_NAME_CHARS: usize = 64;
/// A tool call's arguments, as compact JSON.
pub const MAX_TOOL_ARGUMENTS_BYTES: usize = 64 * 1024;
/// A line an agent says (the `speak` tool's `content`), in characters.
pub const MAX_SPEAK_CHARS: usize = 1000;
/// What a brain's answer may carry (see [`crate::contract::BrainReply::bounded`]): its
/// `assistant_text`, in characters — the `speak` limit, since the text is spoken.
pub const MAX_ASSISTANT_TEXT_CHARS: usize = MAX_SPEAK_CHARS;
/// A dialog type (a brain answer's `dialog_type`, the `speak` tool's), in characters.
pub const MAX_DIALOG_TYPE_CHARS: usize = 64;
/// A tool call's id in a brain's answer, in characters.
pub const MAX_CALL_ID_CHARS: usize = 64;
/// A tool call's `reason` in a brain's answer, in characters.
pub const MAX_CALL_REASON_CHARS: usize = 500;
/// Tool calls in one brain answer; an answer with more is refused as a whole.
pub const MAX_REPLY_TOOL_CALLS: usize = 64;
/// Entries in a `subscribe` list (event types or agent ids).
pub const MAX_FILTER_ENTRIES: usize = 1_000;
/// Rows in one page of a list reply (`limit` above this is an error).
pub const MAX_PAGE: usize = 500;
/// An app's id.
pub const MAX_APP_ID_CHARS: usize = 64;
/// An app action's (a tool's) description.
pub const MAX_TOOL_DESCRIPTION_CHARS: usize = 4_000;
/// An app's state, or an action's result, as compact JSON.
pub const MAX_APP_STATE_BYTES: usize = 256 * 1024;
/// An app's `human_label`.
pub const MAX_HUMAN_LABEL_CHARS: usize = 200;
/// An app event's name.
pub const MAX_EVENT_NAME_CHARS: usize = 64;
/// An app event's payload, as compact JSON.
pub const MAX_EVENT_PAYLOAD_BYTES: usize = 16 * 1024;
/// An app action's `params` JSON Schema, as compact JSON.
pub const MAX_ACTION_PARAMS_BYTES: usize = 16 * 1024;
/// How deeply an app action's `params` JSON Schema nests (objects and arrays; the schema's own
/// object is level 1; `enum`, `const`, `default` and `examples` values are not counted).
pub const MAX_ACTION_PARAMS_DEPTH: usize = 16;
/// The largest `minItems` / `maxItems` in an app action's `params` JSON Schema.
pub const MAX_SCHEMA_ITEMS: u64 = 1_000;
/// The largest `minLength` in an app action's `params` JSON Schema.
pub const MAX_SCHEMA_MIN_LENGTH: u64 = 4_000;
/// The largest magnitude of a numeric bound (`minimum`, `maximum`, `exclusiveMinimum`,
/// `exclusiveMaximum`) in an app action's `params` JSON Schema: 2^53 - 1, the largest integer
/// a JSON number holds exactly.
pub const MAX_SCHEMA_NUMBER: f64 = 9_007_199_254_740_991.0;
/// About how many bytes of JSON the scripted brain's arguments for an app action reach at most,
/// whatever the schema asks (half of [`MAX_TOOL_ARGUMENTS_BYTES`], so they stay callable).
pub const MAX_SAMPLED_ARGUMENTS_BYTES: usize = MAX_TOOL_ARGUMENTS_BYTES / 2;
/// A campaign file named by a client (`campaign_load`, the GM tools over `call_tool` and MCP):
/// a larger file is refused before it is parsed.
pub const MAX_CAMPAIGN_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// A campaign file's name as a client gives it (a path relative to the campaign directory).
pub const MAX_CAMPAIGN_PATH_CHARS: usize = 1_024;
/// Campaigns one server holds loaded at once (`campaign_load`, by path or inline): loading
/// another is refused with `limit_reached` until one is unloaded (`campaign_unload`). Loading
/// again under a loaded id replaces that campaign and takes no more room.
pub const MAX_LOADED_CAMPAIGNS: usize = 32;
/// A campaign's id: a campaign with a longer one is refused at load.
pub const MAX_CAMPAIGN_ID_CHARS: usize = 64;
/// Areas in a campaign's map: a campaign with more is refused at load, and a `map_generate`
/// that would pass it is invalid.
pub const MAX_CAMPAIGN_AREAS: usize = 2_000;
/// A `map_generate` theme (its areas' names begin with it), in characters.
pub const MAX_MAP_THEME_CHARS: usize = 200;
/// Actors in a campaign: a campaign with more is refused at load.
pub const MAX_CAMPAIGN_ACTORS: usize = 1_000;
/// One area or one actor of a campaign (its `meta` included), as compact JSON: a campaign with
/// a larger one is refused at load, so a page of a campaign reply always has room for one.
pub const MAX_CAMPAIGN_ENTRY_BYTES: usize = 8 * 1024;
/// A campaign without its areas and actors (its settings, allowlist, goal, …), as compact
/// JSON: a campaign with more is refused at load.
pub const MAX_CAMPAIGN_HEAD_BYTES: usize = 16 * 1024;
/// Rows of each kind (actions, events, chat lines) an app's log keeps in the database: writing
/// one more removes the oldest of its kind.
pub const MAX_APP_LOG_ROWS: usize = 1_000;
/// Campaign requests waiting on one WebSocket connection (they run one at a time, in order);
/// one more is refused with `rate_limited`.
pub const MAX_QUEUED_CAMPAIGN_REQUESTS: usize = 64;

/// `Err("{field} is N bytes of JSON; the limit is MAX")` when `value` written as compact JSON
/// is longer than `max` bytes.
pub fn check_json_bytes(field: &str, value: &serde_json::Value, max: usize) -> Result<(), String> {
    let n = serde_json::to_vec(value).map_or(0, |v| v.len());
    if n > max {
        return Err(format!("{field} is {n} bytes of JSON; the limit is {max}"));
    }
    Ok(())
}

/// `Err("{field} is N characters long; the limit is MAX")` when `text` is longer than `max`.
pub fn check_chars(field: &str, text: &str, max: usize) -> Result<(), String> {
    // Cheap first: a string of at most `max` bytes has at most `max` characters.
    if text.len() <= max {
        return Ok(());
    }
    let n = text.chars().count();
    if n > max {
        return Err(format!(
            "{field} is {n} characters long; the limit is {max}"
        ));
    }
    Ok(())
}

/// The mark a text cut by [`cut_chars`] ends with.
pub const CUT_MARK: char = '…';

/// Cuts `text` to at most `max` characters, on a character boundary: when it is longer, its
/// first `max - 1` characters and [`CUT_MARK`]. Returns whether it was cut. Does not copy.
pub fn cut_chars(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    match text.char_indices().nth(max) {
        None => false,
        Some(_) => {
            let keep = text
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(0, |(at, _)| at);
            text.truncate(keep);
            if max > 0 {
                text.push(CUT_MARK);
            }
            true
        }
    }
}

/// [`cut_chars`] on a copy of `text`.
pub fn cut_copy(text: &str, max: usize) -> String {
    let end = text
        .char_indices()
        .nth(max)
        .map_or(text.len(), |(at, _)| at);
    let mut out = text[..end].to_string();
    if end < text.len() {
        out.push(CUT_MARK);
        cut_chars(&mut out, max);
    }
    out
}

/// The most JSON a page of rows may take.
pub const MAX_PAGE_BYTES: usize = 60 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_keep_character_boundaries_and_the_limit() {
        let mut short = "héllo".to_string();
        assert!(!cut_chars(&mut short, 5));
        assert_eq!(short, "héllo");
        let mut long = "é".repeat(12);
        assert!(cut_chars(&mut long, 10));
        assert_eq!(long, format!("{}…", "é".repeat(9)));
        assert_eq!(long.chars().count(), 10);
        assert_eq!(cut_copy(&"日本".repeat(100), 7), "日本日本日本…");
        assert_eq!(cut_copy("tiny", 7), "tiny");
        let mut none = "abc".to_string();
        assert!(cut_chars(&mut none, 0));
        assert_eq!(none, "");
    }

    #[test]
    fn check_chars_counts_characters_not_bytes() {
        assert_eq!(check_chars("name", "héllo", 5), Ok(()));
        assert_eq!(check_chars("name", &"é".repeat(5), 5), Ok(()));
        assert_eq!(
            check_chars("name", &"é".repeat(6), 5),
            Err("name is 6 characters long; the limit is 5".into())
        );
        assert_eq!(check_chars("name", "", 0), Ok(()));
    }
}
