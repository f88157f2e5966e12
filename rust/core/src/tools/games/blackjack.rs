//! Blackjack tools: `new_blackjack_game`, `apply_blackjack_action`, `legal_blackjack_actions`,
//! `choose_blackjack_dealer_action`.
//!
//! Every snapshot (`new_*`, `apply_*`) carries, besides the document's fields, what the player
//! may see: `hands` (`[{cards, total, soft, state, doubled, bet}]`), `stack`, `bet`,
//! `dealerUpCard`, `dealerHoleCardHidden`, and — only once the hole card is revealed (dealer's
//! turn or game over) — `dealerCards` and `dealerTotal`. No derived field names the hole card
//! while it is hidden (the `state` string holds it, as the document requires). On game over:
//! `results` (per hand), `winner` (`player` / `dealer` / `draw` by net chips) and `net`.
//!
//! Besides the tools, [`baseline_action`] plays a state string as one of the [`Baseline`]
//! players (basic strategy, always stand) that the arena measures others against.

use agents_games::blackjack::strategy::{always_stand, basic_strategy};
use agents_games::blackjack::{
    Action, BlackjackState, DEFAULT_BET, DEFAULT_STACK, MAX_CHIPS, Status,
};
use agents_games::seed::rng_from;
use serde_json::{Map, Value, json};

use super::common;
use super::{GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Blackjack, as the game tools, the game app and `GameTools.games()` know it: a house game
/// played for chips, whose tools play actions, the dealer's chosen by `choose_*`.
pub const GAME: GameDecl = GameDecl {
    noun: "action",
    rival: "dealer",
    ..GameDecl::house(
        "blackjack",
        &[
            ToolKind::New,
            ToolKind::Apply,
            ToolKind::Legal,
            ToolKind::Choose,
        ],
        true,
        register,
    )
};

const GAME_TYPE: &str = GAME.name;
const SNAPSHOT: &str = "blackjack_snapshot";

/// The note of `choose_*` while the player is still acting.
const PLAYER_TURN_NOTE: &str =
    "No dealer actions yet: it is the player's turn; the dealer acts after the player's last hand.";

fn state_schema() -> Value {
    common::string_schema(
        "Blackjack state: S:<shoe>|P:<hands>|D:<dealer>|BK:<stack>|B:<bet>|T:<turn>|H:<hand_index>|ST:<status>|LA:<last_action>|R:<results>",
    )
}

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            "Deals a new blackjack round from a freshly shuffled 52-card deck. The dealer's hole \
             card is hidden until the dealer's turn: never reveal it in chat.",
            common::object_schema(
                &[
                    (
                        "stack",
                        common::chips_schema(MAX_CHIPS, "Starting stack (default 1000)."),
                    ),
                    (
                        "bet",
                        common::chips_schema(
                            MAX_CHIPS,
                            "Bet per hand (default 10, or the stack if smaller); at most the stack.",
                        ),
                    ),
                    ("seed", common::seed_schema()),
                ],
                &[],
            ),
        ),
        new_game,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Apply),
            "Applies a player action (hit, stand, double, split) on the player's turn, or the \
             dealer's action (hit below 17, else stand) on the dealer's turn.",
            common::apply_schema(
                "state",
                state_schema(),
                "action",
                json!({
                    "type": "string",
                    "enum": ["hit", "stand", "double", "split"],
                    "description": "The action to take."
                }),
            ),
        ),
        apply_action,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "Lists the legal actions for whoever acts next (player: hit, stand, then double/split \
             when allowed; dealer: hit below 17, else stand).",
            common::state_only_schema("state", state_schema()),
        )
        .read_only(),
        legal_actions,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            "The dealer's options on the dealer's turn (exactly one: hit below 17, else stand). \
             Empty while the player acts or once the game is over.",
            common::choose_schema("state", state_schema()),
        )
        .read_only(),
        choose_dealer_action,
    );
}

/// A built-in blackjack player that others are measured against (the arena's engines
/// `engine:basic` and `engine:stand`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Baseline {
    /// Textbook basic strategy for this game's rules: one deck, the dealer stands on soft 17,
    /// double on any two cards and after splits, no surrender (the chart and its source are in
    /// [`agents_games::blackjack::strategy`]).
    BasicStrategy,
    /// Stands on every hand.
    AlwaysStand,
}

