//! The NATS subjects of one world, how a bus [`Filter`] becomes the subjects to listen to, and
//! the headers a message crosses NATS with ([`ORIGIN_HEADER`], [`SEQ_HEADER`]).
//!
//! Every subject starts with `<prefix>.<world>` (`agents.town` by default prefix):
//!
//! | subject | carries |
//! |---|---|
//! | `<root>.ev.<kind>.<sender>` | every bus message published in any process, once |
//! | `<root>.to.<recipient>.<kind>.<sender>` | the same message again for each of its recipients |
//! | `<root>.rpc.<process>` | requests for the agents a process owns (request/reply) |
//! | `<root>.move.<process>` | requests that a process hand one of its agents over (request/reply) |
//! | `<root>.dir` | asks every process which agents it runs (each answers its list) |
//! | `<root>.sync.<process>` | answered by nobody: a process's round trip to NATS after it subscribes |
//!
//! `<kind>` is the message type (`agent_speech`), `<sender>` [`BusMessage::sender`]. A token
//! is the id itself when it is made of `A-Z a-z 0-9 _ -`, else every other byte is written
//! `%XX` (so `player.1` is `player%2E1`, and no id can open a wildcard or a new token).
//!
//! A filter maps to wildcards: by kind and sender on `ev` subjects, by recipient on `to`
//! subjects — a process whose only subscribers are its agents (each listening for what is said
//! to it) receives only what is said to them, not the world's chatter. A message delivered on
//! several subjects of one process (an `ev` and a `to` subject both matching) reaches its bus
//! once: the bridge drops repeats by the message's id.

use std::collections::BTreeSet;

/// Header: the process a message was published in.
pub const ORIGIN_HEADER: &str = "Agents-Origin";
/// Header: the message's sequence number on its origin's bus.
pub const SEQ_HEADER: &str = "Agents-Seq";

use crate::bus::{BusMessage, Filter};

/// More patterns than this for one filter (a cartesian product of kinds, senders and
/// recipients) and the larger dimension becomes a wildcard: the local filter still applies.
const MAX_PATTERNS_PER_FILTER: usize = 64;

/// The subjects of one world.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subjects {
    root: String,
}

/// A prefix or world name that cannot be a subject token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} '{value}' is not usable in NATS subjects: use letters, digits, '_' and '-'")]
pub struct BadName {
    /// `prefix` or `world`.
    pub what: &'static str,
    /// The name given.
    pub value: String,
}

/// A subject token for an id (see the module docs).
pub fn token(id: &str) -> String {
    if !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return id.to_string();
    }
    let mut out = String::with_capacity(id.len() + 8);
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    out
}

fn checked(what: &'static str, value: &str) -> Result<(), BadName> {
    if !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(())
    } else {
        Err(BadName {
            what,
            value: value.to_string(),
        })
    }
}

impl Subjects {
    /// The subjects of `world` under `prefix`; both must be plain tokens.
    pub fn new(prefix: &str, world: &str) -> Result<Subjects, BadName> {
        checked("prefix", prefix)?;
        checked("world", world)?;
        Ok(Subjects {
            root: format!("{prefix}.{world}"),
        })
    }

    /// `<prefix>.<world>`.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The subjects a message is published on: its `ev` subject, then a `to` subject per
    /// recipient.
    pub fn of_message(&self, message: &BusMessage) -> Vec<String> {
        let kind = message.kind();
        let sender = token(message.sender());
        let mut subjects = Vec::with_capacity(1 + message.recipients().len());
        subjects.push(format!("{}.ev.{kind}.{sender}", self.root));
        let mut seen = BTreeSet::new();
        for recipient in message.recipients() {
            if seen.insert(recipient.as_str()) {
                subjects.push(format!(
                    "{}.to.{}.{kind}.{sender}",
                    self.root,
                    token(recipient)
                ));
            }
        }
        subjects
    }

    /// `<root>.sync.<process>`: answered by nobody; a request there comes back as "no
    /// responders" once NATS has read everything the process sent before it.
    pub fn sync(&self, process: &str) -> String {
        format!("{}.sync.{}", self.root, token(process))
    }

    /// The subject of the requests for the agents `process` owns.
    pub fn rpc(&self, process: &str) -> String {
        format!("{}.rpc.{}", self.root, token(process))
    }

    /// The subject of the requests that `process` hand one of its agents over.
    pub fn moves(&self, process: &str) -> String {
        format!("{}.move.{}", self.root, token(process))
    }

