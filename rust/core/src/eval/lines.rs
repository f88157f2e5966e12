//! Measures of the lines agents say: one agent's lines, judged against everyone's lines in the
//! order they were said ([`Line`]).
//!
//! # Words
//!
//! A line's **words** ([`words`]) are its longest runs of letters and digits — an apostrophe
//! between two of them stays inside the word ("I'll", "baker's") — lower-cased. Its **normal
//! form** ([`normal_form`]) is its words joined by single spaces: case, punctuation and
//! whitespace do not count.
//!
//! # Formulas
//!
//! For an agent that said `N` lines:
//!
//! - **repeated share** ([`repeated_share`]) = `R / N`, where `R` counts its lines whose normal
//!   form equals the normal form of one of its own earlier lines (0 when `N` is 0).
//! - **echo share** ([`echo_share`]) = `E / N`, where `E` counts its lines that
//!   [quote](#quoting) a line another agent said earlier. The player's lines are not counted
//!   here: taking up what the player said is answering them, which the questions measure.
//! - **quote-of-quote count** ([`quote_of_quote_count`]): its lines that quote a line of another
//!   speaker (the player included) which itself quotes an earlier line of a speaker other than
//!   its own.
//! - **distinct-2** ([`distinct_2`]) = distinct word pairs / word pairs, over the pairs of
//!   consecutive words inside each of its lines (1 when no line has two words).
//! - **questions answered** ([`answered_questions`]): a **question** is a line of the player
//!   addressed to the agent (the agent is one of its recipients) that ends with `?`. It is
//!   **answered** when the agent's next line addressed to the player exists and holds one of the
//!   question's **content words**: its words other than stopwords
//!   ([`crate::memory::is_stopword`]) and the words of the agent's name, compared by their
//!   English stems ("lanterns" answers "lantern").
//!
//! # Quoting
//!
//! A line quotes an earlier line of another speaker when either
//!
//! - they share a run of at least [`ECHO_RUN_WORDS`] consecutive words, or
//! - a passage of the line between double quotation marks (`"…"`, `“…”`, `„…“`, `«…»`) of at
//!   least [`QUOTED_MIN_WORDS`] words is a run of consecutive words of it. A passage cut short
//!   with an ellipsis (`…` or `...` at its end) is compared without its last word, which may be
//!   cut too.
//!
//! Single quotation marks are not read as quotes (they are apostrophes too).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::memory::stem;

/// Consecutive words two lines must share for one to quote the other.
pub const ECHO_RUN_WORDS: usize = 5;

/// The fewest words of a passage in quotation marks that make it a quote of another line.
pub const QUOTED_MIN_WORDS: usize = 2;

/// One line said: who said it, to whom, and what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    /// Who said it (an agent id, or the player's id).
    pub speaker: String,
    /// Who it was addressed to (agent ids, the player's id); empty: no one in particular.
    #[serde(default)]
    pub to: Vec<String>,
    /// What was said.
    pub text: String,
}

impl Line {
    /// A line `speaker` said to `to`.
    pub fn new(speaker: &str, to: &[&str], text: &str) -> Line {
        Line {
            speaker: speaker.to_string(),
            to: to.iter().map(|t| t.to_string()).collect(),
            text: text.to_string(),
        }
    }
}

/// What one agent's lines measure ([`LineReport::measure`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineReport {
    /// The agent.
    pub agent: String,
    /// Lines it said.
    pub lines: usize,
    /// Its lines equal (in normal form) to an earlier line of its own.
    pub repeated: usize,
    /// `repeated / lines` (0 without lines).
    pub repeated_share: f64,
    /// Its lines that quote a line another agent said earlier.
    pub echoes: usize,
    /// `echoes / lines` (0 without lines).
    pub echo_share: f64,
    /// Its lines that quote a line which itself quotes another.
    pub quotes_of_quotes: usize,
    /// Distinct word pairs over word pairs of its lines (1 without pairs).
    pub distinct_2: f64,
    /// The player's questions to it.
    pub questions: usize,
    /// Those it answered (its next line to the player names a content word of the question).
    pub answered: usize,
    /// The questions it did not answer, each with what it said next to the player (or that it
    /// said nothing more to them).
    pub unanswered: Vec<String>,
    /// Its lines that echo another agent, each with the line it quotes (for reading a failure).
    pub echoed: Vec<String>,
}

