//! A WebSocket protocol client for the end-to-end tests: replies matched by `request_id`,
//! events kept for later.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The event types of the protocol, in the welcome's order: the declaration itself, so a new
/// event needs no second list here.
pub use agents_core::protocol::EVENT_TYPES;

/// Collected stderr lines (a tiny mutex-protected vector).
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A protocol client: replies are matched by `request_id`, events are kept.
pub struct Client {
    /// The connection.
    pub ws: Ws,
    /// Events received and not taken yet.
    pub events: Vec<Value>,
    next_id: i64,
    /// Every event type received so far.
    pub seen: BTreeSet<String>,
    /// How long [`Client::next`] waits for a message ([`WAIT`] unless a test sets it).
    pub wait: Duration,
}

pub const WAIT: Duration = Duration::from_secs(10);

impl Client {
    /// A client over a connection opened already (the welcome not read yet).
    pub fn over(ws: Ws) -> Client {
        Client {
            ws,
            events: Vec::new(),
            next_id: 1,
            seen: BTreeSet::new(),
            wait: WAIT,
        }
    }

    pub async fn connect(url: &str) -> Client {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("connect");
        let mut client = Client::over(ws);
        let welcome = client.next().await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        client
    }

    pub async fn send(&mut self, value: &Value) {
        self.send_text(value.to_string()).await;
    }

    pub async fn send_text(&mut self, text: String) {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    /// The next JSON message.
    pub async fn next(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(self.wait, self.ws.next())
                .await
                .expect("a message in time")
                .expect("the connection is open")
                .expect("no error");
            match msg {
                Message::Text(t) => {
                    let value: Value = serde_json::from_str(t.as_str()).expect("JSON");
                    if let Some(kind) = value["type"].as_str()
                        && EVENT_TYPES.contains(&kind)
                    {
                        self.seen.insert(kind.to_owned());
                    }
                    return value;
                }
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// Sends a request with a fresh integer id and returns its reply (events are kept).
    /// The next message that is not an event (a reply or an `error`): events and replies travel
    /// on separate paths, so an event may arrive after the reply that caused it.
    pub async fn next_non_event(&mut self) -> Value {
        loop {
            let m = self.next().await;
            let is_event = m["type"]
                .as_str()
                .is_some_and(|k| EVENT_TYPES.contains(&k) || k == "events_dropped");
            if !is_event {
                return m;
            }
        }
    }

    pub async fn request(&mut self, mut request: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        request["request_id"] = json!(id);
        self.send(&request).await;
        self.reply_to(&json!(id)).await
    }

    pub async fn reply_to(&mut self, id: &Value) -> Value {
        loop {
            let m = self.next().await;
            if m.get("request_id") == Some(id) {
                return m;
            }
            assert!(
                m.get("request_id").is_none(),
                "a reply to another request: {m}"
            );
            self.events.push(m);
        }
    }

    /// Waits for an event matching `pick` (checking the kept ones first).
    pub async fn event(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.events.iter().position(&pick) {
            return self.events.remove(i);
        }
        loop {
            let m = self.next().await;
            if pick(&m) {
                return m;
            }
            self.events.push(m);
        }
    }

    /// Every event arriving within `within`.
    pub async fn drain(&mut self, within: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + within;
        while let Ok(Some(Ok(Message::Text(t)))) =
            tokio::time::timeout_at(deadline, self.ws.next()).await
        {
            self.events
                .push(serde_json::from_str(t.as_str()).expect("JSON"));
        }
        std::mem::take(&mut self.events)
    }

    /// Reads until the server's close frame; returns (code, reason).
    pub async fn close_frame(&mut self) -> (u16, String) {
        loop {
            match tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("close in time")
            {
                Some(Ok(Message::Close(Some(frame)))) => {
                    return (u16::from(frame.code), frame.reason.to_string());
                }
                Some(Ok(Message::Close(None))) => panic!("a close frame without a code"),
                Some(Ok(_)) => continue,
                Some(Err(e)) => panic!("error before the close frame: {e}"),
                None => panic!("the connection ended without a close frame"),
            }
        }
    }

    pub async fn assert_usable(&mut self) {
        let pong = self.request(json!({"type": "ping"})).await;
        assert_eq!(pong["type"], "pong", "{pong}");
    }
}

pub fn ok<'a>(reply: &'a Value, kind: &str) -> &'a Value {
    assert_eq!(reply["type"], kind, "{reply}");
    reply
}

pub async fn spawn(client: &mut Client, config: Value) -> String {
    let r = client
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await;
    ok(&r, "agent_spawn_response")["agent_id"]
        .as_str()
        .expect("agent_id")
        .to_owned()
}

pub fn quiet_agent(name: &str) -> Value {
    json!({"name": name, "role": "tester", "idle_think_seconds": 600,
           "thinking_seconds": 0.05, "speaking_seconds": 0.05})
}
