//! Text templates of the scripted brain, and the helpers that fill them.
//!
//! Placeholders are `{key}`; [`fill`] substitutes them in one pass, so a value that itself
//! contains `{task}` (a player typing braces) is copied verbatim, never expanded again.
//!
//! Lines must not read as one agent quoting another ([`crate::eval::lines`]: five words in a
//! row of a line another agent said). So no template that is said holds more than four words in
//! a row of its own text, and the templates of lines to agents and to no one in particular
//! hold no run of more than four words that two agents could both say: counting a name or a
//! step number as one such word, a topic as two, and the first and the last two words of a task
//! as two each (two agents' tasks may begin or end alike: "baking bread for *the festival*",
//! "organising *the harvest festival*", "organising *Ada's harvest festival*"), while the
//! agent's own name and role break a run. Lines
//! to the player are held to the first rule only: two agents rarely answer the player's same
//! words.

/// The most words in a row a template may hold of its own text (see the module docs).
#[cfg(test)]
pub(super) const MAX_FIXED_WORDS: usize = 4;

/// Answers to what the player told (not asked), taking up their words. Keys: `sender`,
/// `quote`.
pub(super) const PLAYER_QUOTE: &[&str] = &[
    "\"{quote}\" — noted, {sender}.",
    "Thanks for telling me, {sender}: \"{quote}\".",
    "You said \"{quote}\"? Good to know.",
];

/// Answers to what the player told, about its topic ([`topic`]: "the festival"). Keys:
/// `sender`, `topic`.
pub(super) const PLAYER_TOPIC: &[&str] = &[
    "{topic}? Good to know, {sender}.",
    "You mentioned {topic}, {sender}. I'll remember that.",
    "Ah, {topic}! Thanks for telling me, {sender}.",
    "About {topic}, {sender}: leave it with me.",
];

/// The same after a greeting, which named the player already. Key: `topic`.
pub(super) const PLAYER_TOPIC_AFTER_GREETING: &[&str] = &[
    "{topic}? Good to know.",
    "You mentioned {topic}. I'll remember that.",
    "Ah, {topic}! Thanks for telling me.",
    "About {topic}: leave it with me.",
];

/// Answers to the player's question about something the agent knows nothing of. Keys:
/// `sender`, `topic`.
pub(super) const PLAYER_QUESTION: &[&str] = &[
    "{topic}? I couldn't say, {sender}.",
    "{topic}? Nobody's told me, {sender}.",
    "Good question about {topic}. I don't know yet.",
    "{topic}? No idea, {sender}.",
];

/// The same after a greeting. Key: `topic`.
pub(super) const PLAYER_QUESTION_AFTER_GREETING: &[&str] = &[
    "{topic}? I couldn't say.",
    "{topic}? Nobody's told me.",
    "Good question about {topic}. I don't know yet.",
    "{topic}? No idea, sorry.",
];

/// The answer to a question with nothing to take up ("What about it?"). Key: `sender`.
pub(super) const PLAYER_UNCLEAR: &str = "Not sure I follow, {sender}.";

/// Answers to the player's question about the agent's own task (the topic is a word of it).
/// Keys: `sender`, `topic`, `task`.
pub(super) const PLAYER_QUESTION_TASK: &[&str] = &[
    "{topic}? Not yet, {sender}: I'm still {task}.",
    "{topic}? Soon — I'm {task} as we speak.",
    "{topic}? Working on it, {sender}: {task}.",
];

/// The same after a greeting. Keys: `topic`, `task`.
pub(super) const PLAYER_QUESTION_TASK_AFTER_GREETING: &[&str] = &[
    "{topic}? Not yet: I'm still {task}.",
    "{topic}? Soon — I'm {task} as we speak.",
    "{topic}? Working on it: {task}.",
];

/// What an answer to the player adds when the agent has a task. Key: `task`.
///
/// Every `{task}` in these lines is the task as an activity ([`activity`]: "baking bread for the
/// festival", or "baking Mira's bread" for a task it helps with: [`helped_activity`]), so the
/// templates are written for a gerund phrase. A line that starts with it is capitalised when it
/// is finished; so is an answer's tail, which starts with the task.
pub(super) const ANSWER_TASK_TAIL: &[&str] = &[
    " {task} keeps me busy, though.",
    " {task} first, then I'm yours.",
    " {task} still needs me.",
    " {task} can't wait, I'm afraid.",
];

/// What an answer to the player adds when the agent has no task. Keys: `me`, `role`.
pub(super) const PLAYER_IDLE_TAIL: &[&str] = &[
    " How can I help?",
    " Need anything from the {role}?",
    " What do you need?",
    "",
];

