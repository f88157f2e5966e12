//! How a game of the game tools is declared: one [`GameDecl`] in the game's own module, listed
//! once in [`GAMES`](super::GAMES).
//!
//! A declaration holds the game's name, which of its tools exist ([`ToolKind`]), the words its
//! tool names use, and, for a two-player board game, what the game app and the AI-vs-AI demo need
//! to drive it ([`BoardDecl`]). The tools' names follow from the name by one convention,
//! [`GameDecl::tool`]; the registration, the game apps, `GameTools.games()` and the tests all
//! read them from there.

use serde_json::Value;

use crate::tools::ToolRegistry;

crate::wire_enum! {
    /// A kind of game tool. Its name follows from the game's name and words
    /// ([`GameDecl::tool`]); its own name (`new`, `apply`, …) is the key of the tool's name in
    /// `GameTools.games()`. `ALL` lists them in the order a game's tools are listed.
    pub enum ToolKind: "tool kind" {
        /// `new_<game>_game`: starts a game.
        New = "new",
        /// `apply_<game>_<noun>`: plays one move (or action) on a state.
        Apply = "apply",
        /// `legal_<game>_<noun>s`: lists the legal moves of the side to move (read-only).
        Legal = "legal",
        /// `choose_<game>_<rival>_<noun>`: the other side's candidates, best first (read-only).
        Choose = "choose",
        /// `suggest_<game>_<noun>`: the built-in AI's pick (read-only; searches within
        /// `timeMs`).
        Suggest = "suggest",
        /// `spin_<game>`: one spin of a slot machine.
        Spin = "spin",
        /// `roll_<game>`: one roll of dice.
        Roll = "roll",
    }
}

impl ToolKind {
    /// The kind's short name (`new`, `apply`, `legal`, `choose`, `suggest`, `spin`, `roll`): the
    /// key of the tool's name in `GameTools.games()` (its wire name, [`ToolKind::as_str`]).
    pub const fn key(self) -> &'static str {
        self.as_str()
    }
}

/// The tools of a two-player board game: `new_*`, `apply_*`, `legal_*`, `choose_*` and the
/// built-in AI's `suggest_*`.
pub const BOARD_TOOLS: &[ToolKind] = &[
    ToolKind::New,
    ToolKind::Apply,
    ToolKind::Legal,
    ToolKind::Choose,
    ToolKind::Suggest,
];

/// One game of the game tools, declared once in its own module.
#[derive(Debug)]
pub struct GameDecl {
    /// The game's name (`tic_tac_toe`): the `gameType` of its tools' answers, the middle of
    /// its tools' names, and the game app's `game.name`.
    pub name: &'static str,
    /// Which tools it has, in the order they are listed.
    pub tools: &'static [ToolKind],
    /// What its tools call one play: `move` (`apply_chess_move`) or `action`
    /// (`apply_blackjack_action`).
    pub noun: &'static str,
    /// Who [`ToolKind::Choose`] chooses for: `opponent` (`choose_chess_opponent_move`) or
    /// `dealer` (`choose_blackjack_dealer_action`).
    pub rival: &'static str,
    /// Whether it is played for chips: its `new_*` tool takes `stack` and `bet`.
    pub stakes: bool,
    /// A two-player board game's fields, as the game app and the AI-vs-AI demo drive it; `None`
    /// for a house game (blackjack, the slot machine, the dice).
    pub board: Option<&'static BoardDecl>,
    /// Registers its tools (each named by [`GameDecl::tool`]).
    pub(super) register: fn(&mut ToolRegistry),
}

