//! Tabletop campaigns and the game master's tools: the campaign format, the GM tools and the
//! tool-call contract a GM turn follows (`docs/campaigns.md`).
//!
//! A campaign is a party of actors on a map of areas with **directed** reachability, an
//! allowlist of GM tools, a goal and a milestone, kept in one `campaign.json` that a file written
//! by the reference GM backend loads from unchanged and that it loads from in turn.
//!
//! - [`Campaign`] is the data; [`Campaign::from_json`] reads it (defaults, the migration of the
//!   older `positions` / `hp` / `character_states` layout, normalisation, every problem listed)
//!   and [`Campaign::to_json`] writes it (`connections` derived from the reachable lists).
//! - [`file`] loads and saves files; a save is atomic (a crash mid-save leaves the previous file),
//!   and an invalid map is never saved. [`dir`] is the way in for file names from untrusted
//!   callers (WebSocket, MCP): regular campaign files inside one campaign directory only.
//! - [`gm`] runs the GM tools (`move`, `move_options`, `hp_delta`, `map_generate`) on a
//!   campaign: a batch for a turn actor, each call through the allowlist, the actor's state and
//!   its arguments, in that order ([`Campaign::run_calls`]).
//! - [`page`] cuts a campaign into pages that fit a reply's byte budget; every campaign loaded
//!   is within the size limits of `bounds` (areas, actors, bytes per entry), so a page always
//!   holds at least one area or actor.
//! - [`map`] holds the areas and their validity rules; [`pyrandom`] is CPython's string-seeded
//!   Mersenne Twister, so `map_generate` builds the same dungeon from the same seed as the
//!   reference.
//!
//! Nothing here knows Godot, the runtime or the network: the surfaces (the `Campaign` resource,
//! `agents-server campaign`, the protocol) call into this module.

mod bounds;
pub mod dir;
pub mod file;
pub mod file_tools;
mod generate;
pub mod gm;
pub mod ground;
mod load;
pub mod map;
pub mod page;
pub mod pyrandom;
pub mod turn;
mod view;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use gm::{AppliedAction, BatchOutcome, Effect, GmTool, ToolFeedback};
pub use load::Loaded;
pub use map::{Area, CampaignMap, Connection};

/// The GM tools a campaign allows unless its file says otherwise.
pub const DEFAULT_ALLOWLIST: [&str; 4] = ["move", "hp_delta", "map_generate", "move_options"];

/// The character states a turn actor may be in (`docs/campaigns.md`, "The GM tools").
pub const CHARACTER_STATES: [&str; 5] = [
    "alive",
    "dying",
    "unconscious",
    "restrained_permanent",
    "dead",
];

/// The hp an actor gets when none (or no integer) is known.
pub const DEFAULT_HP: i64 = 10;

/// What went wrong with a campaign.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// The file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        message: String,
    },
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    Json(String),
    /// The campaign breaks its rules; every problem is listed.
    #[error("invalid campaign: {}", .0.join("; "))]
    Invalid(Vec<String>),
    /// A turn names an actor outside the party (the whole turn fails).
    #[error("turn actor '{actor}' is not in the party ({party})")]
    NotInParty {
        /// The actor named.
        actor: String,
        /// The party, comma-separated.
        party: String,
    },
    /// A client named a campaign file, but the server has no campaign directory.
    #[error(
        "this server has no campaign directory (start it with --campaign-dir DIR), so campaign \
         files cannot be named"
    )]
    NoCampaignDir,
    /// A file name refused before the file system is asked: empty, absolute, with `..`, or
    /// longer than [`crate::limits::MAX_CAMPAIGN_PATH_CHARS`].
    #[error(
        "path '{0}' must be relative to the campaign directory, without '..', and at most \
         {max} characters long",
        max = crate::limits::MAX_CAMPAIGN_PATH_CHARS
    )]
    PathNotRelative(String),
    /// No campaign file of that name inside the campaign directory: nothing there, or a
    /// symlink that leads out of it (the two are not told apart).
    #[error("no file '{0}' inside the campaign directory")]
    NoSuchFile(String),
    /// The name is inside the directory but not a regular file.
    #[error("'{path}' is {kind}, not a regular file")]
    NotRegularFile {
        /// The name as given.
        path: String,
        /// `a directory`, `a FIFO`, `a device`, `a socket`, `a symlink`.
        kind: &'static str,
    },
    /// The file is longer than [`crate::limits::MAX_CAMPAIGN_FILE_BYTES`].
    #[error("'{path}' is {bytes} bytes long; the limit is {limit}")]
    TooLarge {
        /// The name as given.
        path: String,
        /// Its length (at least this).
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// JSON that is not a campaign file: refused, and never overwritten.
    #[error(
        "'{0}' is not a campaign file (it needs a string id and one of selected, map, actors); \
         it is left as it is"
    )]
    NotACampaign(String),
}

impl CampaignError {
    /// The `reason` a GM tool on a file reports for this error: `invalid_path` when the file
    /// name is refused, `invalid_campaign` when the file cannot be read as a campaign.
    pub fn file_reason(&self) -> &'static str {
        self.file_code().as_str()
    }

    /// The code of a campaign file tool's failure: `invalid_path` for a path the caller may not
    /// use, `invalid_campaign` for a file that cannot be used.
    pub fn file_code(&self) -> crate::error_code::ErrorCode {
        use crate::error_code::ErrorCode;
        match self {
            CampaignError::NoCampaignDir
            | CampaignError::PathNotRelative(_)
            | CampaignError::NoSuchFile(_)
            | CampaignError::NotRegularFile { .. } => ErrorCode::InvalidPath,
            _ => ErrorCode::InvalidCampaign,
        }
    }
}

