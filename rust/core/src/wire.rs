//! Wire vocabularies: enums whose values travel as fixed names (`idle`, `copilot`,
//! `unknown_agent`) on every surface — the WebSocket protocol, the Godot API, the database, MCP,
//! the command line.
//!
//! [`wire_enum!`](crate::wire_enum) declares one with each value's wire name written once, and
//! derives everything else from it: `as_str`, `ALL` and `NAMES` (declaration order), `Display`,
//! `FromStr` (an [`UnknownName`] listing the names), serde (de)serialization by the wire name and
//! the JSON Schema (`oneOf` the names, each described by its value's doc comment).
//!
//! This module is a leaf: it imports nothing of the crate, so every module (and the Godot
//! extension, through `agents_core::wire_enum!`) can declare its vocabularies with it.

use std::fmt;

/// A text that is none of a vocabulary's names: `unknown control mode 'pilot' (use agent,
/// human, copilot)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What the vocabulary names (`control mode`).
    pub what: &'static str,
    /// The text given.
    pub given: String,
    /// Every name the vocabulary has, in declaration order.
    pub names: &'static [&'static str],
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} '{}' (use {})",
            self.what,
            self.given,
            self.names.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

impl From<UnknownName> for String {
    fn from(error: UnknownName) -> String {
        error.to_string()
    }
}

/// What the macros' expansions name, so that a crate using them needs no dependency of its own
/// for it. Not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
}

/// Declares a wire vocabulary: an enum whose values each have a wire name, written once.
///
/// ```
/// agents_core::wire_enum! {
///     /// How loud a line is.
///     #[derive(Default)]
///     pub enum Volume: "volume" {
///         /// Only the nearest hear it.
///         #[default]
///         Whisper = "whisper",
///         /// Everyone around hears it.
///         Shout = "shout",
///     }
/// }
/// assert_eq!(Volume::Shout.as_str(), "shout");
/// assert_eq!("whisper".parse::<Volume>(), Ok(Volume::Whisper));
/// assert_eq!(
///     "hum".parse::<Volume>().unwrap_err().to_string(),
///     "unknown volume 'hum' (use whisper, shout)"
/// );
/// assert_eq!(Volume::ALL, [Volume::Whisper, Volume::Shout]);
/// ```
///
/// The enum derives `Clone, Copy, Debug, PartialEq, Eq, Hash` and serde's and schemars'
/// traits (so the declaring crate depends on `serde` and `schemars`); give further derives
/// (`Default`, `PartialOrd`, …) as attributes. The string after the name is what an error calls
/// the vocabulary. It generates:
///
/// - `ALL`: every value, and `NAMES`: every wire name, both in declaration order;
/// - `as_str` (a `const fn`), `Display` (the wire name), and `from_name` (`None` for any other
///   text);
/// - `FromStr`, whose error ([`UnknownName`]) lists the names;
/// - serde: the value is its wire name (an unknown one is serde's "unknown variant" error,
///   listing the names), and its JSON Schema lists the names, each described by its doc
///   comment.
#[macro_export]
macro_rules! wire_enum {
    (@count) => { 0usize };
    (@count $head:ident $($tail:ident)*) => { 1usize + $crate::wire_enum!(@count $($tail)*) };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, ::serde::Serialize, ::serde::Deserialize,
            ::schemars::JsonSchema,
        )]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $wire)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; $crate::wire_enum!(@count $($variant)+)] =
                [$($name::$variant),+];

            /// Every value's wire name, in declaration order.
            pub const NAMES: [&'static str; $crate::wire_enum!(@count $($variant)+)] =
                [$($wire),+];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }

            /// The value of a wire name; `None` for any other text.
            pub fn from_name(name: &str) -> ::core::option::Option<$name> {
                match name {
                    $($wire => ::core::option::Option::Some($name::$variant),)+
                    _ => ::core::option::Option::None,
                }
            }
        }

        $crate::wire_text!($name: $what);
    };
}

/// `Display` (the wire name) and `FromStr` (a wire name; any other text an [`UnknownName`]
/// listing the names) of a vocabulary that has `as_str`, `from_name` and `NAMES`: shared by
/// [`wire_enum!`] and the error code views (`error_code_subset!`).
#[doc(hidden)]
#[macro_export]
macro_rules! wire_text {
    ($name:ident: $what:expr) => {
        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::wire::UnknownName;

            /// The value of a wire name; any other text is an error listing the names.
            fn from_str(s: &str) -> ::core::result::Result<$name, $crate::wire::UnknownName> {
                $name::from_name(s).ok_or_else(|| $crate::wire::UnknownName {
                    what: $what,
                    given: s.to_string(),
                    names: &$name::NAMES,
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::wire_enum! {
        /// A test vocabulary.
        #[derive(Default, PartialOrd, Ord)]
        pub enum Sample: "sample" {
            /// The first.
            #[default]
            First = "first",
            /// The second, whose Rust name and wire name differ.
            SecondOne = "second",
        }
    }

    #[test]
    fn every_value_round_trips_through_each_form() {
        assert_eq!(Sample::ALL, [Sample::First, Sample::SecondOne]);
        assert_eq!(Sample::NAMES, ["first", "second"]);
        for value in Sample::ALL {
            let name = value.as_str();
            assert_eq!(value.to_string(), name);
            assert_eq!(name.parse::<Sample>(), Ok(value));
            assert_eq!(Sample::from_name(name), Some(value));
            assert_eq!(serde_json::to_value(value).unwrap(), name);
            assert_eq!(
                serde_json::from_value::<Sample>(serde_json::json!(name)).unwrap(),
                value
            );
        }
        assert_eq!(Sample::default(), Sample::First);
        assert!(Sample::First < Sample::SecondOne);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_names() {
        let error = "third".parse::<Sample>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown sample 'third' (use first, second)"
        );
        assert_eq!(Sample::from_name("SecondOne"), None);
        let serde = serde_json::from_value::<Sample>(serde_json::json!("SecondOne")).unwrap_err();
        assert!(
            serde.to_string().contains("expected `first` or `second`"),
            "{serde}"
        );
    }

    #[test]
    fn the_schema_lists_the_wire_names_with_their_docs() {
        let schema = serde_json::to_value(schemars::schema_for!(Sample)).unwrap();
        let one_of = schema["oneOf"].as_array().unwrap();
        let consts: Vec<&str> = one_of
            .iter()
            .map(|v| v["const"].as_str().unwrap())
            .collect();
        assert_eq!(consts, ["first", "second"]);
        assert_eq!(
            one_of[1]["description"],
            "The second, whose Rust name and wire name differ."
        );
    }
}
