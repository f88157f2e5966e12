//! MCP over stdio, framed per JSON-RPC 2.0: every line is classified before the MCP service sees
//! it, so every request that has an id gets exactly one reply, whatever it contains.
//!
//! rmcp's stdio transport drops a line it cannot decode without a word, and answers a `tools/call`
//! whose params do not decode as an unknown method. A client then waits forever for its id. In
//! front of it, [`classify`] answers what JSON-RPC 2.0 says, itself:
//!
//! | line | reply |
//! |---|---|
//! | empty | none |
//! | not JSON | `-32700` Parse error, `id: null` |
//! | JSON, but a number out of range (`1e999`) | a request: `-32602` Invalid params with its id; a notification: none |
//! | not an object (a batch array, a number) | `-32600` Invalid Request, `id: null` |
//! | an object without `"jsonrpc": "2.0"`, with an `id` that is not a string, an integer or null, or with neither `method` nor `result`/`error` | `-32600` with its id when it has a usable one, else `id: null` |
//! | `tools/call` whose `params` is not an object with a string `name` and an object (or absent) `arguments` | `-32602` with its id |
//! | anything else | passed on to the MCP service |

use serde_json::{Value, json};

/// JSON-RPC: invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one line read from stdin.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// Nothing (an empty line, or a malformed notification, which gets no reply).
    Ignore,
    /// Hand the line to the MCP service.
    Pass,
    /// Write this JSON-RPC error response (one line) to stdout.
    Reply(String),
}

/// Classifies one line (see the module docs).
pub fn classify(line: &str) -> Line {
    if line.trim().is_empty() {
        return Line::Ignore;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(_) => return unparsable(line),
    };
    let Value::Object(object) = &value else {
        return Line::Reply(error(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a message must be a JSON object (batches are not supported)",
        ));
    };
    let id = object.get("id");
    let id_ok = matches!(id, None | Some(Value::Null | Value::String(_)))
        || id.is_some_and(|v| v.is_i64() || v.is_u64());
    let reply_id = if id_ok {
        id.cloned().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Line::Reply(error(
            &reply_id,
            INVALID_REQUEST,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    if !id_ok {
        return Line::Reply(error(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid Request: \"id\" must be a string, an integer or null",
        ));
    }
    let method = match object.get("method") {
        Some(Value::String(m)) => m.as_str(),
        Some(_) => {
            return Line::Reply(error(
                &reply_id,
                INVALID_REQUEST,
                "Invalid Request: \"method\" must be a string",
            ));
        }
        // A response to a request of ours (the server may ask the client things).
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Line::Pass;
        }
        None => {
            return Line::Reply(error(
                &reply_id,
                INVALID_REQUEST,
                "Invalid Request: no \"method\"",
            ));
        }
    };
    if method == "tools/call"
        && let Err(problem) = check_tool_call(object.get("params"))
    {
        return match id {
            Some(_) => Line::Reply(error(&reply_id, INVALID_PARAMS, &problem)),
            None => Line::Ignore,
        };
    }
    Line::Pass
}

/// The params of `tools/call`: `{name: string, arguments?: object}`.
fn check_tool_call(params: Option<&Value>) -> Result<(), String> {
    let Some(Value::Object(params)) = params else {
        return Err(
            "Invalid params: tools/call needs params {\"name\": …, \"arguments\": {…}}".into(),
        );
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        _ => return Err("Invalid params: \"name\" must be the tool's name, a string".into()),
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => Ok(()),
        Some(_) => Err("Invalid params: \"arguments\" must be an object".into()),
    }
}

/// A line serde_json refuses: JSON with a number out of range (`1e999`, a huge integer
/// exponent) is still JSON, and a request gets `-32602` with its id; anything else is `-32700`.
fn unparsable(line: &str) -> Line {
    let Some(tamed) = tame_numbers(line) else {
        return parse_error();
    };
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(&tamed) else {
        return parse_error();
    };
    match object.get("id") {
        Some(id @ Value::String(_)) => Line::Reply(error(
            id,
            INVALID_PARAMS,
            "Invalid params: a number is out of range",
        )),
        Some(id) if id.is_i64() || id.is_u64() => Line::Reply(error(
            id,
            INVALID_PARAMS,
            "Invalid params: a number is out of range",
        )),
        // A notification (or an unusable id): nothing to answer to.
        _ if object.contains_key("method") && !object.contains_key("id") => Line::Ignore,
        _ => Line::Reply(error(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a number is out of range and the id is unusable",
        )),
    }
}

fn parse_error() -> Line {
    Line::Reply(error(
        &Value::Null,
        PARSE_ERROR,
        "Parse error: the line is not JSON",
    ))
}

/// The line with every number literal that does not fit an `f64` replaced by `null`, when there
/// was at least one (`None` otherwise: the line's problem is something else).
fn tame_numbers(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut changed = false;
    let mut i = 0;
    let mut in_string = false;
    let mut start = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let begin = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let token = &line[begin..i];
                if token.parse::<f64>().is_ok_and(|v| v.is_infinite()) {
                    out.push_str(&line[start..begin]);
                    out.push_str("null");
                    start = i;
                    changed = true;
                }
            }
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&line[start..]);
    Some(out)
}