/// Answers to another agent's line about its topic ([`topic`]). Keys: `sender`, `topic`,
/// `role`.
pub(super) const AGENT_TOPIC: &[&str] = &[
    "{topic}? Noted, {sender}.",
    "Ha, {topic} again?",
    "{topic}? Even a {role} cares.",
    "{topic}? Fair enough.",
    "Hm, {topic}. A {role} would agree.",
];

/// Answers to another agent's line about its topic, now and then, when the agent has a task.
/// Keys: `sender`, `topic`, `task`.
pub(super) const AGENT_TOPIC_BUSY: &[&str] = &[
    "{topic}? {Task} first, sorry.",
    "{topic}? {Task} comes first.",
];

/// Answers to another agent's line that has no topic ("Hm?"). Keys: `sender`, `role`.
pub(super) const AGENT_PLAIN: &[&str] = &[
    "Noted, {sender}.",
    "I hear you, {sender}.",
    "Right you are, {sender}.",
    "Well said, {sender}.",
];

/// Answers to another agent's question about something ([`topic`]). Keys: `sender`, `topic`.
pub(super) const AGENT_QUESTION_TOPIC: &[&str] = &[
    "{topic}? Maybe, {sender}.",
    "{topic}? Later, perhaps.",
    "{topic}? No idea.",
];

/// Answers to another agent's question while busy. Keys: `sender`, `task`.
pub(super) const AGENT_QUESTION_TASK: &[&str] = &[
    "Me? I'm {task}, {sender}.",
    "Oh, {task}. And you?",
    "Still {task}, {sender}.",
];

/// Answers to another agent's question without a task. Keys: `sender`, `role`.
pub(super) const AGENT_QUESTION: &[&str] = &[
    "Not much, {sender}: the {role}'s usual rounds.",
    "The usual {role}'s work, {sender}.",
    "Oh, {role} business, {sender}.",
];

/// Agreeing to help with a task. Keys: `sender`, `object` (what the task is about,
/// [`task_object`]: "bread", "harvest festival").
pub(super) const COLLABORATION_AGREE: &[&str] = &[
    "{sender}, your {object}? Gladly!",
    "{Object}? On it.",
    "Sure: your {object} it is.",
];

/// Greeting an agent spoken to for the first time. Keys: `other`, `me`, `role`.
pub(super) const GREETING_ROLE: &[&str] = &[
    "Hello {other}! I'm {me}, the {role}.",
    "Hi there, {other}. {me} here — I'm the {role} around these parts.",
    "Good day, {other}! I'm {me}, the {role}. Have we met?",
];

/// Greeting without a role. Keys: `other`, `me`.
pub(super) const GREETING: &[&str] = &[
    "Hello {other}! I'm {me}.",
    "Hi there, {other}. {me}, nice to meet you.",
    "Good day, {other}! I'm {me}. Have we met?",
];

/// Chat about the agent's task. Keys: `other`, `task`.
pub(super) const CHAT_TASK: &[&str] = &[
    "I'm busy {task}. Tips, {other}?",
    "{Task} today, {other}.",
    "Midway through {task}, {other}.",
    "Ever tried {task}? Tricky, {other}.",
];

/// Chat about the topic of a line the agent heard lately. Keys: `other`, `speaker` (who said
/// it: a name, "you" or "our visitor"), `topic`, `role`.
pub(super) const CHAT_TOPIC: &[&str] = &[
    "{topic}, {other}. Thoughts?",
    "{speaker} mentioned {topic}.",
    "{topic} again? Every {role} hears of it.",
];

/// Chat about the agent's role. Keys: `other`, `role`.
pub(super) const CHAT_ROLE: &[&str] = &[
    "{other}, a {role}'s day never gets dull.",
    "Need anything from the {role}, {other}?",
    "A {role}'s work never ends, {other}.",
];

/// Small talk. Keys: `other`, `role`.
pub(super) const CHAT_SMALL: &[&str] = &[
    "Nice weather, {other}.",
    "{other}! Anything new?",
    "Quiet day for a {role}, {other}.",
    "Up to anything, {other}?",
];

/// Chat to a group of agents. Keys: `me`, `task`.
pub(super) const CHAT_GROUP_TASK: &[&str] = &["Still {task}, everyone.", "Busy {task}, all."];

/// Chat to a group of agents without a task. Keys: `me`, `role`.
pub(super) const CHAT_GROUP: &[&str] = &[
    "Hello everyone! The {role} says hi.",
    "Morning, all! Any news?",
];

/// A progress line on the current task. Keys: `task`, `step`, `total`.
///
/// The step reads as `{step}/{total}`: two numbers, where "step 2 of 3" would be four words
/// that two agents' lines share whenever their steps are the same.
pub(super) const TASK_UPDATE: &[&str] = &[
    "Progress on {task} ({step}/{total}).",
    "{Task}: {step}/{total}.",
    "Getting there: {task}, {step}/{total}.",
];

