//! The MCP stdio framing: any line is ignored, passed on, or answered with a JSON-RPC 2.0 error
//! response carrying one of the three codes; never a panic.
#![no_main]

use agents_core::mcp::stdio::{INVALID_PARAMS, INVALID_REQUEST, Line, PARSE_ERROR, classify};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if line.contains('\n') {
        return;
    }
    if let Line::Reply(reply) = classify(line) {
        let v: serde_json::Value = serde_json::from_str(&reply).expect("a reply is JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        let code = v["error"]["code"].as_i64().expect("an error code");
        assert!(
            [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS].contains(&code),
            "{reply}"
        );
        assert!(v["id"].is_null() || v["id"].is_string() || v["id"].is_i64() || v["id"].is_u64());
    }
});