/// What drives a two-player board game through its tools: where the position and the moves are,
/// which side the agent plays, what the agent must not see, and the game app's `move` action.
#[derive(Debug)]
pub struct BoardDecl {
    /// The argument (and answer field) holding the position: `state`, or `fen` in chess.
    pub position_field: &'static str,
    /// The move's argument of `apply_*`: `coord`, `column`, `move`, `moveUci`, `pit`.
    pub move_arg: &'static str,
    /// The field of `legal_*`'s answer listing the moves: `moves`, or `movesUci` in chess.
    pub legal_field: &'static str,
    /// The `turn` (and `winner`) values of the two sides, the side that moves first first:
    /// `["player", "opponent"]`, or `["w", "b"]` in chess and checkers. The game app's agent
    /// plays the first unless its setup says `side: "second"`.
    pub sides: [&'static str; 2],
    /// The depth the built-in AI searches to at `hard` in the game app and as the arena's
    /// `engine:hard` (`maxDepth`): a fixed depth makes it reproducible — the same position and
    /// seed give the same move on any machine, under any load — where a time budget would not.
    /// Chosen to take tens of milliseconds in a release build. `None` where `hard` does not
    /// search (tic-tac-toe's perfect play, sea battle's odds).
    pub hard_depth: Option<u32>,
    /// Parts of the state string (`|`-separated, by their `KEY:` prefix) the agent must not
    /// see: the opponent's fleet in sea battle. A game with hidden parts has no human opponent in
    /// the game app (each side would need a view of its own).
    pub hidden: &'static [&'static str],
    /// The JSON Schema of the game app's `move` argument.
    pub move_schema: fn() -> Value,
    /// What the game app's `move` action is, for the model.
    pub move_description: &'static str,
}

impl GameDecl {
    /// A two-player board game called `name`: the [`BOARD_TOOLS`], moves against an opponent,
    /// no stakes.
    pub(super) const fn board(
        name: &'static str,
        board: &'static BoardDecl,
        register: fn(&mut ToolRegistry),
    ) -> GameDecl {
        GameDecl {
            name,
            tools: BOARD_TOOLS,
            noun: "move",
            rival: "opponent",
            stakes: false,
            board: Some(board),
            register,
        }
    }

    /// A house game called `name` with the `tools` (their plays called `move`, against an
    /// `opponent`), played for chips when `stakes`.
    pub(super) const fn house(
        name: &'static str,
        tools: &'static [ToolKind],
        stakes: bool,
        register: fn(&mut ToolRegistry),
    ) -> GameDecl {
        GameDecl {
            name,
            tools,
            noun: "move",
            rival: "opponent",
            stakes,
            board: None,
            register,
        }
    }

    /// The name of its `kind` tool, by the one convention of the game tools (see
    /// [`ToolKind`]): `new_<name>_game`, `apply_<name>_<noun>`, `legal_<name>_<noun>s`,
    /// `choose_<name>_<rival>_<noun>`, `suggest_<name>_<noun>`, `spin_<name>`, `roll_<name>`.
    ///
    /// A kind the game does not have (not in [`GameDecl::tools`]) is a programming error: debug
    /// builds panic.
    pub fn tool(&self, kind: ToolKind) -> String {
        debug_assert!(self.has(kind), "{} has no {} tool", self.name, kind.key());
        let (game, noun, rival) = (self.name, self.noun, self.rival);
        match kind {
            ToolKind::New => format!("new_{game}_game"),
            ToolKind::Apply => format!("apply_{game}_{noun}"),
            ToolKind::Legal => format!("legal_{game}_{noun}s"),
            ToolKind::Choose => format!("choose_{game}_{rival}_{noun}"),
            ToolKind::Suggest => format!("suggest_{game}_{noun}"),
            ToolKind::Spin => format!("spin_{game}"),
            ToolKind::Roll => format!("roll_{game}"),
        }
    }

    /// Whether it has a `kind` tool.
    pub fn has(&self, kind: ToolKind) -> bool {
        self.tools.contains(&kind)
    }

    /// The names of its tools, in [`GameDecl::tools`] order.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|&kind| self.tool(kind)).collect()
    }

    /// Registers its tools into `registry`.
    ///
    /// # Panics
    ///
    /// Only on a programming error in a built-in tool definition (duplicate name or invalid
    /// schema), which the test suite catches.
    pub fn register(&self, registry: &mut ToolRegistry) {
        (self.register)(registry);
    }
}