/// The action `baseline` plays in `state` — a blackjack state string as the tools carry it —
/// by the name `apply_blackjack_action` takes (`hit`, `stand`, `double` or `split`).
///
/// On the player's turn it is the baseline's action for the hand in play, always one of the
/// actions `legal_blackjack_actions` lists (a double or split the stack does not cover falls
/// back to hit, stand or the hand's total). It reads only what the player may see: the hand in
/// play, the dealer's up card and the stack, never the hole card or the shoe. On the dealer's
/// turn it is the dealer's only action (the one `choose_blackjack_dealer_action` offers), so a
/// whole round can be played with it.
///
/// # Errors
///
/// The state's parse error as the tools report it (`Invalid state: …`), or
/// `Illegal action. (game_over)` once the game is over.
pub fn baseline_action(state: &str, baseline: Baseline) -> Result<String, String> {
    let state = state
        .parse::<BlackjackState>()
        .map_err(|e| e.message().to_string())?;
    let choose = match baseline {
        Baseline::BasicStrategy => basic_strategy,
        Baseline::AlwaysStand => always_stand,
    };
    choose(&state)
        .map(|action| action.as_str().to_string())
        .map_err(|e| format!("{} ({})", e.message, e.reason))
}

/// The player-visible fields of a state (plus the `state` string itself).
fn snapshot_fields(state: &BlackjackState) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("state".into(), json!(state.to_string()));
    m.insert("status".into(), json!(state.status().as_str()));
    m.insert("turn".into(), json!(state.turn().as_str()));
    m.insert("lastAction".into(), json!(state.last_action().as_str()));
    m.insert("handIndex".into(), json!(state.hand_index()));
    m.insert("stack".into(), json!(state.stack()));
    m.insert("bet".into(), json!(state.bet()));
    let hands: Vec<Value> = state
        .hands()
        .iter()
        .map(|h| {
            let (total, soft) = h.value();
            json!({
                "cards": h.cards.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "total": total,
                "soft": soft,
                "state": h.state.as_str(),
                "doubled": h.doubled,
                "bet": h.bet,
            })
        })
        .collect();
    m.insert("hands".into(), Value::Array(hands));
    m.insert(
        "dealerUpCard".into(),
        json!(state.dealer_up_card().to_string()),
    );
    m.insert(
        "dealerHoleCardHidden".into(),
        json!(state.hole_card_hidden()),
    );
    if let Some(total) = state.dealer_total() {
        let cards: Vec<String> = state
            .visible_dealer_cards()
            .iter()
            .map(ToString::to_string)
            .collect();
        m.insert("dealerCards".into(), json!(cards));
        m.insert("dealerTotal".into(), json!(total));
    }
    m.insert("cardsInShoe".into(), json!(state.shoe().len()));
    if let (Some(results), Some(winner), Some(net)) = (state.results(), state.winner(), state.net())
    {
        let results: Vec<&str> = results.iter().map(|r| r.as_str()).collect();
        m.insert("results".into(), json!(results));
        m.insert("winner".into(), json!(winner.as_str()));
        m.insert("net".into(), json!(net as i64));
    }
    m
}

fn header(legal: Option<bool>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), json!(SNAPSHOT));
    m.insert("gameType".into(), json!(GAME_TYPE));
    if let Some(legal) = legal {
        m.insert("legal".into(), json!(legal));
    }
    m
}

fn new_game(args: &Value) -> ToolOutput {
    let (stack, bet) = common::stack_and_bet_args(args, DEFAULT_STACK, DEFAULT_BET);
    let mut rng = rng_from(common::seed_arg(args).as_ref());
    match BlackjackState::new_game(stack, bet, &mut rng) {
        Ok(state) => {
            let mut out = header(None);
            out.insert("gameId".into(), json!(common::new_game_id()));
            out.extend(snapshot_fields(&state));
            ToolOutput::ok(Value::Object(out))
        }
        Err(e) => common::stake_refused(SNAPSHOT, GAME_TYPE, stack, bet, &e),
    }
}