impl LineReport {
    /// Measures the lines of `agent` in `lines` (everyone's, in the order they were said);
    /// `player` is the player's id, `name` the agent's name (its words are not content words of
    /// a question).
    pub fn measure(lines: &[Line], agent: &str, player: &str, name: &str) -> LineReport {
        let said = Said::new(lines);
        let own = said.of(agent);
        let repeated = said.repeated(agent);
        let echo_sources = |j: usize| lines[j].speaker != player;
        let mut echoes = 0;
        let mut echoed = Vec::new();
        for &i in &own {
            if let Some(j) = said.quoted(i, &echo_sources) {
                echoes += 1;
                echoed.push(format!("{:?} quotes {:?}", lines[i].text, lines[j].text));
            }
        }
        let (questions, unanswered) = said.questions(agent, player, name);
        let share = |n: usize| ratio(n, own.len());
        LineReport {
            agent: agent.to_string(),
            lines: own.len(),
            repeated,
            repeated_share: share(repeated),
            echoes,
            echo_share: share(echoes),
            quotes_of_quotes: said.quotes_of_quotes(agent),
            distinct_2: said.distinct_2(agent),
            questions,
            answered: questions - unanswered.len(),
            unanswered,
            echoed,
        }
    }
}

/// The share of `agent`'s lines that repeat one of its own earlier lines (see the
/// [module docs](self)).
pub fn repeated_share(lines: &[Line], agent: &str) -> f64 {
    let said = Said::new(lines);
    ratio(said.repeated(agent), said.of(agent).len())
}

/// The share of `agent`'s lines that quote a line another agent (not `player`) said earlier
/// (see the [module docs](self)).
pub fn echo_share(lines: &[Line], agent: &str, player: &str) -> f64 {
    let said = Said::new(lines);
    let own = said.of(agent);
    let echoes = own
        .iter()
        .filter(|&&i| said.quoted(i, &|j| lines[j].speaker != player).is_some())
        .count();
    ratio(echoes, own.len())
}

/// How many of `agent`'s lines quote a line that itself quotes another (see the
/// [module docs](self)).
pub fn quote_of_quote_count(lines: &[Line], agent: &str) -> usize {
    Said::new(lines).quotes_of_quotes(agent)
}

/// Distinct word pairs over word pairs in `agent`'s lines (see the [module docs](self)).
pub fn distinct_2(lines: &[Line], agent: &str) -> f64 {
    Said::new(lines).distinct_2(agent)
}

/// The player's questions to `agent` and how many it answered, as `(questions, answered)` (see
/// the [module docs](self)).
pub fn answered_questions(lines: &[Line], agent: &str, player: &str, name: &str) -> (usize, usize) {
    let (questions, unanswered) = Said::new(lines).questions(agent, player, name);
    (questions, questions - unanswered.len())
}

/// Whether `line` quotes `earlier` (see the [module docs](self#quoting)), whoever said them.
pub fn quotes(line: &str, earlier: &str) -> bool {
    let pair = [Line::new("", &[], line), Line::new("", &[], earlier)];
    Said::new(&pair).quotes(0, 1)
}