/// A JSON-RPC error response, one line.
fn error(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Serves `handler` over MCP on `input`/`output` (stdin/stdout), with every line classified
/// first (see the module docs). Returns when the input ends and the service has stopped.
pub async fn serve<R, W>(
    handler: super::McpHandler,
    input: R,
    output: W,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::ServiceExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (service_in, mut to_service) = tokio::io::duplex(64 * 1024);
    let (from_service, service_out) = tokio::io::duplex(64 * 1024);
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::channel::<String>(256);

    // One writer owns stdout, so our replies and the service's never interleave within a line.
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = lines_rx.recv().await {
            if output.write_all(line.as_bytes()).await.is_err()
                || output.write_all(b"\n").await.is_err()
                || output.flush().await.is_err()
            {
                break;
            }
        }
    });
    let service_lines = lines_tx.clone();
    let relay = tokio::spawn(async move {
        let mut lines = BufReader::new(from_service).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if service_lines.send(line).await.is_err() {
                break;
            }
        }
    });
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(input).lines();
        loop {
            let line = match lines.next_line().await {
                Ok(Some(line)) => line,
                // End of input, or bytes that are not UTF-8 (the line cannot be parsed).
                Ok(None) => break,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    if let Line::Reply(reply) = parse_error()
                        && lines_tx.send(reply).await.is_err()
                    {
                        break;
                    }
                    continue;
                }
                Err(_) => break,
            };
            match classify(&line) {
                Line::Ignore => {}
                Line::Reply(reply) => {
                    if lines_tx.send(reply).await.is_err() {
                        break;
                    }
                }
                Line::Pass => {
                    if to_service.write_all(line.as_bytes()).await.is_err()
                        || to_service.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
            }
        }
        // Closing the service's input ends its session.
        let _ = to_service.shutdown().await;
    });

    let result = async {
        let service = handler.serve((service_in, service_out)).await?;
        tracing::info!("MCP session initialized");
        let reason = service.waiting().await?;
        tracing::info!("MCP server stopped: {reason:?}");
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    reader.abort();
    let _ = relay.await;
    let _ = writer.await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match classify(line) {
            Line::Reply(text) => serde_json::from_str(&text).unwrap(),
            other => panic!("{line}: expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn valid_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"roll_rpg_dice","arguments":{"sides":20}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method"}"#,
        ] {
            assert_eq!(classify(line), Line::Pass, "{line}");
        }
        assert_eq!(classify("   "), Line::Ignore);
    }

    #[test]
    fn garbage_is_a_parse_error_with_id_null() {
        for line in [
            "this is not JSON",
            r#"{"jsonrpc": "2.0", "id": 2, "method": "#,
            "{]",
        ] {
            let r = reply(line);
            assert_eq!(r["error"]["code"], PARSE_ERROR, "{line}");
            assert_eq!(r["id"], Value::Null);
            assert_eq!(r["jsonrpc"], "2.0");
        }
    }

    #[test]
    fn invalid_requests_are_32600() {
        for (line, id) in [
            ("[1, 2, 3]", Value::Null),
            ("42", Value::Null),
            (r#"{"hello": "world"}"#, Value::Null),
            (r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#, json!(5)),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":"x","method":7}"#, json!("x")),
            (r#"{"jsonrpc":"2.0","id":9}"#, json!(9)),
        ] {
            let r = reply(line);
            assert_eq!(r["error"]["code"], INVALID_REQUEST, "{line}");
            assert_eq!(r["id"], id, "{line}");
        }
    }

    #[test]
    fn malformed_tool_calls_are_32602_with_their_id() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roll_rpg_dice","arguments":{"sides":1e999}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roll_rpg_dice","arguments":{"sides":-1E400, "s": "1e999"}}}"#,
        ] {
            let r = reply(line);
            assert_eq!(r["error"]["code"], INVALID_PARAMS, "{line}");
            assert_eq!(r["id"], 7, "{line}");
        }
        // A notification gets no reply, even a malformed one.
        assert_eq!(
            classify(
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"n":1e999}}}"#
            ),
            Line::Ignore
        );
    }

    #[test]
    fn numbers_in_strings_are_left_alone() {
        assert_eq!(tame_numbers(r#"{"a":"1e999"}"#), None);
        assert_eq!(
            tame_numbers(r#"{"a":"\"1e999","b":1e999}"#).as_deref(),
            Some(r#"{"a":"\"1e999","b":null}"#)
        );
    }
}
