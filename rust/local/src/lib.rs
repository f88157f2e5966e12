//! On-device models: llama.cpp inside the process, for agents that think without a server.
//!
//! # Design
//!
//! - **One loaded model per file** ([`Models`]): every agent naming a file shares one
//!   [`Model`], so its weights are in memory once; it is unloaded when its last agent leaves
//!   (or kept, if asked).
//! - **One thread per model** ([`worker`]) owns llama.cpp's context, as NobodyWho keeps its
//!   model behind a channel; brains send it jobs and read events. Unlike one inference lock
//!   per model, the thread decodes the answers of many agents **together**: each agent has a
//!   sequence of the context ([`ModelSettings::sequences`]), and every step is one batch with
//!   the next tokens of every running answer.
//! - **Each agent's prompt stays cached** in its sequence between its decisions: a new prompt
//!   evaluates only what follows the longest prefix it shares with the last one
//!   ([`Outcome::cached_tokens`]). **What agents' prompts share is read once**: a prompt that
//!   begins like what another sequence holds copies that prefix from it
//!   ([`Outcome::shared_tokens`]).
//! - **Threads leave the game a core** ([`settings::default_threads`]), and `gpu_layers` is
//!   honoured or refused, never dropped without a word ([`gpu`]).
//! - **Every answer is constrained while it is generated** ([`sampler`]): given a JSON Schema,
//!   only tokens that keep the answer valid can be chosen (llguidance's grammar over the model's
//!   vocabulary), answers are compact JSON, and tokens the grammar forces are taken without
//!   sampling.
//! - **Parties take turns** ([`queue`]): waiting answers get free sequences round-robin
//!   between the parties they are for (each connection, the game), so one party's backlog
//!   cannot starve another's; an answer may be given a time limit ([`Job::timeout`]).
//! - **Text streams** as it is generated ([`Event::Text`]), and **dropping the [`Answer`]
//!   cancels** it: a waiting one leaves the queue at once, a running one stops before the next
//!   decode step.
//!
//! - **Model files can come from a URL** ([`download`]): downloaded once into a cache,
//!   resumed after a cut, used only when their SHA-256 is the one asked for.
//!
//! Nothing here knows agents or Godot: the core crate's `local` provider turns an agent's
//! context into a [`Job`] and its answer into the tool-call contract.

pub mod download;
pub mod error;
pub mod event;
pub mod gpu;
pub mod models;
pub mod queue;
pub mod sampler;
pub mod settings;
pub mod worker;

pub use download::{Downloads, Filling, Progress, Source};
pub use error::LocalError;
pub use event::{Event, Outcome};
pub use models::{Model, Models};
pub use queue::Answer;
pub use settings::{ChatMessage, Job, ModelSettings, Sampling};
pub use worker::{ModelInfo, backend};
