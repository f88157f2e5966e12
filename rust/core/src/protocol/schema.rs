//! The protocol's JSON Schemas (draft 2020-12), generated from the message types with `schemars`
//! and published under `docs/protocol/` (`cargo xtask protocol-schemas` writes them, a unit test
//! fails when the committed files are stale).
//!
//! - [`client_request`]: every request a client may send, each with the optional `request_id`
//!   (a string, an integer or `null`) that [`parse_request`](super::parse_request) strips before
//!   deserializing, and with `cli_backend` accepted as another name of `agent_config.brain`.
//! - [`server_message`]: every message the server sends, as serialized (every field present,
//!   `null` where empty).
//! - [`error_message`]: the `error` message alone.
//! - [`message_schema`]: one message type alone (`agent_speech`, `ping`, …).
//!
//! [`all`] lists every published file; [`write_files`] and [`stale_files`] write and check a
//! directory of them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::{ClientRequest, EVENT_TYPES, RequestId, ServerMessage};

/// Where the schemas live, relative to the workspace root.
pub const SCHEMA_DIR: &str = "docs/protocol";

/// The file of the client request schema.
pub const CLIENT_REQUEST_FILE: &str = "client-request.schema.json";
/// The file of the server message schema.
pub const SERVER_MESSAGE_FILE: &str = "server-message.schema.json";
/// The file of the `error` message schema.
pub const ERROR_FILE: &str = "error.schema.json";

/// The command that regenerates the files (named in failure messages).
pub const REGENERATE_COMMAND: &str = "cargo xtask protocol-schemas";

const REQUEST_ID_DESCRIPTION: &str = "Any string or integer (or null); echoed unchanged as the \
     reply's `request_id`. Optional.";

/// The schema of every client request: a `oneOf` with one object schema per request `type`.
/// Unknown fields are rejected (`additionalProperties: false`), as the server does.
pub fn client_request() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut request_id = generator.subschema_for::<Option<RequestId>>().to_value();
    if let Value::Object(o) = &mut request_id {
        o.insert("description".into(), REQUEST_ID_DESCRIPTION.into());
    }
    let mut root = generator.into_root_schema_for::<ClientRequest>().to_value();
    for variant in variants_mut(&mut root) {
        if let Some(Value::Object(properties)) = variant.get_mut("properties") {
            properties.insert("request_id".into(), request_id.clone());
        }
    }
    // `brain` has the serde alias `cli_backend`, which schemars does not see.
    if let Some(Value::Object(properties)) = root.pointer_mut("/$defs/AgentConfig/properties")
        && let Some(brain) = properties.get("brain").cloned()
    {
        let mut alias = brain;
        if let Value::Object(o) = &mut alias {
            o.insert(
                "description".into(),
                "Another name of `brain` (give one of the two).".into(),
            );
        }
        properties.insert("cli_backend".into(), alias);
    }
    root
}

/// The schema of every message the server sends: a `oneOf` with one object schema per `type`
/// (the `welcome`, the responses, the events and `error`), describing the serialized form.
pub fn server_message() -> Value {
    let mut root = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<ServerMessage>()
        .to_value();
    inline_events(&mut root);
    root
}