fn apply_action(args: &Value) -> ToolOutput {
    let input = common::str_arg(args, "state");
    let action = common::str_arg(args, "action");
    let parsed = input.parse::<BlackjackState>();
    let result = match &parsed {
        Ok(state) => state.apply_str(action).map_err(|e| (e.message, e.reason)),
        Err(e) => Err((e.message().to_string(), "invalid_state")),
    };
    match result {
        Ok(next) => {
            let actor = parsed
                .as_ref()
                .map(|s| s.turn().as_str())
                .unwrap_or("player");
            let mut out = header(Some(true));
            out.extend(snapshot_fields(&next));
            out.insert("actor".into(), json!(actor));
            let mut out = Value::Object(out);
            common::echo_game_id(&mut out, args);
            ToolOutput::ok(out)
        }
        Err((error, reason)) => {
            let mut out = header(Some(false));
            out.insert("state".into(), json!(input));
            if let Ok(state) = &parsed {
                out.insert("status".into(), json!(state.status().as_str()));
                out.insert("turn".into(), json!(state.turn().as_str()));
                out.insert("handIndex".into(), json!(state.hand_index()));
                out.insert(
                    "actions".into(),
                    json!(action_names(&state.legal_actions())),
                );
            }
            let mut out = common::with_error(Value::Object(out), &error, reason);
            common::echo_game_id(&mut out, args);
            ToolOutput::failed(out)
        }
    }
}

fn action_names(actions: &[Action]) -> Vec<&'static str> {
    actions.iter().map(|a| a.as_str()).collect()
}

fn legal_actions(args: &Value) -> ToolOutput {
    let base = json!({"type": "legal_actions", "gameType": GAME_TYPE, "actions": []});
    match common::str_arg(args, "state").parse::<BlackjackState>() {
        Ok(state) => {
            let actions = state.legal_actions();
            let out = json!({
                "type": "legal_actions",
                "gameType": GAME_TYPE,
                "actions": action_names(&actions),
                "turn": state.turn().as_str(),
                "handIndex": state.hand_index(),
                "status": state.status().as_str(),
            });
            common::list_output(out, actions.is_empty(), common::NO_MOVES_NOTE)
        }
        Err(e) => ToolOutput::failed(common::with_error(base, e.message(), "invalid_state")),
    }
}

fn dealer_policy() -> Value {
    let mut policy = common::policy("mustChooseFromActions");
    if let Some(obj) = policy.as_object_mut() {
        obj.insert("mustNotRevealDealerHoleCardInChat".into(), json!(true));
        obj.insert(
            "dealerHoleCardVisibility".into(),
            json!("hidden_until_dealer_turn_or_game_over"),
        );
    }
    policy
}

