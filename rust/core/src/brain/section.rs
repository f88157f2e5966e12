//! Sections of a decision's context that a feature contributes: the app an agent plays, the
//! campaign it is game master of, the memories it recalled. The brains render a section
//! without knowing the feature: the model brains put its lines in the situation (or, for a
//! section that frames the whole decision, use its prompt instead of the agent's), the scripted
//! brain asks it how to decide offline, the `cli` brain sends its JSON under its key, and the
//! journal shows its summary. A feature adds a section by implementing [`Section`] for its view
//! and pushing the view into [`BrainContext::sections`]; the brain layer never imports it.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::{BrainContext, BrainReply, IncomingMessage, ToolCall};

/// A part of a decision's context that a feature contributes.
pub trait Section: Any + Send + Sync + fmt::Debug {
    /// The section's key: its field in the context's JSON (`app`, `campaign`). One section per
    /// key in a context.
    fn key(&self) -> &'static str;

    /// The section as JSON (the `cli` brain's `context`, traces).
    fn to_json(&self) -> Value;

    /// Lines for the situation, the per-decision message of the model brains (after where the
    /// agent is, before its tasks); `None`: nothing to add.
    fn situation_lines(&self, _context: &BrainContext) -> Option<String> {
        None
    }

    /// A section that frames a decision of its own kind (a game master's turn) gives the whole
    /// prompt, which replaces the agent's; `None` (the default): it adds to the agent's.
    fn framing(&self, _context: &BrainContext) -> Option<Framing> {
        None
    }

    /// How the offline `scripted` brain decides in this section, when the section knows a way
    /// (playing an app, running a turn): a framing section is asked first, the others when the
    /// agent has no line to answer. `None`: the brain decides as usual.
    fn scripted(
        &self,
        _context: &BrainContext,
        _play: &mut ScriptedPlay<'_>,
    ) -> Option<BrainReply> {
        None
    }

    /// A line the offline `scripted` brain answers `message` with, when the section knows
    /// what to say to it (a question about something the agent remembers); `None` (the
    /// default): the brain answers as usual.
    fn scripted_answer(
        &self,
        _context: &BrainContext,
        _message: &IncomingMessage,
    ) -> Option<String> {
        None
    }

    /// A few words for the decision journal ("app 'board' (agent)"); `None`: not mentioned.
    fn summary(&self) -> Option<String> {
        None
    }

    /// The section as [`Any`], to read it back as its own type ([`Sections::get`]).
    fn as_any(&self) -> &dyn Any;
}

/// The prompt of a decision that a section frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Framing {
    /// The rules: the contract to answer in, the same for every agent the section frames.
    pub rules: String,
    /// Who decides.
    pub identity: String,
    /// The situation (the per-decision message).
    pub situation: String,
}

/// What a section's offline decision may use of the scripted brain: its seeded randomness and
/// its call ids, so that a decision made by a section repeats for a seed like the brain's own.
pub struct ScriptedPlay<'a> {
    rng: &'a mut ChaCha8Rng,
    calls: &'a mut u64,
}

impl<'a> ScriptedPlay<'a> {
    /// A handle on a scripted brain's randomness and call counter.
    pub(crate) fn new(rng: &'a mut ChaCha8Rng, calls: &'a mut u64) -> Self {
        ScriptedPlay { rng, calls }
    }

    /// A call of `tool` with the brain's next call id (`call_001`, …).
    pub fn call(&mut self, tool: &str, args: Value, reason: Option<String>) -> ToolCall {
        *self.calls += 1;
        ToolCall {
            id: format!("call_{:03}", *self.calls),
            tool: tool.to_string(),
            args,
            reason,
        }
    }

    /// A number in `0..n` (0 when `n` is 0 or 1).
    pub fn below(&mut self, n: usize) -> usize {
        use rand::RngExt;
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if n <= 1 {
            return 0;
        }
        self.rng.random_range(0..n) as usize
    }

    /// The brain's seeded random number generator.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
    }
}

/// A reply with silent tool calls only.
pub fn act(calls: Vec<ToolCall>) -> BrainReply {
    BrainReply {
        assistant_text: String::new(),
        dialog_type: String::new(),
        tool_calls: calls,
    }
}

/// The sections of a context, in the order they were added, at most one per key. Cheap to
/// clone (they are shared). Serialized as a map of key → JSON, flattened into the context.
#[derive(Clone, Default)]
pub struct Sections(Vec<Arc<dyn Section>>);

impl Sections {
    /// Adds `section`, replacing the one with its key if there is one.
    pub fn put(&mut self, section: impl Section) {
        let key = section.key();
        self.0.retain(|s| s.key() != key);
        self.0.push(Arc::new(section));
    }

    /// The section of type `T`, if the context has one.
    pub fn get<T: Section>(&self) -> Option<&T> {
        self.0.iter().find_map(|s| s.as_any().downcast_ref::<T>())
    }

    /// The sections, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Section> {
        self.0.iter().map(|s| s.as_ref())
    }

    /// The first section that frames the decision, with its prompt.
    pub fn framing(&self, context: &BrainContext) -> Option<(&dyn Section, Framing)> {
        self.iter()
            .find_map(|s| s.framing(context).map(|framing| (s, framing)))
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Sections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

/// Two sets of sections are equal when they hold the same keys with the same JSON, in order.
impl PartialEq for Sections {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.key() == b.key() && a.to_json() == b.to_json())
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for section in self.iter() {
            map.serialize_entry(section.key(), &section.to_json())?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq)]
    struct Weather(&'static str);

    impl Section for Weather {
        fn key(&self) -> &'static str {
            "weather"
        }
        fn to_json(&self) -> Value {
            json!(self.0)
        }
        fn situation_lines(&self, _context: &BrainContext) -> Option<String> {
            Some(format!("The weather: {}.", self.0))
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn a_section_is_read_back_by_type_replaced_by_key_and_serialized_under_it() {
        let mut sections = Sections::default();
        assert!(sections.get::<Weather>().is_none());
        sections.put(Weather("rain"));
        sections.put(Weather("sun"));
        assert_eq!(sections.get::<Weather>(), Some(&Weather("sun")));
        assert_eq!(sections.iter().count(), 1);
        assert_eq!(
            serde_json::to_value(&sections).unwrap(),
            json!({"weather": "sun"})
        );
        let mut other = Sections::default();
        other.put(Weather("sun"));
        assert_eq!(sections, other);
        let context = BrainContext::detached("agent_001", "Mira");
        assert!(sections.framing(&context).is_none());
    }
}