/// `selected`: which world, map, party and active actor the campaign plays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Selected {
    /// `world_001`.
    pub world_id: String,
    /// `map_001`.
    pub map_id: String,
    /// The party, in order; never empty, and holding the active actor.
    pub party_character_ids: Vec<String>,
    /// Whose turn it is unless a turn names another party member.
    pub active_actor_id: String,
}

/// One actor (a party member or anyone else on the map), serialized as the file holds it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Actor {
    /// The area it is in, if any (always an existing area).
    pub position: Option<String>,
    /// Hit points: no maximum, never below 0.
    pub hp: i64,
    /// `alive`, `dying`, `unconscious`, `restrained_permanent`, `dead` — or anything a file
    /// says, which makes its calls `invalid_actor_state`.
    pub character_state: String,
    /// Free-form data kept as it is.
    pub meta: Map<String, Value>,
}

impl Actor {
    /// An alive actor with [`DEFAULT_HP`] at `position`.
    pub fn new(position: Option<String>) -> Actor {
        Actor {
            position,
            hp: DEFAULT_HP,
            character_state: "alive".into(),
            meta: Map::new(),
        }
    }
}

/// `goal`: `{text, status}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Goal {
    /// What the party is after.
    pub text: String,
    /// `active`, or what the GM made of it.
    pub status: String,
}

impl Default for Goal {
    fn default() -> Self {
        Goal {
            text: "Define the main objective".into(),
            status: "active".into(),
        }
    }
}

/// `milestone`: `{current, last_advanced_turn}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Milestone {
    /// `intro`, …
    pub current: String,
    /// The turn it last moved on at.
    pub last_advanced_turn: i64,
}

impl Default for Milestone {
    fn default() -> Self {
        Milestone {
            current: "intro".into(),
            last_advanced_turn: 0,
        }
    }
}

/// A campaign (`campaign.json`).
#[derive(Clone, Debug, PartialEq)]
pub struct Campaign {
    /// `camp_0001`.
    pub id: String,
    /// World, map, party and active actor.
    pub selected: Selected,
    /// Settings as the file has them; [`Campaign::hp_zero_ends_game`] reads the one rule used.
    pub settings_snapshot: Map<String, Value>,
    /// How often the settings changed.
    pub settings_revision: i64,
    /// The GM tools that may be called.
    pub allowlist: Vec<String>,
    /// The areas.
    pub map: CampaignMap,
    /// The actors, by id.
    pub actors: BTreeMap<String, Actor>,
    /// The party's objective.
    pub goal: Goal,
    /// Where the story is.
    pub milestone: Milestone,
    /// When it was created (UTC ISO 8601, `+00:00`).
    pub created_at: String,
}

/// The settings a campaign gets unless its file says otherwise.
pub fn default_settings() -> Map<String, Value> {
    let value = json!({
        "context": {"full_context_enabled": true, "compress_enabled": false},
        "rules": {"hp_zero_ends_game": true},
        "rollback": {"max_checkpoints": 0},
        "dialog": {"auto_type_enabled": true},
    });
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl Campaign {
    /// A fresh campaign: the starter map, `party` (default `["pc_001"]`) in `area_001` with 10 hp.
    pub fn new(id: impl Into<String>, party: &[String]) -> Campaign {
        let party: Vec<String> = if party.is_empty() {
            vec!["pc_001".into()]
        } else {
            party.to_vec()
        };
        let actors = party
            .iter()
            .map(|id| (id.clone(), Actor::new(Some("area_001".into()))))
            .collect();
        Campaign {
            id: id.into(),
            selected: Selected {
                world_id: "world_001".into(),
                map_id: "map_001".into(),
                active_actor_id: party[0].clone(),
                party_character_ids: party,
            },
            settings_snapshot: default_settings(),
            settings_revision: 0,
            allowlist: DEFAULT_ALLOWLIST.iter().map(|s| s.to_string()).collect(),
            map: CampaignMap::starter(),
            actors,
            goal: Goal::default(),
            milestone: Milestone::default(),
            created_at: crate::time::now_iso_micros(),
        }
    }

    /// `settings_snapshot.rules.hp_zero_ends_game` (default on): hp 0 makes an actor `dying`.
    pub fn hp_zero_ends_game(&self) -> bool {
        self.settings_snapshot
            .get("rules")
            .and_then(|r| r.get("hp_zero_ends_game"))
            .and_then(Value::as_bool)
            .unwrap_or(true)
    }

    /// The actor's state, `alive` for an actor without a record.
    pub fn state_of(&self, actor_id: &str) -> &str {
        self.actors
            .get(actor_id)
            .map_or("alive", |a| a.character_state.as_str())
    }

    /// Every problem that stops it from being saved (the map's, and positions naming missing
    /// areas). Empty: valid.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = self.map.problems();
        for (id, actor) in &self.actors {
            if let Some(position) = &actor.position
                && !self.map.contains(position)
            {
                problems.push(format!("actor:{id}:position_missing_area"));
            }
            if actor.hp < 0 {
                problems.push(format!("actor:{id}:hp_negative"));
            }
        }
        problems
    }
}
