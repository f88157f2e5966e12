//! Looking a question up with one of the agent's read-only tools.
//!
//! A line asks something (it has a `?`). Its **content words** are its words that are not
//! stopwords ([`crate::memory::is_stopword`]), not [`VAGUE`] ("check", "many", "ready", …) and
//! not words of the agent's name, compared by their English stems. A read-only tool
//! ([`BrainContext::read_only_tools`]) **matches** the question when its **vocabulary** — the
//! words of its name (split at `_`, `-` and between a lower-case letter and an upper-case one)
//! and of its description, less the same words — shares a content word with it. Each shared word
//! scores 2 when it is in the name, else 1; the tool that scores most is taken, the first listed
//! on ties, if arguments can be made for it from its JSON Schema:
//!
//! - a string with `enum`: the value a content word names;
//! - any other string: the first content word that is not in the tool's vocabulary and stands
//!   at most two words from one that is (asked "Any rye left?", `check_stock` "How many loaves
//!   of a bread are left in stock" gets `{"item": "rye"}`; "Will there be bread for the
//!   festival?" gets nothing: "festival" is too far from "bread"), within
//!   `minLength`/`maxLength`;
//! - an integer or a number: a number said in the question, else the schema's `default`, else
//!   its `minimum`, else 0, within `minimum`/`maximum`;
//! - a boolean: the schema's `default`, else `false`.
//!
//! Only required arguments are made; a tool with a required argument that cannot be made (an
//! object, an array, a string with no word left for it) is not called.

use serde_json::{Map, Value};

use super::BrainContext;
use crate::eval::lines::words;
use crate::memory::stem;

/// Words too vague to say what a tool is for, or what a question asks about ("Is the bread
/// ready?" asks about bread, not "ready"): verbs every tool has, quantities, common adjectives.
pub(super) const VAGUE: &[&str] = &[
    "amount",
    "available",
    "bad",
    "call",
    "check",
    "cold",
    "current",
    "data",
    "done",
    "empty",
    "enough",
    "fetch",
    "find",
    "fresh",
    "full",
    "get",
    "give",
    "given",
    "good",
    "got",
    "hot",
    "info",
    "information",
    "list",
    "look",
    "make",
    "many",
    "much",
    "new",
    "number",
    "old",
    "open",
    "possible",
    "ready",
    "return",
    "returns",
    "see",
    "set",
    "show",
    "still",
    "sure",
    "tool",
    "use",
    "value",
];

/// How many words from a word the tool shares a string argument's word may be.
const NEAR_WORDS: usize = 2;

/// Most characters of a described result ([`describe`]).
const RESULT_CHARS: usize = 160;

/// A read-only call that looks a question up.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Lookup {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// What the question asks about: the string argument made from it, else the first content
    /// word the tool shares.
    pub subject: String,
}

/// One content word of a question: as said, and its stem.
struct Content {
    word: String,
    stem: String,
    /// Where it is among the question's words.
    at: usize,
}

