//! Who plays: a brain profile (an agent deciding through the app bridge) or a built-in engine.

use std::fmt;

use crate::apps::games::GameKind;

/// The prefix of an engine player's name (`engine:hard`).
pub const ENGINE_PREFIX: &str = "engine:";

/// The engines of a two-player board game: the built-in AI at its three levels, weakest first.
pub const BOARD_ENGINES: &[&str] = &["random", "easy", "hard"];

/// The engines of blackjack: basic strategy and always stand (the baselines).
pub const BLACKJACK_ENGINES: &[&str] = &["basic", "stand"];

/// The engine of the slot machine: it spins (the only play there is).
pub const SLOT_ENGINES: &[&str] = &["spin"];

/// One player of a tournament.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Player {
    /// A built-in engine: its level (`random`, `easy`, `hard`; `basic`, `stand`; `spin`).
    Engine(String),
    /// A brain: a profile name (`--brains FILE`) or a registered brain (`scripted`). It plays
    /// as an agent attached to the game's app.
    Brain(String),
}

impl Player {
    /// Reads a player's name for `game`: `engine:<level>` (a level of the game's engines) or a
    /// brain's name (checked against the runtime's brains by the arena). Errors name it.
    pub fn parse(name: &str, game: &GameKind) -> Result<Player, String> {
        let name = name.trim();
        if name.is_empty() {
            return Err("a player's name is empty".into());
        }
        match name.strip_prefix(ENGINE_PREFIX) {
            Some(level) => {
                let engines = engines_of(game);
                if engines.contains(&level) {
                    Ok(Player::Engine(level.to_string()))
                } else {
                    Err(format!(
                        "unknown player '{name}': {} has the engines {}",
                        game.name,
                        engines
                            .iter()
                            .map(|e| format!("{ENGINE_PREFIX}{e}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            }
            None => Ok(Player::Brain(name.to_string())),
        }
    }

    /// Whether it is a brain.
    pub fn is_brain(&self) -> bool {
        matches!(self, Player::Brain(_))
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Player::Engine(level) => write!(f, "{ENGINE_PREFIX}{level}"),
            Player::Brain(name) => f.write_str(name),
        }
    }
}

/// The engine levels `game` has.
pub fn engines_of(game: &GameKind) -> &'static [&'static str] {
    if game.levels {
        BOARD_ENGINES
    } else if game.name == crate::tools::games::blackjack::GAME.name {
        BLACKJACK_ENGINES
    } else {
        SLOT_ENGINES
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::games::game;

    #[test]
    fn engines_and_brains_are_told_apart_and_a_wrong_engine_is_named() {
        let chess = game("chess").unwrap();
        assert_eq!(
            Player::parse("engine:hard", chess).unwrap(),
            Player::Engine("hard".into())
        );
        assert_eq!(
            Player::parse(" gemma ", chess).unwrap(),
            Player::Brain("gemma".into())
        );
        assert_eq!(
            Player::parse("engine:easy", chess).unwrap().to_string(),
            "engine:easy"
        );
        let e = Player::parse("engine:basic", chess).unwrap_err();
        assert_eq!(
            e,
            "unknown player 'engine:basic': chess has the engines engine:random, engine:easy, \
             engine:hard"
        );
        let blackjack = game("blackjack").unwrap();
        assert!(Player::parse("engine:basic", blackjack).is_ok());
        assert!(Player::parse("engine:hard", blackjack).is_err());
        assert!(Player::parse("", chess).is_err());
    }
}