/// Announcing a completed task. Key: `task`.
pub(super) const TASK_DONE: &[&str] = &[
    "Finished {task}!",
    "Done with {task}. Good.",
    "{Task}: all done.",
];

/// Announcing a completed task when another one waits. Keys: `task`, `next`.
pub(super) const TASK_DONE_NEXT: &[&str] = &[
    "Finished {task}! {Next} now.",
    "Done with {task}; {next} now.",
];

/// Reasons for a silent working step (logged with the `wait` call). Keys: `task`, `step`,
/// `total`.
pub(super) const WORK_REASON: &[&str] = &[
    "busy {task} (step {step} of {total})",
    "concentrating on {task}, step {step} of {total}",
];

/// Asking for help with a task. Keys: `other`, `task`.
pub(super) const COLLABORATE_ASK: &[&str] = &[
    "{other}, could you give me a hand with {task}?",
    "{other}, would you help me with {task}? It goes faster with two.",
    "Got a minute, {other}? I could use your help with {task}.",
];

/// Talking to no one in particular. Keys: `me`, `task`, `role`.
pub(super) const MONOLOGUE_TASK: &[&str] = &["Hm, {task}…", "Time for {task}.", "Right: {task}."];

/// Talking to no one in particular, without a task. Keys: `me`, `role`.
pub(super) const MONOLOGUE: &[&str] = &[
    "Where did everyone go?",
    "Quiet around here today.",
    "Slow day for a {role}.",
    "Anyone need a {role}, I wonder?",
];

/// Answering a question from what a read-only tool returned. Keys: `sender`, `subject` (what
/// was asked about), `result` ([`super::lookup::describe`]).
pub(super) const TOOL_ANSWER: &[&str] = &[
    "Let me check… {subject} — {result}.",
    "One moment, {sender}… {subject} — {result}.",
    "Just looked it up: {subject} — {result}.",
];

/// Answering a question when the read-only tool failed. Keys: `sender`, `subject`, `reason`.
pub(super) const TOOL_FAILED: &[&str] = &[
    "Tried to look up {subject}, but {reason}.",
    "No luck checking {subject}, {sender}: {reason}.",
];

/// Reasons for a move toward an agent. Key: `other`.
pub(super) const MOVE_TOWARD_REASON: &[&str] =
    &["heading over to {other}", "walking toward {other}"];

/// Reasons for a move in some direction. Key: `direction`.
pub(super) const MOVE_WANDER_REASON: &[&str] = &[
    "taking a stroll {direction}",
    "stretching my legs, heading {direction}",
    "having a look around {direction}",
];

/// Reasons for a wait. No keys but `task` (may be empty).
pub(super) const WAIT_REASON: &[&str] = &[
    "taking a short break",
    "watching the street for a moment",
    "catching my breath",
];