/// The read-only tool that looks up `question` for the agent of `ctx`, with its arguments (see
/// the module docs); `None` when the line asks nothing or no tool matches.
pub(super) fn lookup(ctx: &BrainContext, question: &str) -> Option<Lookup> {
    if !super::lines::is_question(question) || ctx.read_only_tools.is_empty() {
        return None;
    }
    let own: Vec<String> = words(&ctx.name);
    let mut content: Vec<Content> = Vec::new();
    for (at, word) in words(question).into_iter().enumerate() {
        let word = word.strip_suffix("'s").unwrap_or(&word).to_string();
        if word.chars().count() < 2 || is_vague(&word) || own.contains(&word) {
            continue;
        }
        let stem = stem(&word);
        if !content.iter().any(|c| c.stem == stem) {
            content.push(Content { word, stem, at });
        }
    }
    if content.is_empty() {
        return None;
    }
    let mut best: Option<(u32, Lookup)> = None;
    for def in &ctx.tools {
        let Some(name) = def.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !ctx.read_only_tools.iter().any(|t| t == name) {
            continue;
        }
        let named = vocabulary(&name_words(name));
        let description = def.get("description").and_then(Value::as_str).unwrap_or("");
        let described = vocabulary(&words(description));
        let score: u32 = content
            .iter()
            .map(|c| {
                if named.contains(&c.stem) {
                    2
                } else if described.contains(&c.stem) {
                    1
                } else {
                    0
                }
            })
            .sum();
        if score == 0 || best.as_ref().is_some_and(|(s, _)| *s >= score) {
            continue;
        }
        let known = |stem: &str| named.iter().chain(&described).any(|s| s == stem);
        let schema = def.get("parameters").unwrap_or(&Value::Null);
        let Some((args, made)) = arguments(schema, &content, &known, question) else {
            continue;
        };
        let subject = made.unwrap_or_else(|| {
            content
                .iter()
                .find(|c| known(&c.stem))
                .map_or_else(String::new, |c| c.word.clone())
        });
        best = Some((
            score,
            Lookup {
                tool: name.to_string(),
                args,
                subject,
            },
        ));
    }
    best.map(|(_, lookup)| lookup)
}

/// Whether a word (lower case) says nothing of what is asked.
fn is_vague(word: &str) -> bool {
    crate::memory::is_stopword(word) || VAGUE.contains(&word)
}

/// The words of a tool name: split at `_`, `-`, other non-alphanumerics and where a lower-case
/// letter meets an upper-case one (`checkStock` → check, stock), lower-cased.
fn name_words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_lower);
        if boundary && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The stems of `words` that say something (not [vague](is_vague)).
fn vocabulary(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter(|w| !is_vague(w))
        .map(|w| stem(w))
        .collect()
}

/// Arguments for a tool whose `parameters` are `schema`, from the question's `content` words
/// (`known`: whether a stem is in the tool's vocabulary); with the string made from the
/// question, if one was. `None` when a required argument cannot be made.
fn arguments(
    schema: &Value,
    content: &[Content],
    known: &dyn Fn(&str) -> bool,
    question: &str,
) -> Option<(Value, Option<String>)> {
    let mut args = Map::new();
    let mut made: Option<String> = None;
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Some((Value::Object(args), None));
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for name in required {
        let property = properties.get(name).unwrap_or(&Value::Null);
        let value = argument(property, content, known, question)?;
        if made.is_none()
            && let Value::String(s) = &value
        {
            made = Some(s.clone());
        }
        args.insert(name.to_string(), value);
    }
    Some((Value::Object(args), made))
}

/// One argument for `property` (a JSON Schema), if one can be made (see the module docs).
fn argument(
    property: &Value,
    content: &[Content],
    known: &dyn Fn(&str) -> bool,
    question: &str,
) -> Option<Value> {
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        return content.iter().find_map(|c| {
            options
                .iter()
                .find(|o| {
                    o.as_str()
                        .is_some_and(|o| o.eq_ignore_ascii_case(&c.word) || stem(o) == c.stem)
                })
                .cloned()
        });
    }
    let kind = match property.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or(""),
        _ => "string",
    };
    match kind {
        "string" => {
            // What is asked about is said next to what the tool is about ("any *rye* left",
            // "*spelt* in stock"), not further off ("bread for the festival").
            let near = |c: &Content| {
                content
                    .iter()
                    .filter(|k| known(&k.stem))
                    .any(|k| k.at.abs_diff(c.at) <= NEAR_WORDS)
            };
            let word = content.iter().find(|c| !known(&c.stem) && near(c))?;
            let length = word.word.chars().count() as u64;
            let at_least = property
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let at_most = property
                .get("maxLength")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            (at_least..=at_most)
                .contains(&length)
                .then(|| Value::String(word.word.clone()))
        }
        "integer" | "number" => {
            let integer = kind == "integer";
            let minimum = property.get("minimum").and_then(Value::as_f64);
            let maximum = property.get("maximum").and_then(Value::as_f64);
            let said = words(question)
                .iter()
                .find_map(|w| w.parse::<f64>().ok())
                .filter(|n| n.is_finite() && (!integer || n.fract() == 0.0));
            let default = property.get("default").and_then(Value::as_f64);
            let n = said.or(default).or(minimum).unwrap_or(0.0);
            let inside = minimum.is_none_or(|m| n >= m) && maximum.is_none_or(|m| n <= m);
            if !inside {
                return None;
            }
            if integer {
                // Whole and finite: an i64 when it fits.
                let whole = n as i64;
                (whole as f64 == n).then(|| Value::from(whole))
            } else {
                serde_json::Number::from_f64(n).map(Value::Number)
            }
        }
        "boolean" => Some(
            property
                .get("default")
                .and_then(Value::as_bool)
                .map_or(Value::Bool(false), Value::Bool),
        ),
        _ => None,
    }
}