fn choose_dealer_action(args: &Value) -> ToolOutput {
    let max = common::max_candidates_arg(args);
    match common::str_arg(args, "state").parse::<BlackjackState>() {
        Ok(state) => {
            let actions: Vec<Action> = state.dealer_action().into_iter().take(max).collect();
            let mut out = json!({
                "type": "opponent_choice",
                "gameType": GAME_TYPE,
                "actions": action_names(&actions),
                "policy": dealer_policy(),
                "turn": state.turn().as_str(),
                "status": state.status().as_str(),
            });
            if let (Some(total), Some(obj)) = (state.dealer_total(), out.as_object_mut()) {
                obj.insert("dealerTotal".into(), json!(total));
            }
            if actions.is_empty() && state.status() == Status::InProgress {
                ToolOutput::ok(out).with_note(PLAYER_TURN_NOTE)
            } else {
                common::list_output(out, actions.is_empty(), common::NO_DEALER_ACTIONS_NOTE)
            }
        }
        Err(e) => {
            let base = json!({
                "type": "opponent_choice",
                "gameType": GAME_TYPE,
                "actions": [],
                "policy": dealer_policy(),
            });
            ToolOutput::failed(common::with_error(base, e.message(), "invalid_state"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        registry()
            .call(name, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    const PLAYER_TURN: &str =
        "S:2S,3S|P:9S,7H@active@0@10|D:5D,QC|BK:1000|B:10|T:player|H:0|ST:in_progress|LA:deal|R:-";
    const DEALER_TURN: &str =
        "S:6S,KD|P:9S,8H@stood@0@10|D:5D,6C|BK:1000|B:10|T:dealer|H:0|ST:in_progress|LA:stand|R:-";

    #[test]
    fn new_game_has_the_documented_shape_and_is_seedable() {
        let out = call("new_blackjack_game", json!({"seed": 42}));
        assert!(!out.is_error);
        let s = &out.structured;
        assert_eq!(s["type"], "blackjack_snapshot");
        assert_eq!(s["gameType"], "blackjack");
        assert!(s["gameId"].as_str().unwrap().starts_with("g_"));
        assert_eq!(s["status"], "in_progress");
        assert_eq!(s["turn"], "player");
        assert_eq!(s["lastAction"], "deal");
        assert_eq!(s["handIndex"], 0);
        assert_eq!(s["stack"], 1000);
        assert_eq!(s["bet"], 10);
        let state: BlackjackState = s["state"].as_str().unwrap().parse().unwrap();
        assert_eq!(s["dealerUpCard"], state.dealer_cards()[0].to_string());
        assert_eq!(s["dealerHoleCardHidden"], true);
        assert!(s.get("dealerCards").is_none() && s.get("dealerTotal").is_none());
        assert_eq!(s["cardsInShoe"], 48);
        // Same seed, same deal; a different seed, a different one.
        let again = call("new_blackjack_game", json!({"seed": 42}));
        assert_eq!(again.structured["state"], s["state"]);
        let other = call("new_blackjack_game", json!({"seed": "42"}));
        assert_ne!(other.structured["state"], s["state"]);
    }

    #[test]
    fn hidden_hole_card_never_appears_in_derived_fields() {
        for seed in 0..200 {
            let out = call("new_blackjack_game", json!({"seed": seed}));
            let state: BlackjackState = out.structured["state"].as_str().unwrap().parse().unwrap();
            if !state.hole_card_hidden() {
                continue;
            }
            let hole = state.dealer_cards()[1].to_string();
            let mut visible = out.structured.clone();
            visible.as_object_mut().unwrap().remove("state");
            assert!(
                !visible.to_string().contains(&format!("\"{hole}\"")),
                "{seed}: {visible}"
            );
        }
    }

    #[test]
    fn new_game_bets() {
        let out = call("new_blackjack_game", json!({"stack": 6, "seed": 1}));
        assert_eq!(out.structured["bet"], 6);
        assert!(
            out.structured["state"]
                .as_str()
                .unwrap()
                .contains("|BK:6|B:6|")
        );
        let out = call("new_blackjack_game", json!({"stack": 50, "bet": 51}));
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "blackjack_snapshot", "gameType": "blackjack", "legal": false,
                   "stack": 50, "bet": 51, "error": "Bet must be between 1 and the stack.",
                   "reason": "invalid_bet"})
        );
        let err = registry()
            .call("new_blackjack_game", &json!({"bet": 0}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "bet"));
        let err = registry()
            .call("new_blackjack_game", &json!({"stack": "100"}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "stack"));
    }

    #[test]
    fn natural_at_deal_reports_results() {
        // Find a seed with a player natural to check the game-over snapshot.
        let out = (0..2000)
            .map(|seed| call("new_blackjack_game", json!({"seed": seed})))
            .find(|o| o.structured["status"] == "game_over")
            .expect("a natural within 2000 seeds");
        let s = &out.structured;
        assert_eq!(s["turn"], "dealer");
        assert_eq!(s["lastAction"], "deal");
        assert!(s["results"].is_array());
        assert_eq!(s["dealerHoleCardHidden"], false);
        assert_eq!(s["dealerCards"].as_array().unwrap().len(), 2);
        let net = s["net"].as_i64().unwrap();
        assert_eq!(s["stack"].as_i64().unwrap(), 1000 + net);
        assert!([-10, 0, 15].contains(&net));
    }

    #[test]
    fn apply_hit_and_stand_then_dealer_settles() {
        let out = call(
            "apply_blackjack_action",
            json!({"gameId": "g_1", "state": PLAYER_TURN, "action": "hit"}),
        );
        assert!(!out.is_error);
        let s = &out.structured;
        assert_eq!(s["gameId"], "g_1");
        assert_eq!(s["legal"], true);
        assert_eq!(
            s["state"],
            "S:3S|P:9S,7H,2S@active@0@10|D:5D,QC|BK:1000|B:10|T:player|H:0|ST:in_progress|LA:hit|R:-"
        );
        assert_eq!(s["turn"], "player");
        assert_eq!(s["lastAction"], "hit");
        assert_eq!(s["handIndex"], 0);
        assert_eq!(s["actor"], "player");
        assert_eq!(
            s["hands"][0],
            json!({"cards": ["9S", "7H", "2S"], "total": 18, "soft": false, "state": "active", "doubled": false, "bet": 10})
        );
        assert_eq!(s["dealerUpCard"], "5D");
        assert!(
            !s.to_string()
                .replace(s["state"].as_str().unwrap(), "")
                .contains("QC")
        );

        let out = call(
            "apply_blackjack_action",
            json!({"state": s["state"], "action": "stand"}),
        );
        let s = &out.structured;
        assert!(s.get("gameId").is_none());
        assert_eq!(s["turn"], "dealer");
        assert_eq!(s["dealerCards"], json!(["5D", "QC"]));
        assert_eq!(s["dealerTotal"], 15);
        // Dealer 15 hits the 3 -> 18, then stands: push at 18.
        let out = call(
            "apply_blackjack_action",
            json!({"state": s["state"], "action": "hit"}),
        );
        assert_eq!(out.structured["actor"], "dealer");
        assert_eq!(out.structured["dealerTotal"], 18);
        let out = call(
            "apply_blackjack_action",
            json!({"state": out.structured["state"], "action": "stand"}),
        );
        let s = &out.structured;
        assert_eq!(s["status"], "game_over");
        assert_eq!(s["results"], json!(["push"]));
        assert_eq!(s["winner"], "draw");
        assert_eq!(s["stack"], 1000);
        assert_eq!(s["net"], 0);
        assert!(
            s["state"]
                .as_str()
                .unwrap()
                .ends_with("|ST:game_over|LA:stand|R:push")
        );
    }

    #[test]
    fn illegal_actions_keep_the_state_and_say_why() {
        let cases = [
            (DEALER_TURN, "double", "Illegal action.", "not_your_turn"),
            (DEALER_TURN, "stand", "Illegal action.", "not_allowed"),
            (PLAYER_TURN, "split", "Illegal action.", "not_allowed"),
            (
                "S:|P:9S,7H@active@0@10|D:5D,QC|BK:1000|B:10|T:player|H:0|ST:in_progress|LA:deal|R:-",
                "hit",
                "Shoe is empty.",
                "shoe_empty",
            ),
            (
                "S:2C|P:9S,8H@stood@0@10|D:5D,QC|BK:1010|B:10|T:dealer|H:0|ST:game_over|LA:stand|R:win",
                "hit",
                "Illegal action.",
                "game_over",
            ),
        ];
        for (state, action, error, reason) in cases {
            let out = call(
                "apply_blackjack_action",
                json!({"gameId": "g_2", "state": state, "action": action}),
            );
            assert!(out.is_error, "{state} {action}");
            let s = &out.structured;
            assert_eq!(s["legal"], false);
            assert_eq!(s["state"], state);
            assert_eq!(s["error"], error);
            assert_eq!(s["reason"], reason);
            assert_eq!(s["gameId"], "g_2");
            let parsed: BlackjackState = state.parse().unwrap();
            assert_eq!(s["status"], parsed.status().as_str());
            assert_eq!(s["turn"], parsed.turn().as_str());
        }
    }

    #[test]
    fn unparsable_states_are_reported() {
        let out = call(
            "apply_blackjack_action",
            json!({"state": "garbage", "action": "hit"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "blackjack_snapshot", "gameType": "blackjack", "legal": false,
                   "state": "garbage", "reason": "invalid_state",
                   "error": "Invalid state: expected 10 fields separated by '|' (S, P, D, BK, B, T, H, ST, LA, R), found 1"})
        );
        let out = call("legal_blackjack_actions", json!({"state": "garbage"}));
        assert!(out.is_error);
        assert_eq!(out.structured["actions"], json!([]));
        assert_eq!(out.structured["reason"], "invalid_state");
        assert!(
            out.structured["error"]
                .as_str()
                .unwrap()
                .starts_with("Invalid state: ")
        );
        let out = call(
            "choose_blackjack_dealer_action",
            json!({"state": "garbage"}),
        );
        assert!(out.is_error);
        assert_eq!(out.structured["actions"], json!([]));
        assert_eq!(out.structured["reason"], "invalid_state");
        // A wrong action name is a schema error.
        let err = registry()
            .call(
                "apply_blackjack_action",
                &json!({"state": PLAYER_TURN, "action": "fold"}),
            )
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "action"));
    }

    #[test]
    fn legal_actions_lists_in_order() {
        let out = call(
            "legal_blackjack_actions",
            json!({"state": "S:2C,3C|P:8S,8H@active@0@10|D:5D,QC|BK:1000|B:10|T:player|H:0|ST:in_progress|LA:deal|R:-"}),
        );
        assert_eq!(
            out.structured,
            json!({"type": "legal_actions", "gameType": "blackjack",
                   "actions": ["hit", "stand", "double", "split"], "turn": "player",
                   "handIndex": 0, "status": "in_progress"})
        );
        assert!(out.notes.is_empty());
        let out = call("legal_blackjack_actions", json!({"state": DEALER_TURN}));
        assert_eq!(out.structured["actions"], json!(["hit"]));
        assert_eq!(out.structured["turn"], "dealer");
        let over =
            "S:2C|P:9S,8H@stood@0@10|D:5D,QC|BK:1010|B:10|T:dealer|H:0|ST:game_over|LA:stand|R:win";
        let out = call("legal_blackjack_actions", json!({"state": over}));
        assert!(!out.is_error);
        assert_eq!(out.structured["actions"], json!([]));
        assert_eq!(out.notes, vec![common::NO_MOVES_NOTE.to_string()]);
    }

    #[test]
    fn dealer_choice_has_the_documented_policy() {
        let policy = json!({
            "mustChooseFromActions": true,
            "chooseExactlyOne": true,
            "mustNotRevealDealerHoleCardInChat": true,
            "dealerHoleCardVisibility": "hidden_until_dealer_turn_or_game_over"
        });
        let out = call(
            "choose_blackjack_dealer_action",
            json!({"state": DEALER_TURN}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "opponent_choice", "gameType": "blackjack", "actions": ["hit"],
                   "policy": policy, "turn": "dealer", "status": "in_progress", "dealerTotal": 11})
        );
        assert!(out.notes.is_empty());
        // Player's turn: empty, no dealer total (the hole card is hidden).
        let out = call(
            "choose_blackjack_dealer_action",
            json!({"state": PLAYER_TURN}),
        );
        assert!(!out.is_error);
        assert_eq!(out.structured["actions"], json!([]));
        assert_eq!(out.structured["policy"], policy);
        assert!(out.structured.get("dealerTotal").is_none());
        assert_eq!(out.notes, vec![PLAYER_TURN_NOTE.to_string()]);
        // Game over: empty with the dealer note.
        let over =
            "S:2C|P:9S,8H@stood@0@10|D:5D,QC|BK:1010|B:10|T:dealer|H:0|ST:game_over|LA:stand|R:win";
        let out = call("choose_blackjack_dealer_action", json!({"state": over}));
        assert_eq!(out.structured["actions"], json!([]));
        assert_eq!(out.notes, vec![common::NO_DEALER_ACTIONS_NOTE.to_string()]);
    }

    #[test]
    fn baseline_actions_follow_the_chart_and_the_legal_actions() {
        let state = |hand: &str, up: &str, stack: u64| {
            format!(
                "S:2S,3S|P:{hand}@active@0@10|D:{up}|BK:{stack}|B:10|T:player|H:0|ST:in_progress|LA:deal|R:-"
            )
        };
        let basic = |s: &str| baseline_action(s, Baseline::BasicStrategy);
        let stand = |s: &str| baseline_action(s, Baseline::AlwaysStand);
        // Hard 11 against a 6: basic strategy doubles; without the stack for it, hits.
        let eleven = state("6S,5H", "6D,QC", 1000);
        assert_eq!(basic(&eleven), Ok("double".to_string()));
        assert_eq!(stand(&eleven), Ok("stand".to_string()));
        assert_eq!(basic(&state("6S,5H", "6D,QC", 10)), Ok("hit".to_string()));
        // A pair of 8s against a ten splits; hard 16 against a ten hits; against a 6 stands.
        assert_eq!(
            basic(&state("8S,8H", "TD,7C", 1000)),
            Ok("split".to_string())
        );
        assert_eq!(basic(&state("9S,7H", "TD,7C", 1000)), Ok("hit".to_string()));
        assert_eq!(
            basic(&PLAYER_TURN.replace("5D", "6D")),
            Ok("stand".to_string())
        );
        // Soft 18 against a 9 hits.
        assert_eq!(basic(&state("AS,7H", "9D,7C", 1000)), Ok("hit".to_string()));
        // Every answer is accepted by apply_blackjack_action.
        for s in [eleven.as_str(), PLAYER_TURN, DEALER_TURN] {
            for action in [basic(s).unwrap(), stand(s).unwrap()] {
                let out = call(
                    "apply_blackjack_action",
                    json!({"state": s, "action": action}),
                );
                assert!(!out.is_error, "{s} {action}: {}", out.structured);
            }
        }
        // The dealer's turn: the dealer's only action, for both.
        assert_eq!(basic(DEALER_TURN), Ok("hit".to_string()));
        assert_eq!(stand(DEALER_TURN), Ok("hit".to_string()));
        // Game over and garbage are errors.
        let over =
            "S:2C|P:9S,8H@stood@0@10|D:5D,QC|BK:1010|B:10|T:dealer|H:0|ST:game_over|LA:stand|R:win";
        assert_eq!(basic(over), Err("Illegal action. (game_over)".to_string()));
        assert_eq!(stand(over), Err("Illegal action. (game_over)".to_string()));
        let err = basic("garbage").unwrap_err();
        assert!(err.starts_with("Invalid state: "), "{err}");
    }

    #[test]
    fn baselines_play_whole_rounds_through_the_tools() {
        for seed in 0..100u64 {
            for baseline in [Baseline::BasicStrategy, Baseline::AlwaysStand] {
                let out = call("new_blackjack_game", json!({"seed": seed}));
                let mut s = out.structured;
                let mut steps = 0;
                while s["status"] != "game_over" {
                    let state = s["state"].as_str().unwrap().to_string();
                    let action = baseline_action(&state, baseline).unwrap();
                    let listed = call("legal_blackjack_actions", json!({"state": state}));
                    assert!(
                        listed.structured["actions"]
                            .as_array()
                            .unwrap()
                            .contains(&json!(action)),
                        "{state} {action}"
                    );
                    let out = call(
                        "apply_blackjack_action",
                        json!({"state": state, "action": action}),
                    );
                    assert!(!out.is_error, "{state} {action}: {}", out.structured);
                    s = out.structured;
                    steps += 1;
                    assert!(steps < 100);
                }
                let last = s["state"].as_str().unwrap();
                assert!(baseline_action(last, baseline).is_err());
            }
        }
    }

    #[test]
    fn seeded_playouts_through_the_tools() {
        for seed in 0..60u64 {
            let out = call(
                "new_blackjack_game",
                json!({"seed": seed, "stack": 100, "bet": 10}),
            );
            let mut state = out.structured["state"].as_str().unwrap().to_string();
            let mut status = out.structured["status"].as_str().unwrap().to_string();
            let mut pick = seed;
            let mut steps = 0;
            while status != "game_over" {
                let listed = call("legal_blackjack_actions", json!({"state": state}));
                let actions = listed.structured["actions"].as_array().unwrap().clone();
                let action = if listed.structured["turn"] == "dealer" {
                    let choice = call("choose_blackjack_dealer_action", json!({"state": state}));
                    assert_eq!(choice.structured["actions"], json!(actions));
                    actions[0].clone()
                } else {
                    pick = pick
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    actions[(pick >> 33) as usize % actions.len()].clone()
                };
                let out = call(
                    "apply_blackjack_action",
                    json!({"state": state, "action": action}),
                );
                assert!(!out.is_error, "{state} {action}: {}", out.structured);
                state = out.structured["state"].as_str().unwrap().to_string();
                status = out.structured["status"].as_str().unwrap().to_string();
                steps += 1;
                assert!(steps < 100);
            }
        }
    }
}