/// The replies and the events are untagged variants of [`ServerMessage`] (`Reply`: a
/// request's reply; `Event`: a bus message as it is), which schemars writes as `anyOf`
/// branches referring to their own `oneOf`s. On the wire every message has its own `type`:
/// their branches take those branches' places in one `oneOf` (the replies after `welcome`,
/// the events last), and the two definitions go.
fn inline_events(root: &mut Value) {
    let Some(Value::Object(root)) = Some(root) else {
        return;
    };
    let mut take = |name: &str| -> Vec<Value> {
        root.get_mut("$defs")
            .and_then(Value::as_object_mut)
            .and_then(|defs| defs.remove(name))
            .as_ref()
            .and_then(|d| d.get("oneOf"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let events = take("BusMessage");
    let replies = take("Reply");
    let branches = root
        .remove("anyOf")
        .or_else(|| root.remove("oneOf"))
        .and_then(|v| match v {
            Value::Array(items) => Some(items),
            _ => None,
        })
        .unwrap_or_default();
    let mut all = Vec::with_capacity(branches.len() + events.len() + replies.len());
    for branch in branches {
        match branch.get("$ref").and_then(Value::as_str) {
            Some("#/$defs/BusMessage") => all.extend(events.iter().cloned()),
            Some("#/$defs/Reply") => {}
            _ => all.push(branch),
        }
    }
    let after_welcome = usize::from(!all.is_empty());
    all.splice(after_welcome..after_welcome, replies);
    root.insert("oneOf".into(), Value::Array(all));
}

/// The schema of the `error` message `{"type":"error","code":…,"message":…,"request_id":…}`.
pub fn error_message() -> Value {
    let server = server_message();
    message_schemas(&server)
        .into_iter()
        .find(|(name, _)| name == "error")
        .map(|(_, schema)| schema)
        .unwrap_or(Value::Null)
}

/// The schema of one message type alone (a request, a response, an event, `welcome` or
/// `error`), or `None` when no message has that `type`.
pub fn message_schema(type_name: &str) -> Option<Value> {
    message_schemas(&client_request())
        .into_iter()
        .chain(message_schemas(&server_message()))
        .find(|(name, _)| name == type_name)
        .map(|(_, schema)| schema)
}

/// Every published schema file: its path relative to [`SCHEMA_DIR`] and its content.
///
/// `client-request.schema.json`, `server-message.schema.json` and `error.schema.json` at the
/// top; one file per message type in `requests/`, `responses/` (with `welcome`) and `events/`
/// (with `events_dropped`).
pub fn all() -> Vec<(String, Value)> {
    let client = client_request();
    let server = server_message();
    let mut files = vec![
        (CLIENT_REQUEST_FILE.to_string(), client.clone()),
        (SERVER_MESSAGE_FILE.to_string(), server.clone()),
    ];
    for (name, schema) in message_schemas(&client) {
        files.push((format!("requests/{name}.schema.json"), schema));
    }
    for (name, schema) in message_schemas(&server) {
        let file = match server_group(&name) {
            ServerGroup::Error => ERROR_FILE.to_string(),
            ServerGroup::Event => format!("events/{name}.schema.json"),
            ServerGroup::Response => format!("responses/{name}.schema.json"),
        };
        files.push((file, schema));
    }
    files
}

/// The compiled schema of each request type.
fn request_validator(kind: &str) -> Option<&'static jsonschema::Validator> {
    static VALIDATORS: OnceLock<Vec<(String, jsonschema::Validator)>> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(|| {
        message_schemas(&client_request())
            .into_iter()
            .filter_map(|(name, schema)| Some((name, jsonschema::validator_for(&schema).ok()?)))
            .collect()
    });
    validators
        .iter()
        .find(|(name, _)| name == kind)
        .map(|(_, v)| v)
}

/// Checks the shape of a request of type `kind` against its schema — types (an array is never an
/// object, a string never a number) and limits (`maxLength`, `maxItems`, from
/// [`crate::limits`]) — and names the first problem: `agent_config.initial_position: expected an
/// object or null, found an array`, `agent_config.prompt: is 1048576 characters long; the limit
/// is 16384`. Missing and unknown fields are left to serde, whose messages list the expected
/// fields.
pub(crate) fn check_request(kind: &str, request: &Value) -> Result<(), String> {
    let Some(validator) = request_validator(kind) else {
        return Ok(());
    };
    if validator.is_valid(request) {
        return Ok(());
    }
    use jsonschema::error::ValidationErrorKind as K;
    let problem = validator
        .iter_errors(request)
        .filter(|e| {
            !matches!(
                e.kind(),
                K::AdditionalProperties { .. } | K::Required { .. }
            )
        })
        .max_by_key(|e| e.instance_path().as_str().len());
    match problem {
        None => Ok(()),
        Some(e) => {
            let path = e
                .instance_path()
                .as_str()
                .trim_start_matches('/')
                .replace('/', ".");
            let what = describe(&e);
            Err(if path.is_empty() {
                what
            } else {
                format!("{path}: {what}")
            })
        }
    }
}

/// One schema failure in words.
fn describe(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let found = crate::json_kind::json_kind(e.instance());
    let types = |kind: &TypeKind| -> Vec<String> {
        match kind {
            TypeKind::Single(t) => vec![t.to_string()],
            TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
        }
    };
    let expected = |names: Vec<String>| -> String {
        let mut names: Vec<String> = names.into_iter().map(|t| article(&t)).collect();
        // `null` last: "an object or null".
        names.sort_by_key(|n| n == "null");
        names.dedup();
        names.join(" or ")
    };
    match e.kind() {
        K::Type { kind } => format!("expected {}, found {found}", expected(types(kind))),
        K::AnyOf { context } | K::OneOfNotValid { context } => {
            // Every branch failed on its type: say which types would do.
            let mut names = Vec::new();
            for branch in context {
                for inner in branch {
                    match inner.kind() {
                        K::Type { kind } if inner.instance_path() == e.instance_path() => {
                            names.extend(types(kind))
                        }
                        _ => return crate::json_kind::schema_error_text(e),
                    }
                }
            }
            format!("expected {}, found {found}", expected(names))
        }
        K::MaxLength { limit } => {
            let n = e.instance().as_str().map_or(0, |s| s.chars().count());
            format!("is {n} characters long; the limit is {limit}")
        }
        K::MaxItems { limit } => {
            let n = e.instance().as_array().map_or(0, Vec::len);
            format!("has {n} entries; the limit is {limit}")
        }
        _ => crate::json_kind::schema_error_text(e),
    }
}

/// `an object`, `a string`, `an integer`, `null`.
fn article(json_type: &str) -> String {
    match json_type {
        "null" => "null".into(),
        t if t.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {t}"),
        t => format!("a {t}"),
    }
}

/// A schema file's text: pretty JSON with a trailing newline.
pub fn render(schema: &Value) -> String {
    // Keys in alphabetical order: the same file from every build.
    let mut text = serde_json::to_string_pretty(&crate::json_sorted::sorted(schema))
        .unwrap_or_else(|_| "null".into());
    text.push('\n');
    text
}

/// Writes every schema of [`all`] under `dir` (creating folders) and removes `*.schema.json`
/// files there that are no longer generated. Returns the written files.
pub fn write_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let files = all();
    let mut written = Vec::with_capacity(files.len());
    for (name, schema) in &files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, render(schema))?;
        written.push(path);
    }
    for extra in extra_files(dir, &files) {
        std::fs::remove_file(dir.join(extra))?;
    }
    Ok(written)
}