/// What a read-only tool returned, as a phrase for a line: an object's fields as `key: value`
/// (those that repeat an argument, and `error`, left out), a `{"result": …}` as its value,
/// lists joined with commas, `yes`/`no` for booleans; cut to 160 characters.
pub(super) fn describe(result: &Value, args: &Value) -> String {
    let text = match result {
        Value::Object(map) if map.len() == 1 && map.contains_key("result") => {
            scalar(&map["result"])
        }
        Value::Object(map) => {
            let repeats = |key: &str, value: &Value| {
                key == "error" || args.get(key).is_some_and(|a| a == value)
            };
            let fields: Vec<String> = map
                .iter()
                .filter(|(key, value)| !repeats(key, value))
                .map(|(key, value)| format!("{}: {}", key.replace('_', " "), scalar(value)))
                .collect();
            if fields.is_empty() {
                scalar(result)
            } else {
                fields.join(", ")
            }
        }
        other => scalar(other),
    };
    super::lines::truncate_chars(&super::lines::quote(&text, usize::MAX), RESULT_CHARS, "…")
}

/// Why a read-only call failed, from its result (`{"error": "why"}`, or the result itself).
pub(super) fn failure(result: &Value) -> String {
    let why = match result.get("error") {
        Some(Value::String(why)) => why.clone(),
        _ => scalar(result),
    };
    super::lines::truncate_chars(&super::lines::quote(&why, usize::MAX), RESULT_CHARS, "…")
}