    /// The patterns that receive every message `filter` matches (perhaps more: the local
    /// filter still applies), none when it matches nothing.
    pub fn patterns(&self, filter: &Filter) -> Vec<String> {
        let kinds: Option<Vec<String>> = filter
            .kinds
            .as_ref()
            .map(|k| k.iter().map(|k| k.to_string()).collect());
        let senders: Option<Vec<String>> = filter
            .senders
            .as_ref()
            .map(|s| s.iter().map(|s| token(s)).collect());
        if kinds.as_ref().is_some_and(Vec::is_empty) || senders.as_ref().is_some_and(Vec::is_empty)
        {
            return Vec::new();
        }
        let (kinds, senders) = narrowed(kinds, senders);
        let mut out = Vec::new();
        let tail = |out: &mut Vec<String>, head: String| {
            for kind in &kinds {
                for sender in &senders {
                    out.push(format!("{head}.{kind}.{sender}"));
                }
            }
        };
        match &filter.recipients {
            None => tail(&mut out, format!("{}.ev", self.root)),
            Some(recipients) => {
                let recipients: Vec<String> = recipients.iter().map(|r| token(r)).collect();
                let per = kinds.len() * senders.len();
                if recipients.len() * per > MAX_PATTERNS_PER_FILTER {
                    tail(&mut out, format!("{}.to.*", self.root));
                } else {
                    for recipient in &recipients {
                        tail(&mut out, format!("{}.to.{recipient}", self.root));
                    }
                }
                if filter.include_broadcasts {
                    tail(&mut out, format!("{}.ev", self.root));
                }
            }
        }
        out
    }

    /// The smallest set of patterns covering every filter's: duplicates and patterns another
    /// one covers are left out (`a.*.x` covers `a.b.x`).
    pub fn interest<'a>(&self, filters: impl IntoIterator<Item = &'a Filter>) -> BTreeSet<String> {
        let all: BTreeSet<String> = filters
            .into_iter()
            .flat_map(|filter| self.patterns(filter))
            .collect();
        all.iter()
            .filter(|p| !all.iter().any(|q| q != *p && covers(q, p)))
            .cloned()
            .collect()
    }
}

/// Kinds and senders as pattern tokens (`*` for "any"), with the larger list widened to `*`
/// when their product is too large.
fn narrowed(
    kinds: Option<Vec<String>>,
    senders: Option<Vec<String>>,
) -> (Vec<String>, Vec<String>) {
    let any = || vec!["*".to_string()];
    let mut kinds = kinds.unwrap_or_else(any);
    let mut senders = senders.unwrap_or_else(any);
    while kinds.len() * senders.len() > MAX_PATTERNS_PER_FILTER {
        if kinds.len() >= senders.len() {
            kinds = any();
        } else {
            senders = any();
        }
    }
    (kinds, senders)
}

/// Whether pattern `wide` matches every subject `narrow` matches (same number of tokens, each
/// token of `wide` a `*` or equal).
pub fn covers(wide: &str, narrow: &str) -> bool {
    let (w, n): (Vec<&str>, Vec<&str>) = (wide.split('.').collect(), narrow.split('.').collect());
    w.len() == n.len() && w.iter().zip(&n).all(|(a, b)| *a == "*" || a == b)
}

