//! The WebSocket protocol's request parser: any text frame gives a request or a coded error,
//! never a panic; a parsed request serialises back to a frame that parses to the same request.
#![no_main]

use agents_core::protocol::parse_request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((request, _)) = parse_request(text) {
        let again = serde_json::to_string(&request).expect("a request serialises");
        match parse_request(&again) {
            Ok((back, None)) => assert_eq!(back, request, "{again}"),
            other => panic!("{text} → {again} → {other:?}"),
        }
    }
});
