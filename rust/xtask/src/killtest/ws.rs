//! A WebSocket connection to `agents-server serve` for the kill harness: connect (welcome read,
//! events switched off), send JSON, receive the next reply — every step under a timeout.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long connecting (TCP, upgrade, welcome, subscribe) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a reply may take while the server is alive.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(20);

/// What reading the next reply gave.
#[derive(Debug)]
pub enum Received {
    /// A reply (a message carrying `request_id`), parsed.
    Reply(Value),
    /// The connection ended (closed, reset: what a killed server looks like).
    Closed(String),
    /// Nothing within the timeout.
    TimedOut,
}

/// One client connection.
pub struct Conn {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Conn {
    /// Connects to `url`, reads `welcome` and subscribes to no events (the harness reads replies
    /// only, so the server's fan-out does not compete with the writes under test).
    pub async fn open(url: &str) -> Result<Conn, String> {
        tokio::time::timeout(CONNECT_TIMEOUT, Self::open_inner(url))
            .await
            .map_err(|_| format!("connecting to {url} took over {CONNECT_TIMEOUT:?}"))?
    }

    async fn open_inner(url: &str) -> Result<Conn, String> {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        if let MaybeTlsStream::Plain(tcp) = ws.get_ref() {
            let _ = tcp.set_nodelay(true);
        }
        let mut conn = Conn { ws };
        let welcome = conn.next_message().await?;
        if welcome.get("type").and_then(Value::as_str) != Some("welcome") {
            return Err(format!("the first message was not welcome: {welcome}"));
        }
        conn.send(&json!({"type": "subscribe", "request_id": "subscribe", "events": []}))
            .await?;
        match conn.reply(CONNECT_TIMEOUT).await {
            Received::Reply(r) if r["type"] == "subscribe_response" => Ok(conn),
            Received::Reply(r) => Err(format!("subscribe was answered with {r}")),
            Received::Closed(why) => Err(format!("the connection ended at subscribe: {why}")),
            Received::TimedOut => Err("no subscribe_response".into()),
        }
    }

    /// Sends one JSON message.
    pub async fn send(&mut self, value: &Value) -> Result<(), String> {
        self.ws
            .send(Message::Text(value.to_string().into()))
            .await
            .map_err(|e| format!("send failed: {e}"))
    }

    /// The next message with a `request_id` (events are skipped), within `timeout`.
    pub async fn reply(&mut self, timeout: Duration) -> Received {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let next = tokio::time::timeout_at(deadline, self.next_message()).await;
            match next {
                Err(_) => return Received::TimedOut,
                Ok(Err(why)) => return Received::Closed(why),
                Ok(Ok(message)) if message.get("request_id").is_some() => {
                    return Received::Reply(message);
                }
                Ok(Ok(_event)) => {}
            }
        }
    }

    /// The next text frame as JSON; an error when the connection ends.
    async fn next_message(&mut self) -> Result<Value, String> {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(text.as_str())
                        .map_err(|e| format!("the server sent invalid JSON ({e}): {text}"));
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(format!("closed by the server ({frame:?})"));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("connection error: {e}")),
                None => return Err("connection ended".into()),
            }
        }
    }

    /// Sends `request` (a JSON object; `request_id` is set here) and returns its reply; an
    /// `error` reply is an `Err` naming the request.
    pub async fn call(&mut self, mut request: Value, request_id: i64) -> Result<Value, String> {
        request["request_id"] = json!(request_id);
        self.send(&request).await?;
        match self.reply(REPLY_TIMEOUT).await {
            Received::Reply(r) if r["request_id"] != json!(request_id) => Err(format!(
                "{} was answered out of order: {r}",
                request["type"]
            )),
            Received::Reply(r) if r["type"] == "error" => {
                Err(format!("{} failed: {r}", request["type"]))
            }
            Received::Reply(r) => Ok(r),
            Received::Closed(why) => Err(format!("{}: {why}", request["type"])),
            Received::TimedOut => Err(format!(
                "{} got no reply within {REPLY_TIMEOUT:?}",
                request["type"]
            )),
        }
    }

    /// Closes the connection politely (errors ignored: the harness is done with it).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.ws.close(None)).await;
    }
}