/// The words of `text` (see the [module docs](self)).
pub fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let apostrophe = matches!(c, '\'' | '\u{2019}')
            && !word.is_empty()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if apostrophe {
            word.push('\'');
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// `text`'s words joined by single spaces (see the [module docs](self)).
pub fn normal_form(text: &str) -> String {
    words(text).join(" ")
}

/// The passages of `text` between double quotation marks, as words, each without its last word
/// when it ends with an ellipsis; an opening mark never closed runs to the end of the text.
pub fn quoted_passages(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some((at, open)) = rest.char_indices().find(|(_, c)| opens_quote(*c)) {
        let after = &rest[at + open.len_utf8()..];
        let (inside, next) = match after.char_indices().find(|(_, c)| closes_quote(open, *c)) {
            Some((end, close)) => (&after[..end], &after[end + close.len_utf8()..]),
            None => (after, ""),
        };
        let mut passage = words(inside);
        let trimmed = inside.trim_end();
        if trimmed.ends_with('…') || trimmed.ends_with("...") {
            passage.pop();
        }
        out.push(passage);
        rest = next;
    }
    out
}

fn opens_quote(c: char) -> bool {
    matches!(c, '"' | '\u{201c}' | '\u{201e}' | '\u{ab}')
}

fn closes_quote(open: char, c: char) -> bool {
    match open {
        '"' => c == '"',
        '\u{201c}' => matches!(c, '\u{201d}' | '\u{201c}'),
        '\u{201e}' => matches!(c, '\u{201c}' | '\u{201d}'),
        _ => c == '\u{bb}',
    }
}

/// `n / of`, 0 when `of` is 0.
fn ratio(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// Everyone's lines, read once: words, normal forms, runs, quoted passages.
struct Said<'a> {
    lines: &'a [Line],
    words: Vec<Vec<String>>,
    /// Each line's runs of [`ECHO_RUN_WORDS`] words, joined by spaces.
    runs: Vec<HashSet<String>>,
    /// Each line's quoted passages of at least [`QUOTED_MIN_WORDS`] words, joined by spaces.
    passages: Vec<Vec<String>>,
}

impl<'a> Said<'a> {
    fn new(lines: &'a [Line]) -> Self {
        let words: Vec<Vec<String>> = lines.iter().map(|l| words(&l.text)).collect();
        let runs = words
            .iter()
            .map(|w| w.windows(ECHO_RUN_WORDS).map(|run| run.join(" ")).collect())
            .collect();
        let passages = lines
            .iter()
            .map(|l| {
                quoted_passages(&l.text)
                    .into_iter()
                    .filter(|p| p.len() >= QUOTED_MIN_WORDS)
                    .map(|p| p.join(" "))
                    .collect()
            })
            .collect();
        Said {
            lines,
            words,
            runs,
            passages,
        }
    }

    /// The indexes of `agent`'s lines.
    fn of(&self, agent: &str) -> Vec<usize> {
        (0..self.lines.len())
            .filter(|&i| self.lines[i].speaker == agent)
            .collect()
    }

    fn repeated(&self, agent: &str) -> usize {
        let mut seen: HashSet<String> = HashSet::new();
        let mut repeated = 0;
        for i in self.of(agent) {
            if !seen.insert(self.words[i].join(" ")) {
                repeated += 1;
            }
        }
        repeated
    }

    /// Whether line `i` quotes line `j` (any order, any speakers).
    fn quotes(&self, i: usize, j: usize) -> bool {
        if self.runs[i].iter().any(|run| self.runs[j].contains(run)) {
            return true;
        }
        let padded = format!(" {} ", self.words[j].join(" "));
        self.passages[i]
            .iter()
            .any(|p| padded.contains(&format!(" {p} ")))
    }

    /// The latest earlier line of another speaker that line `i` quotes, among those `source`
    /// accepts.
    fn quoted(&self, i: usize, source: &dyn Fn(usize) -> bool) -> Option<usize> {
        (0..i).rev().find(|&j| {
            self.lines[j].speaker != self.lines[i].speaker && source(j) && self.quotes(i, j)
        })
    }

    fn quotes_of_quotes(&self, agent: &str) -> usize {
        let quoting: Vec<bool> = (0..self.lines.len())
            .map(|j| self.quoted(j, &|_| true).is_some())
            .collect();
        self.of(agent)
            .into_iter()
            .filter(|&i| self.quoted(i, &|j| quoting[j]).is_some())
            .count()
    }

    fn distinct_2(&self, agent: &str) -> f64 {
        let mut pairs = 0usize;
        let mut distinct: HashSet<(&str, &str)> = HashSet::new();
        for i in self.of(agent) {
            for pair in self.words[i].windows(2) {
                pairs += 1;
                distinct.insert((&pair[0], &pair[1]));
            }
        }
        if pairs == 0 {
            1.0
        } else {
            ratio(distinct.len(), pairs)
        }
    }

    /// The player's questions to `agent`, and those it did not answer (each described).
    fn questions(&self, agent: &str, player: &str, name: &str) -> (usize, Vec<String>) {
        let own_name: HashSet<String> = words(name).into_iter().collect();
        let mut questions = 0;
        let mut unanswered = Vec::new();
        for (q, line) in self.lines.iter().enumerate() {
            let asked = line.speaker == player
                && line.to.iter().any(|t| t == agent)
                && line.text.trim_end().ends_with('?');
            if !asked {
                continue;
            }
            questions += 1;
            let content: HashSet<String> = self.words[q]
                .iter()
                .filter(|w| !crate::memory::is_stopword(w) && !own_name.contains(*w))
                .map(|w| stem(w))
                .collect();
            let next = (q + 1..self.lines.len()).find(|&a| {
                self.lines[a].speaker == agent && self.lines[a].to.iter().any(|t| t == player)
            });
            match next {
                Some(a) if self.words[a].iter().any(|w| content.contains(&stem(w))) => {}
                Some(a) => unanswered.push(format!(
                    "{:?} was answered {:?}, which names none of its content words",
                    line.text, self.lines[a].text
                )),
                None => unanswered.push(format!("{:?} got no answer", line.text)),
            }
        }
        (questions, unanswered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "player_0";

    fn l(speaker: &str, to: &[&str], text: &str) -> Line {
        Line::new(speaker, to, text)
    }

    #[test]
    fn words_ignore_case_punctuation_and_whitespace() {
        assert_eq!(
            words("  I'll see you, Mira!  The baker's   “rye”…"),
            ["i'll", "see", "you", "mira", "the", "baker's", "rye"]
        );
        assert_eq!(words("'Quoted' — 3 loaves"), ["quoted", "3", "loaves"]);
        assert_eq!(normal_form("Hello,   WORLD!!"), "hello world");
        assert_eq!(normal_form("…"), "");
    }

    #[test]
    fn quoted_passages_pair_their_marks_and_drop_a_cut_word() {
        assert_eq!(
            quoted_passages(r#"He said "hello there" and “good day to y…”"#),
            [vec!["hello", "there"], vec!["good", "day", "to"]]
        );
        assert_eq!(
            quoted_passages("«open and never closed"),
            [vec!["open", "and", "never", "closed"]]
        );
        assert_eq!(
            quoted_passages("no quotes, it's fine"),
            Vec::<Vec<String>>::new()
        );
    }

    #[test]
    fn repeated_share_counts_lines_said_before_by_the_same_agent() {
        let lines = [
            l("a", &[], "Hello, Bram!"),
            l("b", &[], "hello bram"),
            l("a", &[], "HELLO   bram."),
            l("a", &[], "Nice day."),
            l("a", &[], "hello, bram"),
        ];
        // Two of a's four lines repeat its first; b's line is b's own.
        assert_eq!(repeated_share(&lines, "a"), 0.5);
        assert_eq!(repeated_share(&lines, "b"), 0.0);
        assert_eq!(repeated_share(&lines, "nobody"), 0.0);
        // Passes a 10 % bar with one repeat in ten lines, fails with two.
        let mut ten: Vec<Line> = (0..9).map(|n| l("a", &[], &format!("line {n}"))).collect();
        ten.push(l("a", &[], "Line 0!"));
        assert!(repeated_share(&ten, "a") <= 0.10);
        ten[8] = l("a", &[], "line 1");
        assert!(repeated_share(&ten, "a") > 0.10);
    }

    #[test]
    fn an_echo_shares_five_words_in_a_row_or_quotes_another_agent() {
        let lines = [
            l("b", &["a"], "The mill wheel is broken again today."),
            l(P, &["a"], "Where are the lanterns stored at night?"),
            // Five words of b's line in a row: an echo.
            l("a", &["b"], "So the mill wheel is broken, you say."),
            // Four in a row: not one.
            l("a", &["b"], "The mill wheel is fine now."),
            // b's words in quotation marks: an echo.
            l("a", &["b"], "You said “wheel is” — is it?"),
            // The player's words: not an echo (answering them is measured by the questions).
            l(
                "a",
                &[P],
                "Where are the lanterns stored at night? In the mill.",
            ),
            // Its own earlier words: not an echo.
            l("a", &["b"], "The mill wheel is fine now!"),
        ];
        assert_eq!(echo_share(&lines, "a", P), 2.0 / 5.0);
        let report = LineReport::measure(&lines, "a", P, "Ada");
        assert_eq!(report.echoes, 2);
        assert_eq!(report.echoed.len(), 2);
        assert!(
            report.echoed[0].contains("broken again"),
            "{:?}",
            report.echoed
        );
        // b said its line before anyone: no echo.
        assert_eq!(echo_share(&lines, "b", P), 0.0);
        // A one-word quote is a topic, not a quotation.
        let one = [
            l("b", &[], "Rye is good."),
            l("a", &[], "Agreed about “rye”."),
        ];
        assert_eq!(echo_share(&one, "a", P), 0.0);
    }

    #[test]
    fn quotes_compares_two_lines() {
        assert!(quotes(
            "So the mill wheel is broken?",
            "The mill wheel is broken."
        ));
        assert!(!quotes(
            "The mill wheel is fine.",
            "The mill wheel is broken."
        ));
        assert!(quotes("You said “wheel is”.", "The mill wheel is broken."));
        assert!(!quotes("", ""));
    }

    #[test]
    fn a_quote_of_a_quote_is_counted_whoever_was_quoted_first() {
        let lines = [
            l(
                P,
                &["m"],
                "By the way, the lanterns are stored in the old mill.",
            ),
            // m quotes the player: a quote, but not of a quote.
            l(
                "m",
                &[P, "a"],
                "You told me: “By the way, the lanterns are stored…”",
            ),
            // a quotes m's quote: a quote of a quote.
            l(
                "a",
                &["m"],
                "Mira, you told me \"You told me: 'By the way, the lant…\"",
            ),
            // a quotes m's words that quote nobody: not one.
            l("m", &["a"], "Fresh rolls are in the oven now."),
            l("a", &["m"], "So fresh rolls are in the oven now, good."),
        ];
        assert_eq!(quote_of_quote_count(&lines, "a"), 1);
        assert_eq!(quote_of_quote_count(&lines, "m"), 0);
        let report = LineReport::measure(&lines, "a", P, "Ada");
        assert_eq!(report.quotes_of_quotes, 1);
        assert_eq!(report.echoes, 2);
    }

    #[test]
    fn distinct_2_is_distinct_pairs_over_pairs() {
        let lines = [
            l("a", &[], "good day"),
            l("a", &[], "Good day!"),
            l("a", &[], "a fine day"),
            l("a", &[], "hm"),
        ];
        // Pairs: (good day) ×2, (a fine), (fine day): 3 distinct of 4.
        assert_eq!(distinct_2(&lines, "a"), 0.75);
        assert_eq!(distinct_2(&lines, "b"), 1.0);
        assert_eq!(distinct_2(&[l("a", &[], "hm")], "a"), 1.0);
    }

    #[test]
    fn a_question_is_answered_by_the_next_line_to_the_player_naming_what_was_asked() {
        let lines = [
            l(P, &["m"], "Good morning, Mira! Are the lanterns ready?"),
            l("m", &["b"], "Bram, the lanterns are ready."),
            l("m", &[P], "The lantern? Stored in the mill."),
            l(P, &["m"], "Any rye left?"),
            l("m", &[P], "Mira here! Good morning to you."),
            l(P, &["m"], "Is the oven hot?"),
            l(P, &["b"], "Bram, is the forge hot?"),
            l("b", &[P], "The forge is roaring."),
            l(P, &["m"], "Just saying hello."),
        ];
        let report = LineReport::measure(&lines, "m", P, "Mira");
        assert_eq!((report.questions, report.answered), (3, 1));
        // "Mira" and "morning" are not what was asked; nothing came after the oven question.
        assert!(
            report.unanswered[0].contains("Any rye left?"),
            "{:?}",
            report.unanswered
        );
        assert!(
            report.unanswered[1].contains("got no answer"),
            "{:?}",
            report.unanswered
        );
        assert_eq!(answered_questions(&lines, "b", P, "Bram"), (1, 1));
        assert_eq!(answered_questions(&lines, "x", P, "X"), (0, 0));
    }

    #[test]
    fn a_report_sums_it_up() {
        let lines = [
            l("a", &["b"], "Hello Bram, the weather is fine today."),
            l("b", &["a"], "Hello Ada, the weather is fine today."),
            l("b", &["a"], "Hello Ada, the weather is fine today."),
            l("b", &["a"], "Off to the forge."),
        ];
        let report = LineReport::measure(&lines, "b", P, "Bram");
        assert_eq!(report.lines, 3);
        assert_eq!(report.repeated, 1);
        assert!((report.repeated_share - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(report.echoes, 2);
        assert!((report.echo_share - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(report.quotes_of_quotes, 0);
        assert_eq!((report.questions, report.answered), (0, 0));
        let empty = LineReport::measure(&[], "b", P, "Bram");
        assert_eq!(
            (empty.lines, empty.repeated_share, empty.echo_share),
            (0, 0.0, 0.0)
        );
        assert_eq!(empty.distinct_2, 1.0);
    }
}