/// What differs between `dir` and [`all`]: one line per missing, different or no longer
/// generated file (empty when the directory is up to date).
pub fn stale_files(dir: &Path) -> Vec<String> {
    let files = all();
    let mut problems = Vec::new();
    for (name, schema) in &files {
        match std::fs::read_to_string(dir.join(name)) {
            Err(_) => problems.push(format!("{name}: missing")),
            Ok(text) if text != render(schema) => {
                problems.push(format!("{name}: differs from the generated schema"))
            }
            Ok(_) => {}
        }
    }
    for extra in extra_files(dir, &files) {
        problems.push(format!("{extra}: no longer generated"));
    }
    problems
}

/// `*.schema.json` files under `dir` (relative, `/`-separated) that `files` does not list.
fn extra_files(dir: &Path, files: &[(String, Value)]) -> Vec<String> {
    let mut found = Vec::new();
    collect_schema_files(dir, "", &mut found);
    found.retain(|f| !files.iter().any(|(name, _)| name == f));
    found.sort();
    found
}

fn collect_schema_files(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = format!("{prefix}{name}");
        let path = entry.path();
        if path.is_dir() {
            collect_schema_files(&path, &format!("{relative}/"), out);
        } else if name.ends_with(".schema.json") {
            out.push(relative);
        }
    }
}

/// Which folder a server message type's schema goes to.
enum ServerGroup {
    Error,
    Event,
    Response,
}

fn server_group(type_name: &str) -> ServerGroup {
    if type_name == "error" {
        ServerGroup::Error
    } else if EVENT_TYPES.contains(&type_name) || type_name == "events_dropped" {
        ServerGroup::Event
    } else {
        ServerGroup::Response
    }
}

/// The `oneOf` variants of a root schema.
fn variants_mut(root: &mut Value) -> impl Iterator<Item = &mut Map<String, Value>> {
    root.get_mut("oneOf")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Each `oneOf` variant of a root schema as a root schema of its own (with `$schema`, a title
/// and only the `$defs` it refers to), keyed by its `type`.
fn message_schemas(root: &Value) -> Vec<(String, Value)> {
    let defs = root.get("$defs").and_then(Value::as_object);
    let meta = root.get("$schema").cloned();
    let Some(variants) = root.get("oneOf").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(variants.len());
    for variant in variants {
        let Some(name) = variant
            .pointer("/properties/type/const")
            .and_then(Value::as_str)
        else {
            continue;
        };
        let mut schema = Map::new();
        if let Some(meta) = &meta {
            schema.insert("$schema".into(), meta.clone());
        }
        schema.insert("title".into(), json!(name));
        if let Value::Object(fields) = variant {
            for (k, v) in fields {
                schema.insert(k.clone(), v.clone());
            }
        }
        if let Some(defs) = defs {
            let used = referenced_defs(variant, defs);
            if !used.is_empty() {
                schema.insert("$defs".into(), Value::Object(used));
            }
        }
        out.push((name.to_string(), Value::Object(schema)));
    }
    out
}

/// The definitions `schema` refers to (`#/$defs/Name`), transitively.
fn referenced_defs(schema: &Value, defs: &Map<String, Value>) -> Map<String, Value> {
    let mut used = Map::new();
    let mut pending = Vec::new();
    collect_refs(schema, &mut pending);
    while let Some(name) = pending.pop() {
        if used.contains_key(&name) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            collect_refs(def, &mut pending);
            used.insert(name, def.clone());
        }
    }
    used
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                out.push(name.to_string());
            }
            for v in o.values() {
                collect_refs(v, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_refs(v, out);
            }
        }
        _ => {}
    }
}
