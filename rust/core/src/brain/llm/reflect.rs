//! A model brain's calls about its agent's memories: a reflection ([`request`], [`answer`])
//! and a batch of importance ratings ([`rating_request`], [`ratings`]). The model is asked for
//! one JSON object (`response_format: json_schema` where the provider honours it); an answer
//! that is not one fails the call, and the runtime falls back (insights drawn by rule, the
//! heuristic importance kept).

use agents_llm::{ModelMessage, ModelReply, ModelRequest, SystemBlock};

use super::prompt::RequestOptions;
use crate::brain::rating::{RatingRequest, Ratings};
use crate::brain::reflection::{ReflectionAnswer, ReflectionRequest};

/// Fewest answer tokens a reflection or a batch of ratings is allowed (a brain's own
/// `max_tokens` counts when it is larger).
const MIN_JSON_ANSWER_TOKENS: u32 = 600;

/// The model request of a reflection.
pub fn request(reflection: &ReflectionRequest, options: &RequestOptions) -> ModelRequest {
    let system = format!(
        "You are {name}, {role}. {prompt}\n\n\
         You are reflecting on your recent memories. Answer with one JSON object and nothing \
         else: {{\"insights\": [{{\"text\": \"...\", \"sources\": [memory ids]}}], \
         \"relationships\": [{{\"about\": \"person id\", \"text\": \"...\", \"sources\": \
         [memory ids]}}]}}.\n\
         - insights: at most {max}; higher-level conclusions about yourself, others and the \
         world, in the first person, each citing the ids of the memories it comes from.\n\
         - relationships: at most one per person listed; what you now think of them, in one or \
         two sentences, citing the memories it comes from.",
        name = reflection.name,
        role = reflection.role,
        prompt = reflection.prompt,
        max = reflection.max_insights,
    );
    let mut user = String::from("Your memories since you last reflected, oldest first:\n");
    for m in &reflection.memories {
        user.push_str(&format!(
            "[{}] ({}, importance {}) {}\n",
            m.id, m.kind, m.importance, m.text
        ));
    }
    if !reflection.people.is_empty() {
        user.push_str("\nPeople these memories are about:\n");
        for p in &reflection.people {
            match &p.thought {
                Some(thought) => user.push_str(&format!(
                    "- {} ({}): so far you thought: {thought}\n",
                    p.id, p.name
                )),
                None => user.push_str(&format!("- {} ({})\n", p.id, p.name)),
            }
        }
    }
    json_request::<ReflectionAnswer>(system, user, options)
}

/// The reflection in a model's answer: one JSON object, bare or in a code fence.
pub fn answer(reply: &ModelReply) -> Result<ReflectionAnswer, String> {
    answer_text(&reply.text)
}

/// The reflection in an answer's text (as [`answer`]).
pub fn answer_text(text: &str) -> Result<ReflectionAnswer, String> {
    json_in(text).map_err(|e| format!("the reflection is not the JSON asked for: {e}"))
}

/// The model request of a batch of ratings.
pub fn rating_request(rating: &RatingRequest, options: &RequestOptions) -> ModelRequest {
    let system = format!(
        "You are {name}. {prompt}\n\n\
         Rate how much each of your memories below will matter to you later, from 1 (mundane: \
         a greeting, small talk) to 10 (life-changing: a danger, a promise, a secret, a loss). \
         Answer with one JSON object and nothing else: {{\"ratings\": [{{\"id\": memory id, \
         \"importance\": 1 to 10}}]}}, one rating per memory.",
        name = rating.name,
        prompt = rating.prompt,
    );
    let mut user = String::from("Your memories:\n");
    for m in &rating.memories {
        user.push_str(&format!("[{}] {}\n", m.id, m.text));
    }
    json_request::<Ratings>(system, user, options)
}

/// A request for one JSON object of type `T` (its schema asked for), not streamed, no tools.
fn json_request<T: schemars::JsonSchema>(
    system: String,
    user: String,
    options: &RequestOptions,
) -> ModelRequest {
    let schema = serde_json::to_value(schemars::schema_for!(T))
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    ModelRequest {
        model: options.model.clone(),
        system: vec![SystemBlock {
            text: system,
            cache: true,
            shared: false,
        }],
        messages: vec![ModelMessage::User { text: user }],
        tools: Vec::new(),
        temperature: options.temperature,
        max_tokens: Some(
            options
                .max_tokens
                .map_or(MIN_JSON_ANSWER_TOKENS, |m| m.max(MIN_JSON_ANSWER_TOKENS)),
        ),
        json_schema: Some(schema),
        stream: false,
    }
}

/// The ratings in a model's answer: one JSON object, bare or in a code fence.
pub fn ratings(reply: &ModelReply) -> Result<Ratings, String> {
    ratings_text(&reply.text)
}

/// The ratings in an answer's text (as [`ratings`]).
pub fn ratings_text(text: &str) -> Result<Ratings, String> {
    json_in(text).map_err(|e| format!("the ratings are not the JSON asked for: {e}"))
}

/// The JSON object of an answer's text, bare or in a code fence.
fn json_in<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(super::reply::unfenced(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::reflection::{Person, ReflectionMemory};
    use crate::memory::MemoryKind;

    #[test]
    fn the_request_lists_the_memories_by_id_and_asks_for_json() {
        let reflection = ReflectionRequest {
            agent_id: "agent_001".into(),
            name: "Mira".into(),
            role: "baker".into(),
            prompt: "You bake bread.".into(),
            memories: vec![ReflectionMemory {
                id: 42,
                kind: MemoryKind::Heard,
                text: "Ivy said to me: \"The key is under the mat.\"".into(),
                about: Some("agent_002".into()),
                importance: 5,
            }],
            people: vec![Person {
                id: "agent_002".into(),
                name: "Ivy".into(),
                thought: Some("She is kind.".into()),
            }],
            max_insights: 3,
        };
        let options = RequestOptions {
            model: "m".into(),
            temperature: None,
            max_tokens: None,
            stream: true,
        };
        let request = request(&reflection, &options);
        assert!(!request.stream);
        assert!(request.tools.is_empty());
        assert!(request.json_schema.is_some());
        let ModelMessage::User { text } = &request.messages[0] else {
            panic!("{:?}", request.messages)
        };
        assert!(
            text.contains("[42] (heard, importance 5) Ivy said to me"),
            "{text}"
        );
        assert!(
            text.contains("- agent_002 (Ivy): so far you thought: She is kind."),
            "{text}"
        );
        assert!(request.system[0].text.contains("at most 3"));
    }

    #[test]
    fn an_answer_is_read_bare_or_fenced_and_garbage_is_named() {
        let reply = |text: &str| ModelReply {
            text: text.into(),
            tool_calls: vec![],
            usage: Default::default(),
            stop_reason: None,
        };
        let bare = answer(&reply(
            r#"{"insights": [{"text": "Ivy trusts me.", "sources": [1, 2]}]}"#,
        ))
        .unwrap();
        assert_eq!(bare.insights[0].sources, vec![1, 2]);
        assert!(bare.relationships.is_empty());
        let fenced = answer(&reply(
            "```json\n{\"insights\": [], \"relationships\": [{\"about\": \"a\", \"text\": \"t\", \"sources\": [3]}]}\n```",
        ))
        .unwrap();
        assert_eq!(fenced.relationships[0].about, "a");
        assert!(
            answer(&reply("I think Ivy is nice."))
                .unwrap_err()
                .contains("not the JSON asked for")
        );
    }
}
