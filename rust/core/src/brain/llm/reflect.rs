//! A model brain's reflection: the request ([`request`]) and the reading of its answer
//! ([`answer`]). The model is asked for one JSON object (`response_format: json_schema` where
//! the provider honours it); an answer that is not one is a failed reflection, and the runtime
//! draws the insights by rule instead.

use agents_llm::{ModelMessage, ModelReply, ModelRequest, SystemBlock};

use super::prompt::RequestOptions;
use crate::brain::reflection::{ReflectionAnswer, ReflectionRequest};

/// Most answer tokens a reflection may take.
const MAX_REFLECTION_TOKENS: u32 = 600;

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
    let schema = serde_json::to_value(schemars::schema_for!(ReflectionAnswer))
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    ModelRequest {
        model: options.model.clone(),
        system: vec![SystemBlock {
            text: system,
            cache: true,
        }],
        messages: vec![ModelMessage::User { text: user }],
        tools: Vec::new(),
        temperature: options.temperature,
        max_tokens: Some(
            options
                .max_tokens
                .map_or(MAX_REFLECTION_TOKENS, |m| m.max(MAX_REFLECTION_TOKENS)),
        ),
        json_schema: Some(schema),
        stream: false,
    }
}

/// The reflection in a model's answer: one JSON object, bare or in a code fence.
pub fn answer(reply: &ModelReply) -> Result<ReflectionAnswer, String> {
    let trimmed = reply.text.trim();
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    serde_json::from_str(body).map_err(|e| format!("the reflection is not the JSON asked for: {e}"))
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
