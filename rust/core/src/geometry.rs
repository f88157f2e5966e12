//! The world's geometry: a [`Position`] and the [`WorldBounds`] rectangle agents live in.
//!
//! A leaf module: the runtime, the bus, memory, the protocol and the brains all speak it, and it
//! depends on none of them.

use serde::{Deserialize, Serialize, Serializer};

/// A point in the world. Serialized as `{"x": 10, "y": 8}`: whole numbers are written as JSON
/// integers, others as floats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    /// Horizontal coordinate.
    pub x: f64,
    /// Vertical coordinate.
    pub y: f64,
}

impl Position {
    /// A position.
    pub const fn new(x: f64, y: f64) -> Self {
        Position { x, y }
    }

    /// Euclidean distance to `other`.
    pub fn distance(self, other: Position) -> f64 {
        ((self.x - other.x).powi(2) + (self.y - other.y).powi(2)).sqrt()
    }

    /// Whether both coordinates are finite numbers.
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

/// Writes a coordinate as an integer when it is whole (and exactly representable), else as a float.
pub(crate) fn number(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Value::from(v)
    }
}

impl Serialize for Position {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Position", 2)?;
        s.serialize_field("x", &number(self.x))?;
        s.serialize_field("y", &number(self.y))?;
        s.end()
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", number(self.x), number(self.y))
    }
}

/// The rectangle agents live in (inclusive on all sides). Moves outside it are refused.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorldBounds {
    /// Smallest x.
    pub min_x: f64,
    /// Smallest y.
    pub min_y: f64,
    /// Largest x.
    pub max_x: f64,
    /// Largest y.
    pub max_y: f64,
}

impl WorldBounds {
    /// Bounds from a corner and a size (Godot's `Rect2` shape). Errors when the size is negative
    /// or anything is not finite.
    pub fn from_rect(x: f64, y: f64, width: f64, height: f64) -> Result<Self, String> {
        let b = WorldBounds {
            min_x: x,
            min_y: y,
            max_x: x + width,
            max_y: y + height,
        };
        b.validate().map(|_| b)
    }

    /// Checks that the rectangle is finite and not inverted.
    pub fn validate(&self) -> Result<(), String> {
        let all = [self.min_x, self.min_y, self.max_x, self.max_y];
        if all.iter().any(|v| !v.is_finite()) {
            return Err("world bounds must be finite numbers".into());
        }
        if self.max_x < self.min_x || self.max_y < self.min_y {
            return Err(format!(
                "world bounds are inverted: x {}..{}, y {}..{}",
                self.min_x, self.max_x, self.min_y, self.max_y
            ));
        }
        Ok(())
    }

    /// Whether `p` lies inside (edges included).
    pub fn contains(&self, p: Position) -> bool {
        p.is_finite()
            && p.x >= self.min_x
            && p.x <= self.max_x
            && p.y >= self.min_y
            && p.y <= self.max_y
    }

    /// `p` moved to the nearest point inside.
    pub fn clamp(&self, p: Position) -> Position {
        Position::new(
            p.x.clamp(self.min_x, self.max_x),
            p.y.clamp(self.min_y, self.max_y),
        )
    }

    /// The centre point.
    pub fn center(&self) -> Position {
        Position::new(
            (self.min_x + self.max_x) / 2.0,
            (self.min_y + self.max_y) / 2.0,
        )
    }

    /// Width (x extent).
    pub fn width(&self) -> f64 {
        self.max_x - self.min_x
    }

    /// Height (y extent).
    pub fn height(&self) -> f64 {
        self.max_y - self.min_y
    }
}

impl Default for WorldBounds {
    /// `0..100` on both axes.
    fn default() -> Self {
        WorldBounds {
            min_x: 0.0,
            min_y: 0.0,
            max_x: 100.0,
            max_y: 100.0,
        }
    }
}