/// A JSON value in words: strings as they are, numbers, `yes`/`no`, lists of them joined with
/// commas, anything else as compact JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Null => "nothing".into(),
        // A whole number read as a float (what a game's JSON often holds) reads as one: "3".
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) =>
        {
            n.as_i64()
                .or_else(|| n.as_f64().map(|f| f as i64))
                .map_or_else(|| n.to_string(), |i| i.to_string())
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            if items.is_empty() {
                "none".into()
            } else {
                items.iter().map(scalar).collect::<Vec<_>>().join(", ")
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ctx(tools: Vec<Value>, read_only: &[&str]) -> BrainContext {
        let mut c = BrainContext::detached("agent_001", "Mira");
        c.tools = tools;
        c.read_only_tools = read_only.iter().map(|t| t.to_string()).collect();
        c
    }

    fn check_stock() -> Value {
        json!({"name": "check_stock",
               "description": "How many loaves of a bread are left in stock.",
               "parameters": {"type": "object", "properties": {"item": {"type": "string"}},
                              "required": ["item"]}})
    }

    #[test]
    fn a_question_sharing_a_word_with_a_read_only_tool_looks_it_up() {
        let c = ctx(vec![check_stock()], &["check_stock"]);
        let found = lookup(&c, "Good morning, Mira! Any rye left?").unwrap();
        assert_eq!(found.tool, "check_stock");
        assert_eq!(found.args, json!({"item": "rye"}));
        assert_eq!(found.subject, "rye");
        // Plurals and other forms match by their stem; the name counts too.
        let found = lookup(&c, "Do you have spelt in stock?").unwrap();
        assert_eq!(found.args, json!({"item": "spelt"}));
        let found = lookup(&c, "How much sourdough is left?").unwrap();
        assert_eq!(found.args, json!({"item": "sourdough"}));
    }

    #[test]
    fn no_lookup_without_a_question_a_match_or_an_argument() {
        let c = ctx(vec![check_stock()], &["check_stock"]);
        // Not a question.
        assert_eq!(lookup(&c, "Rye is left."), None);
        // No word in common.
        assert_eq!(lookup(&c, "Is the well deep?"), None);
        // About bread, but nothing to ask the stock for ("ready" is vague; "festival" is not
        // what the bread is).
        assert_eq!(lookup(&c, "Is the bread ready?"), None);
        assert_eq!(
            lookup(&c, "Hello Mira! Will there be bread for the festival?"),
            None
        );
        // The same tool, not read-only.
        assert_eq!(
            lookup(&ctx(vec![check_stock()], &[]), "Any rye left?"),
            None
        );
    }

    #[test]
    fn the_best_scoring_tool_is_taken_and_arguments_follow_the_schema() {
        let oven = json!({"name": "oven_temperature", "description": "The oven's heat.",
            "parameters": {"type": "object",
                "properties": {"oven": {"type": "integer", "minimum": 1, "maximum": 3},
                               "celsius": {"type": "boolean"}},
                "required": ["oven", "celsius"]}});
        let flour = json!({"name": "flour", "description": "Flour by kind.",
            "parameters": {"type": "object",
                "properties": {"kind": {"type": "string", "enum": ["Rye", "Wheat"]}},
                "required": ["kind"]}});
        let c = ctx(
            vec![check_stock(), oven, flour],
            &["check_stock", "oven_temperature", "flour"],
        );
        let found = lookup(&c, "How hot is oven 2?").unwrap();
        assert_eq!(found.tool, "oven_temperature");
        assert_eq!(found.args, json!({"oven": 2, "celsius": false}));
        // Out of range: not called.
        assert_eq!(lookup(&c, "How hot is oven 7?"), None);
        // The name scores double: "flour" beats the stock's description.
        let found = lookup(&c, "Any rye flour left?").unwrap();
        assert_eq!(found.tool, "flour");
        assert_eq!(found.args, json!({"kind": "Rye"}));
        assert_eq!(found.subject, "Rye");
        // An enum the question names none of: not called.
        assert_eq!(
            lookup(
                &ctx(
                    vec![json!({"name": "flour", "description": "Flour by kind.",
            "parameters": {"type": "object", "properties": {"kind": {"enum": ["Rye"]}},
                           "required": ["kind"]}})],
                    &["flour"]
                ),
                "Any flour?"
            ),
            None
        );
        // No parameters: called with none.
        let peek = json!({"name": "peekWindow", "description": "Looks out."});
        let found = lookup(&ctx(vec![peek], &["peekWindow"]), "Can you peek outside?").unwrap();
        assert_eq!(
            (found.tool.as_str(), found.args.clone()),
            ("peekWindow", json!({}))
        );
        assert_eq!(found.subject, "peek");
    }

    #[test]
    fn results_read_as_words() {
        let args = json!({"item": "rye"});
        assert_eq!(
            describe(&json!({"item": "rye", "left": 3}), &args),
            "left: 3"
        );
        assert_eq!(describe(&json!({"result": [1, 2]}), &args), "1, 2");
        assert_eq!(
            describe(&json!({"left": 3.0, "price": 2.5}), &args),
            "left: 3, price: 2.5"
        );
        assert_eq!(
            describe(
                &json!({"open": true, "hours_left": 2.5, "who": null}),
                &args
            ),
            "open: yes, hours left: 2.5, who: nothing"
        );
        assert_eq!(describe(&json!({"item": "rye"}), &args), "{'item':'rye'}");
        assert_eq!(describe(&json!("a\n\"b\""), &args), "a 'b'");
        assert!(
            describe(&json!({"x": "y".repeat(500)}), &args)
                .chars()
                .count()
                <= 160
        );
        assert_eq!(failure(&json!({"error": "no such bread"})), "no such bread");
        assert_eq!(failure(&json!(5)), "5");
    }
}