/// Whether `subject` matches `pattern` (`*` wildcards only).
pub fn matches(pattern: &str, subject: &str) -> bool {
    covers(pattern, subject) && !subject.split('.').any(|t| t == "*")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::MessageKind;

    fn spoke(from: &str, to: &[&str]) -> BusMessage {
        BusMessage::AgentSpoke {
            agent_id: from.to_string(),
            content: "hi".to_string(),
            recipients: to.iter().map(|s| s.to_string()).collect(),
            dialog_type: "chat".to_string(),
            inbox_id: None,
        }
    }

    #[test]
    fn tokens_are_ids_or_escaped_bytes() {
        assert_eq!(token("agent_007"), "agent_007");
        assert_eq!(token("player-1"), "player-1");
        assert_eq!(token("player.1"), "player%2E1");
        assert_eq!(token("a b*>"), "a%20b%2A%3E");
        assert_eq!(token("%"), "%25");
        assert_eq!(token(""), "%");
        assert_eq!(token("é"), "%C3%A9");
        assert_ne!(token("a.b"), token("a_b"));
    }

    #[test]
    fn world_and_prefix_must_be_tokens() {
        assert!(Subjects::new("agents", "town-1").is_ok());
        let err = Subjects::new("agents", "my.world").unwrap_err();
        assert_eq!(err.what, "world");
        assert!(err.to_string().contains("'my.world'"), "{err}");
        assert!(Subjects::new("", "town").is_err());
        assert!(Subjects::new("agents", "*").is_err());
    }

    #[test]
    fn a_message_goes_out_once_plus_once_per_recipient() {
        let s = Subjects::new("agents", "town").unwrap();
        assert_eq!(
            s.of_message(&spoke("agent_001", &["agent_002", "player.0", "agent_002"])),
            vec![
                "agents.town.ev.agent_speech.agent_001",
                "agents.town.to.agent_002.agent_speech.agent_001",
                "agents.town.to.player%2E0.agent_speech.agent_001",
            ]
        );
        assert_eq!(s.rpc("p-1"), "agents.town.rpc.p-1");
    }

    #[test]
    fn filters_become_wildcards() {
        let s = Subjects::new("agents", "town").unwrap();
        assert_eq!(s.patterns(&Filter::all()), vec!["agents.town.ev.*.*"]);
        assert_eq!(
            s.patterns(&Filter::all().kinds([MessageKind::AgentSpoke])),
            vec!["agents.town.ev.agent_speech.*"]
        );
        assert_eq!(
            s.patterns(&Filter::all().senders(["agent_003"])),
            vec!["agents.town.ev.*.agent_003"]
        );
        // An agent listening for what is said to it.
        let agent = Filter::all()
            .recipients(["agent_002"])
            .kinds([MessageKind::AgentSpoke])
            .with_broadcasts(false);
        assert_eq!(
            s.patterns(&agent),
            vec!["agents.town.to.agent_002.agent_speech.*"]
        );
        let with_broadcasts = agent.clone().with_broadcasts(true);
        assert_eq!(
            s.patterns(&with_broadcasts),
            vec![
                "agents.town.to.agent_002.agent_speech.*",
                "agents.town.ev.agent_speech.*"
            ]
        );
        assert!(s.patterns(&Filter::all().kinds([])).is_empty());
        assert!(
            s.patterns(&Filter::all().senders(Vec::<String>::new()))
                .is_empty()
        );
    }

    #[test]
    fn every_message_a_filter_matches_arrives_on_one_of_its_patterns() {
        let s = Subjects::new("agents", "w").unwrap();
        let messages = [
            spoke("agent_001", &["agent_002"]),
            spoke("agent_001", &[]),
            spoke("player.9", &["agent_002", "agent_003"]),
        ];
        let filters = [
            Filter::all(),
            Filter::all().kinds([MessageKind::AgentSpoke]),
            Filter::all().senders(["player.9"]),
            Filter::all().recipients(["agent_003"]),
            Filter::all()
                .recipients(["agent_002"])
                .with_broadcasts(true),
            Filter::all().kinds([MessageKind::AgentMoved]),
        ];
        for filter in &filters {
            let patterns = s.patterns(filter);
            for message in &messages {
                let delivered = s
                    .of_message(message)
                    .iter()
                    .any(|subject| patterns.iter().any(|p| matches(p, subject)));
                if filter.matches(message) {
                    assert!(delivered, "{filter:?} misses {message:?}");
                }
            }
        }
    }

    #[test]
    fn large_filters_widen_instead_of_listing_thousands_of_subjects() {
        let s = Subjects::new("agents", "w").unwrap();
        let many: Vec<String> = (0..500).map(|n| format!("agent_{n:03}")).collect();
        let p = s.patterns(&Filter::all().senders(many.clone()));
        assert_eq!(p, vec!["agents.w.ev.*.*"]);
        let p = s.patterns(&Filter::all().recipients(many));
        assert_eq!(p, vec!["agents.w.to.*.*.*"]);
    }

    #[test]
    fn interest_keeps_only_the_widest_patterns() {
        let s = Subjects::new("agents", "w").unwrap();
        let filters = [
            Filter::all().kinds([MessageKind::AgentSpoke]),
            Filter::all().senders(["agent_001"]),
            Filter::all().recipients(["agent_002"]),
        ];
        assert_eq!(
            s.interest(&filters).into_iter().collect::<Vec<_>>(),
            vec![
                "agents.w.ev.*.agent_001",
                "agents.w.ev.agent_speech.*",
                "agents.w.to.agent_002.*.*"
            ]
        );
        let with_all = [Filter::all(), Filter::all().senders(["agent_001"])];
        assert_eq!(
            s.interest(&with_all).into_iter().collect::<Vec<_>>(),
            vec!["agents.w.ev.*.*"]
        );
    }
}