/// Fills `template`'s `{key}` fields from `values` in one pass; `{Key}` (upper case first) is
/// `{key}`'s value with its first letter upper case (for a sentence that starts with it). A
/// `{key}` with no value is kept as written.
pub(super) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let key = &after[..close];
                let lower = super::capitalized_first(key, false);
                let found = match values.iter().find(|(k, _)| *k == key) {
                    Some((_, value)) => Some(value.to_string()),
                    None if lower != key => values
                        .iter()
                        .find(|(k, _)| **k == lower)
                        .map(|(_, value)| super::capitalized(value)),
                    None => None,
                };
                match found {
                    Some(value) => out.push_str(&value),
                    None => {
                        out.push('{');
                        out.push_str(key);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` on one line (whitespace runs become one space, double quotes become single ones),
/// cut to `max` characters with an ellipsis.
pub(super) fn quote(text: &str, max: usize) -> String {
    let flat: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('"', "'");
    truncate_chars(&flat, max, "…")
}

/// `text` cut to at most `max` characters (counting the `ellipsis` when one is added).
pub(super) fn truncate_chars(text: &str, max: usize, ellipsis: &str) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(ellipsis.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.truncate(out.trim_end().len());
    out.push_str(ellipsis);
    if out.chars().count() > max {
        return text.chars().take(max).collect();
    }
    out
}

/// Words not worth picking as "what was said".
const STOPWORDS: &[&str] = &[
    "about",
    "after",
    "again",
    "also",
    "and",
    "are",
    "around",
    "because",
    "been",
    "being",
    "but",
    "can",
    "could",
    "did",
    "does",
    "ever",
    "for",
    "from",
    "getting",
    "had",
    "has",
    "have",
    "her",
    "here",
    "him",
    "his",
    "how",
    "just",
    "keep",
    "like",
    "making",
    "never",
    "not",
    "now",
    "our",
    "out",
    "please",
    "really",
    "said",
    "she",
    "should",
    "still",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thinking",
    "this",
    "those",
    "though",
    "very",
    "was",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    // Greetings are answered as greetings ([`greeting`]), never picked as the topic.
    "afternoon",
    "evening",
    "good",
    "greetings",
    "hello",
    "hey",
    "morning",
    "day",
    "howdy",
];

/// Greetings a line can open with, longest first, and how the agent says the same back.
const GREETINGS: &[(&str, &str)] = &[
    ("good afternoon", "Good afternoon"),
    ("good morning", "Good morning"),
    ("good evening", "Good evening"),
    ("good day", "Good day"),
    ("greetings", "Greetings"),
    ("morning", "Morning"),
    ("hello", "Hello"),
    ("howdy", "Howdy"),
    ("hey", "Hey"),
    ("hi", "Hi"),
];

/// The greeting `text` opens with ("Good morning, Mira!" → "Good morning"), as the agent says it
/// back; `None` when it opens with none.
pub(super) fn greeting(text: &str) -> Option<&'static str> {
    let lower = text.trim_start().to_lowercase();
    GREETINGS.iter().find_map(|(opening, answer)| {
        let rest = lower.strip_prefix(opening)?;
        // A whole word: "hi" is not "hills".
        let whole = rest.chars().next().is_none_or(|c| !c.is_alphanumeric());
        whole.then_some(*answer)
    })
}

/// Courtesies a line can open with (longest first), and the answers to each. Keys: `sender`.
const COURTESIES: &[(&str, &[&str])] = &[
    ("good luck", WISHED_LUCK),
    ("best of luck", WISHED_LUCK),
    ("well done", PRAISED),
    ("nice move", PRAISED),
    ("good move", PRAISED),
    ("congratulations", PRAISED),
    ("thank you", THANKED),
    ("thanks", THANKED),
    ("good night", FAREWELL),
    ("goodbye", FAREWELL),
    ("see you", FAREWELL),
    ("farewell", FAREWELL),
    ("bye", FAREWELL),
];

/// Answers to "Good luck". Key: `sender`.
const WISHED_LUCK: &[&str] = &[
    "Thank you, {sender}!",
    "Thanks, {sender} — I'll need it.",
    "Luck? Hardly, {sender}. But thank you!",
];

/// Answers to praise. Key: `sender`.
const PRAISED: &[&str] = &["Thank you, {sender}!", "Too kind, {sender}."];

/// Answers to thanks. Key: `sender`.
const THANKED: &[&str] = &[
    "You're welcome, {sender}.",
    "Any time, {sender}.",
    "Glad to help, {sender}.",
];

/// Answers to a goodbye. Key: `sender`.
const FAREWELL: &[&str] = &["Goodbye, {sender}! Take care.", "See you soon, {sender}."];

/// The answers to the courtesy `text` opens with ("Good luck, Ivy!", "Thanks!"), if any.
pub(super) fn courtesy(text: &str) -> Option<&'static [&'static str]> {
    let lower = text.trim_start().to_lowercase();
    COURTESIES.iter().find_map(|(opening, answers)| {
        let rest = lower.strip_prefix(opening)?;
        let whole = rest.chars().next().is_none_or(|c| !c.is_alphanumeric());
        whole.then_some(*answers)
    })
}

/// Greetings returned to the player. Keys: `greeting` ("Good morning"), `sender`.
pub(super) const GREETING_BACK: &[&str] = &[
    "{greeting} to you too, {sender}!",
    "{greeting}, {sender}! Nice to see you.",
    "{greeting}, {sender}. Come in, come in.",
];

/// Determiners a topic keeps as they are (`my` and `your` swap: [`topic`]).
const TOPIC_DETERMINERS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "some", "our", "his", "her", "their", "its",
];

/// Words of the brain's own lines, and other words that say little about what a line is
/// about ("progress", "noted", "weather"): never picked as a topic, so that an answer to a line
/// of small talk does not take up its filler ("Agreed about progress").
const FILLER: &[&str] = &[
    "afraid",
    "agree",
    "agreed",
    "along",
    "already",
    "another",
    "anyone",
    "anything",
    "brought",
    "business",
    "busy",
    "cares",
    "change",
    "check",
    "coming",
    "count",
    "course",
    "done",
    "dull",
    "ends",
    "enough",
    "even",
    "every",
    "everyone",
    "everything",
    "fair",
    "faster",
    "finished",
    "first",
    "friend",
    "gets",
    "going",
    "hand",
    "happy",
    "hardly",
    "hear",
    "heard",
    "hears",
    "help",
    "idea",
    "join",
    "kind",
    "know",
    "lately",
    "later",
    "left",
    "lips",
    "looks",
    "lovely",
    "luck",
    "matters",
    "maybe",
    "mean",
    "meet",
    "mentioned",
    "middle",
    "might",
    "mind",
    "minute",
    "moment",
    "mostly",
    "must",
    "need",
    "new",
    "news",
    "nice",
    "noted",
    "nothing",
    "once",
    "perhaps",
    "point",
    "progress",
    "question",
    "quiet",
    "remember",
    "right",
    "rounds",
    "says",
    "service",
    "shall",
    "should",
    "slow",
    "soon",
    "sorry",
    "speak",
    "spoken",
    "start",
    "step",
    "still",
    "sure",
    "take",
    "talk",
    "task",
    "telling",
    "thing",
    "things",
    "thought",
    "thoughts",
    "tips",
    "today",
    "told",
    "took",
    "trickier",
    "tried",
    "true",
    "usual",
    "weather",
    "well",
    "went",
    "wonder",
    "work",
    "working",
    "yet",
    "yours",
];

/// Whether `word` (lower case) says little about what a line is about: a stopword of the
/// brain's, of the memory search ([`crate::memory::is_stopword`]), or [`FILLER`].
fn is_filler(word: &str) -> bool {
    STOPWORDS.contains(&word) || FILLER.contains(&word) || crate::memory::is_stopword(word)
}

/// What `text` is about: its most telling word — a word of at least three letters that is not
/// [filler](is_filler) nor a word of `names` (the listener's own name: "Good luck, Ivy!" is not
/// about Ivy; the speaker's) — preferring a word that does not end in "-ing" ("a hinge" rather
/// than "forging"), then one after a determiner (a thing: "open the shop" is about "the shop"),
/// then the longest, the first one on ties; with the determiner before it,
/// so that it reads as a phrase in a line ("the festival", "a key"; the speaker's "my key" is
/// the listener's "your key" and the other way round); if any.
pub(super) fn topic(text: &str, names: &[&str]) -> Option<String> {
    let own: Vec<String> = names
        .iter()
        .flat_map(|name| name.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let determined = |i: usize| {
        i.checked_sub(1).is_some_and(|before| {
            let before = words[before].to_lowercase();
            before == "my" || before == "your" || TOPIC_DETERMINERS.contains(&before.as_str())
        })
    };
    // (index, (not a gerund, after a determiner, length)): the best ranks highest, the first on
    // ties.
    let mut best: Option<(usize, (bool, bool, usize))> = None;
    for (i, word) in words.iter().enumerate() {
        let len = word.chars().count();
        let lower = word.to_lowercase();
        if len < 3 || is_filler(&lower) || own.contains(&lower) {
            continue;
        }
        let rank = (!lower.ends_with("ing"), determined(i), len);
        if best.is_none_or(|(_, best_rank)| rank > best_rank) {
            best = Some((i, rank));
        }
    }
    let (at, _) = best?;
    let word = truncate_chars(words[at], 40, "…");
    let determiner = at.checked_sub(1).and_then(|i| {
        let before = words[i].to_lowercase();
        match before.as_str() {
            "my" => Some("your"),
            "your" => Some("my"),
            _ => TOPIC_DETERMINERS.iter().find(|d| **d == before).copied(),
        }
    });
    Some(match determiner {
        Some(determiner) => format!("{determiner} {word}"),
        None => word,
    })
}

/// Whether `text` asks something (it has a question mark).
pub(super) fn is_question(text: &str) -> bool {
    text.contains('?')
}

/// Whether the last word of `phrase` ("the bread") is, stemmed, a word of `text` ("bake bread
/// for the festival").
pub(super) fn mentions(text: &str, phrase: &str) -> bool {
    let Some(last) = crate::eval::lines::words(phrase).pop() else {
        return false;
    };
    let wanted = crate::memory::stem(&last);
    crate::eval::lines::words(text)
        .iter()
        .any(|w| crate::memory::stem(w) == wanted)
}

/// What `task` is about: [`short_activity`] without its verb and a determiner ("bake bread for
/// the festival" → "bread", "organise the harvest festival" → "harvest festival"); "task" when
/// nothing is left.
pub(super) fn task_object(task: &str) -> String {
    let short = short_activity(task);
    let mut words: Vec<&str> = short.split_whitespace().collect();
    if words
        .first()
        .is_some_and(|w| w.to_lowercase().ends_with("ing"))
    {
        words.remove(0);
    }
    if words
        .first()
        .is_some_and(|w| DETERMINERS.contains(&w.to_lowercase().as_str()))
    {
        words.remove(0);
    }
    if words.is_empty() {
        "task".to_string()
    } else {
        words.join(" ")
    }
}

/// `task`, someone else's that the agent helps with, as what it is busy doing, `owner`'s name
/// in the middle ("bake bread for the festival", "Mira" → "baking Mira's bread"): no run of the
/// owner's own words for the task, and two agents helping one owner with different tasks say
/// different things.
pub(super) fn helped_activity(task: &str, owner: &str) -> String {
    let short = short_activity(task);
    let object = task_object(task);
    match short.split_whitespace().next() {
        Some(verb) if verb.to_lowercase().ends_with("ing") && object != "task" => {
            format!("{verb} {owner}'s {object}")
        }
        Some(verb) if verb.to_lowercase().ends_with("ing") => format!("{verb} for {owner}"),
        _ => format!("helping with {owner}'s {object}"),
    }
}

/// Prepositions that end the short form of an activity ([`short_activity`]).
const PREPOSITIONS: &[&str] = &[
    "about", "after", "around", "at", "before", "by", "during", "for", "from", "in", "into",
    "near", "of", "on", "over", "to", "under", "with",
];

/// `task` as a short activity: [`activity`] up to the first preposition after its first word
/// ("bake bread for the festival" → "baking bread"), for a line that names someone else's task.
pub(super) fn short_activity(task: &str) -> String {
    let full = activity(task);
    let words: Vec<&str> = full.split_whitespace().collect();
    let cut = words
        .iter()
        .skip(1)
        .position(|w| PREPOSITIONS.contains(&w.to_lowercase().as_str()))
        .map_or(words.len(), |i| i + 1);
    words[..cut].join(" ")
}

/// Articles and possessives: a task that starts with one names a thing, not something to do.
const DETERMINERS: &[&str] = &[
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "some", "this", "that",
];

/// `task` as something one is busy doing: an imperative task ("bake bread for the festival",
/// "Stop the leak") becomes a gerund phrase ("baking bread for the festival", "stopping the
/// leak"); a task that already reads as one ("baking bread"), or that names a thing ("the
/// harvest festival", "repairs") is kept. English spelling: `bake` → `baking`, `see` →
/// `seeing`, `tie` → `tying`, `stop` → `stopping` (one syllable ending consonant-vowel-consonant,
/// not in w, x, y), `visit` → `visiting`.
pub(super) fn activity(task: &str) -> String {
    let task = task.trim();
    let (first, rest) = match task.find(char::is_whitespace) {
        Some(at) => task.split_at(at),
        None => (task, ""),
    };
    let lower = first.to_lowercase();
    let keep = lower.is_empty()
        || !lower.chars().all(|c| c.is_ascii_alphabetic())
        || lower.ends_with("ing")
        || (lower.ends_with('s') && !lower.ends_with("ss") && !lower.ends_with("us"))
        || DETERMINERS.contains(&lower.as_str())
        // An acronym or a name spelled in capitals ("NPC duty") is not a verb.
        || (first.chars().count() > 1 && first.chars().all(|c| c.is_ascii_uppercase()));
    if keep {
        return task.to_string();
    }
    format!("{}{rest}", gerund(&lower))
}

/// The `-ing` form of an English verb (see [`activity`]).
fn gerund(verb: &str) -> String {
    let is_vowel = |c: u8| b"aeiou".contains(&c);
    let b = verb.as_bytes();
    let n = b.len();
    if verb == "be" || n < 2 {
        return format!("{verb}ing");
    }
    if verb.ends_with("ie") {
        return format!("{}ying", &verb[..n - 2]);
    }
    if verb.ends_with('e')
        && !verb.ends_with("ee")
        && !verb.ends_with("ye")
        && !verb.ends_with("oe")
    {
        return format!("{}ing", &verb[..n - 1]);
    }
    let vowel_groups = b
        .iter()
        .enumerate()
        .filter(|&(i, &c)| is_vowel(c) && (i == 0 || !is_vowel(b[i - 1])))
        .count();
    let last = b[n - 1];
    let cvc = n >= 3
        && !is_vowel(last)
        && !b"wxy".contains(&last)
        && is_vowel(b[n - 2])
        && !is_vowel(b[n - 3]);
    if vowel_groups == 1 && cvc {
        return format!("{verb}{}ing", last as char);
    }
    format!("{verb}ing")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_substitutes_once() {
        assert_eq!(
            fill("{a} and {b} and {c}", &[("a", "{b}"), ("b", "B")]),
            "{b} and B and {c}"
        );
        assert_eq!(fill("no keys {", &[]), "no keys {");
        assert_eq!(fill("", &[("a", "x")]), "");
    }

    #[test]
    fn quote_and_truncate_count_characters() {
        assert_eq!(quote("  hello\n  \"world\" ", 60), "hello 'world'");
        let q = quote(&"é".repeat(100), 10);
        assert_eq!(q.chars().count(), 10);
        assert!(q.ends_with('…'));
        assert_eq!(truncate_chars("abc", 0, "…"), "");
        assert_eq!(truncate_chars("abcdef", 1, "…"), "…");
    }

    #[test]
    fn greetings_are_recognised_as_whole_words() {
        assert_eq!(
            greeting("Good morning, Mira! Is the bread ready?"),
            Some("Good morning")
        );
        assert_eq!(greeting("  hi there"), Some("Hi"));
        assert_eq!(greeting("Hello!"), Some("Hello"));
        assert_eq!(greeting("hills are steep"), None);
        assert_eq!(greeting("Is the bread ready?"), None);
        assert_eq!(
            topic("Good morning, Mira! Is the bread ready?", &[]).as_deref(),
            Some("the bread")
        );
    }

    #[test]
    fn the_topic_is_the_longest_meaningful_word_with_its_determiner() {
        assert_eq!(
            topic("Can you bring bread to the market?", &[]).as_deref(),
            Some("the market")
        );
        assert_eq!(topic("hi!", &[]), None);
        assert_eq!(topic("What about that?", &[]), None);
        assert_eq!(topic("Äpfel und Birnen", &[]).as_deref(), Some("Birnen"));
        assert_eq!(
            topic("Will there be bread for the festival?", &[]).as_deref(),
            Some("the festival")
        );
        // The speaker's "my" is the listener's "your", and the other way round.
        assert_eq!(
            topic("I lost my lantern", &[]).as_deref(),
            Some("your lantern")
        );
        assert_eq!(
            topic("Is your bakery open?", &[]).as_deref(),
            Some("my bakery")
        );
        assert_eq!(topic("We saw a dragon", &[]).as_deref(), Some("a dragon"));
        // Never the listener's own name.
        assert_eq!(topic("Hello, Ivy!", &["Ivy"]), None);
        assert_eq!(topic("Hello, Ivy!", &[]), Some("Ivy".to_string()));
        assert_eq!(
            topic("Mira Stone, the oven?", &["mira stone"]).as_deref(),
            Some("the oven")
        );
    }

    /// Every template a line is made of, with whether it is said (the others are reasons, and
    /// the message of a request for help).
    fn templates() -> Vec<(&'static [&'static str], bool)> {
        vec![
            (PLAYER_QUOTE, true),
            (PLAYER_TOPIC, true),
            (PLAYER_TOPIC_AFTER_GREETING, true),
            (PLAYER_QUESTION, true),
            (PLAYER_QUESTION_AFTER_GREETING, true),
            (PLAYER_QUESTION_TASK, true),
            (PLAYER_QUESTION_TASK_AFTER_GREETING, true),
            (&[PLAYER_UNCLEAR], true),
            (GREETING_BACK, true),
            (WISHED_LUCK, true),
            (PRAISED, true),
            (THANKED, true),
            (FAREWELL, true),
            (ANSWER_TASK_TAIL, true),
            (PLAYER_IDLE_TAIL, true),
            (AGENT_TOPIC, true),
            (AGENT_PLAIN, true),
            (AGENT_QUESTION_TOPIC, true),
            (AGENT_QUESTION_TASK, true),
            (AGENT_QUESTION, true),
            (COLLABORATION_AGREE, true),
            (GREETING_ROLE, true),
            (GREETING, true),
            (CHAT_TASK, true),
            (CHAT_TOPIC, true),
            (CHAT_ROLE, true),
            (CHAT_SMALL, true),
            (CHAT_GROUP_TASK, true),
            (CHAT_GROUP, true),
            (TASK_UPDATE, true),
            (TASK_DONE, true),
            (AGENT_TOPIC_BUSY, true),
            (TASK_DONE_NEXT, true),
            (MONOLOGUE_TASK, true),
            (MONOLOGUE, true),
            (TOOL_ANSWER, true),
            (TOOL_FAILED, true),
            (WORK_REASON, false),
            (COLLABORATE_ASK, false),
            (MOVE_TOWARD_REASON, false),
            (MOVE_WANDER_REASON, false),
            (WAIT_REASON, false),
        ]
    }

    #[test]
    fn every_template_uses_known_keys_only() {
        let known = [
            "sender",
            "quote",
            "topic",
            "task",
            "other",
            "me",
            "role",
            "speaker",
            "step",
            "total",
            "next",
            "direction",
            "greeting",
            "owner",
            "subject",
            "result",
            "reason",
            "object",
        ];
        let values: Vec<(&str, &str)> = known.iter().map(|k| (*k, "X")).collect();
        for (set, _) in templates() {
            assert!(!set.is_empty());
            for t in set {
                let filled = fill(t, &values);
                assert!(!filled.contains('{') && !filled.contains('}'), "{t}");
            }
        }
    }

    #[test]
    fn no_said_template_holds_a_stock_phrase() {
        // The template's own words, with every placeholder as a break.
        let longest = |t: &str| {
            fill(t, &[])
                .split(['{', '}'])
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .map(|(_, text)| own_words(text))
                .max()
                .unwrap_or(0)
        };
        assert_eq!(longest("Good to hear from you, {sender}!"), 5);
        assert_eq!(longest("{other}, I'm busy {task}. Any tips?"), 2);
        for (set, said) in templates() {
            for t in set.iter().filter(|_| said) {
                assert!(
                    longest(t) <= MAX_FIXED_WORDS,
                    "{t:?} has a stock phrase of {} words",
                    longest(t)
                );
            }
        }
    }

    /// The words of a template's own text between placeholders: a piece that starts with an
    /// apostrophe ends the word before it ("{role}'s" is one word).
    fn own_words(piece: &str) -> usize {
        let words = crate::eval::lines::words(piece).len();
        if piece.starts_with(['\'', '\u{2019}']) {
            words.saturating_sub(1)
        } else {
            words
        }
    }

    /// The longest run of words two agents could both say in a fill of `template` (see the
    /// module docs).
    fn shared_run(template: &str) -> usize {
        let mut best = 0;
        let mut run = 0;
        for (i, piece) in template.split(['{', '}']).enumerate() {
            if i % 2 == 0 {
                run += own_words(piece);
                best = best.max(run);
                continue;
            }
            match piece {
                "me" | "role" | "quote" | "result" | "subject" | "reason" => run = 0,
                "task" | "Task" | "next" | "Next" | "object" | "Object" => {
                    best = best.max(run + 2);
                    run = 2;
                }
                "topic" | "greeting" => run += 2,
                _ => run += 1,
            }
            best = best.max(run);
        }
        best
    }

    #[test]
    fn agents_lines_share_no_five_words_in_a_row() {
        assert_eq!(shared_run("Good to hear from you, {sender}!"), 6);
        assert_eq!(shared_run("In the middle of {task} here, {other}."), 6);
        assert_eq!(shared_run("Hello {other}! I'm {me}, the {role}."), 3);
        assert_eq!(shared_run("{topic}? Fair enough."), 4);
        let strict: &[&[&str]] = &[
            AGENT_TOPIC,
            AGENT_TOPIC_BUSY,
            AGENT_PLAIN,
            AGENT_QUESTION_TOPIC,
            AGENT_QUESTION_TASK,
            AGENT_QUESTION,
            COLLABORATION_AGREE,
            GREETING_ROLE,
            GREETING,
            CHAT_TASK,
            CHAT_TOPIC,
            CHAT_ROLE,
            CHAT_SMALL,
            CHAT_GROUP_TASK,
            CHAT_GROUP,
            TASK_UPDATE,
            TASK_DONE,
            TASK_DONE_NEXT,
            MONOLOGUE_TASK,
            MONOLOGUE,
        ];
        for set in strict {
            for t in *set {
                assert!(
                    shared_run(t) <= MAX_FIXED_WORDS,
                    "{t:?}: {} words two agents may share",
                    shared_run(t)
                );
            }
        }
    }

    #[test]
    fn a_task_reads_short_as_its_object_and_as_someone_elses() {
        let cases = [
            (
                "bake bread for the festival",
                "baking bread",
                "bread",
                "baking Mira's bread",
            ),
            (
                "organise the harvest festival",
                "organising the harvest festival",
                "harvest festival",
                "organising Mira's harvest festival",
            ),
            (
                "deliver wheat to the bakery",
                "delivering wheat",
                "wheat",
                "delivering Mira's wheat",
            ),
            ("go", "going", "task", "going for Mira"),
            (
                "the harvest festival",
                "the harvest festival",
                "harvest festival",
                "helping with Mira's harvest festival",
            ),
        ];
        for (task, short, object, helped) in cases {
            assert_eq!(short_activity(task), short, "{task}");
            assert_eq!(task_object(task), object, "{task}");
            assert_eq!(helped_activity(task, "Mira"), helped, "{task}");
        }
    }

    #[test]
    fn an_imperative_task_reads_as_an_activity() {
        let cases = [
            (
                "bake bread for the festival",
                "baking bread for the festival",
            ),
            (
                "forge a hinge for the town gate",
                "forging a hinge for the town gate",
            ),
            (
                "organise the harvest festival",
                "organising the harvest festival",
            ),
            ("Stop the leak", "stopping the leak"),
            ("plan the route", "planning the route"),
            ("visit Mira", "visiting Mira"),
            ("fix the fence", "fixing the fence"),
            ("sweep the square", "sweeping the square"),
            ("tie the boats", "tying the boats"),
            ("see the mayor", "seeing the mayor"),
            ("mend nets", "mending nets"),
            ("play a tune", "playing a tune"),
            ("open the shop", "opening the shop"),
            ("be patient", "being patient"),
            ("go", "going"),
            // Kept: already an activity, a thing, a name in capitals, not a word.
            ("baking bread", "baking bread"),
            ("the harvest festival", "the harvest festival"),
            ("repairs to the mill", "repairs to the mill"),
            ("NPC duty", "NPC duty"),
            ("42 barrels", "42 barrels"),
            ("", ""),
        ];
        for (task, expected) in cases {
            assert_eq!(activity(task), expected, "{task}");
        }
    }
}
