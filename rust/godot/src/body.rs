//! The body an [`AgentNode`](crate::agent_node::AgentNode) stands for: its parent, 2D or 3D.
//! The node reports where the body is, and walks it where its agent decided to go.
//!
//! A walk follows the body's `NavigationAgent2D`/`3D` (a child of the body) when it has one —
//! around walls, along the navigation map — else goes in a straight line. A
//! `CharacterBody2D`/`3D` moves with `move_and_slide` (so it collides); any other body is
//! placed. A walk ends arrived, or blocked with a reason: the target is off the navigation map,
//! there is no path to it, or the body made no headway for a while (something is in the way).
//! Navigation classes are reached by name, so the extension does not depend on them.

use agents_core::runtime::Position;
use godot::classes::{Engine, Node, Node2D, Node3D, Object};
use godot::prelude::*;

/// A walk without navigation ends this close to its target.
const ARRIVE_DISTANCE: f64 = 0.5;

/// For this long after a walk starts (1 s), "off the map" and "no path" are not final: a navigation
/// map that was just set up (a level loading, a region added this frame) may not have its
/// polygons yet, so the walk waits and asks again.
const SETTLE_SECONDS: f64 = 1.0;

/// A walk must cover this share of the distance it could have in `stuck_seconds`, or it is
/// blocked.
const HEADWAY_SHARE: f64 = 0.1;

/// The body an agent node reports and drives (held typed, so the per-frame read is one validity
/// check and one call).
#[derive(Debug)]
pub(crate) enum Body {
    /// A `Node2D`: its global position.
    Flat(Gd<Node2D>),
    /// A `Node3D`: its global position's `x` and `z` (the ground plane).
    Spatial(Gd<Node3D>),
}

impl Body {
    /// A walking pace in the body's units a second: 100 pixels in 2D, 2 metres in 3D
    /// ([member AgentNode.move_speed]'s default).
    pub fn walking_speed(&self) -> f64 {
        match self {
            Body::Flat(_) => 100.0,
            Body::Spatial(_) => 2.0,
        }
    }

    /// `node` as a body, when it is a `Node2D` or a `Node3D`.
    pub fn of(node: Gd<Node>) -> Option<Body> {
        match node.try_cast::<Node2D>() {
            Ok(body) => Some(Body::Flat(body)),
            Err(node) => node.try_cast::<Node3D>().ok().map(Body::Spatial),
        }
    }

    /// Where the body is on the agents' plane (`None`: it is gone).
    pub fn position(&self) -> Option<Position> {
        match self {
            Body::Flat(body) if body.is_instance_valid() => {
                let p = body.get_global_position();
                Some(Position::new(coordinate(p.x), coordinate(p.y)))
            }
            Body::Spatial(body) if body.is_instance_valid() => {
                let p = body.get_global_position();
                Some(Position::new(coordinate(p.x), coordinate(p.z)))
            }
            _ => None,
        }
    }

    /// A point of the agents' plane in the body's space: a `Vector2`, or a `Vector3` at the
    /// body's height.
    pub fn point(&self, at: Position) -> Variant {
        let (x, y) = (at.x as f32, at.y as f32);
        match self {
            Body::Flat(_) => Vector2::new(x, y).to_variant(),
            Body::Spatial(body) => {
                let height = if body.is_instance_valid() {
                    body.get_global_position().y
                } else {
                    0.0
                };
                Vector3::new(x, height, y).to_variant()
            }
        }
    }

    /// A `Vector2`/`Vector3` of the body's space on the agents' plane.
    fn plane(&self, v: &Variant) -> Option<Position> {
        match self {
            Body::Flat(_) => v
                .try_to::<Vector2>()
                .ok()
                .map(|p| Position::new(coordinate(p.x), coordinate(p.y))),
            Body::Spatial(_) => v
                .try_to::<Vector3>()
                .ok()
                .map(|p| Position::new(coordinate(p.x), coordinate(p.z))),
        }
    }

    fn node(&self) -> Gd<Node> {
        match self {
            Body::Flat(body) => body.clone().upcast(),
            Body::Spatial(body) => body.clone().upcast(),
        }
    }

    /// The navigation agent the body walks with: its first `NavigationAgent2D`/`3D` child.
    fn navigation_agent(&self) -> Option<Gd<Node>> {
        let class = match self {
            Body::Flat(_) => "NavigationAgent2D",
            Body::Spatial(_) => "NavigationAgent3D",
        };
        self.node()
            .get_children()
            .iter_shared()
            .find(|child| child.is_class(class))
    }

    fn navigation_server(&self) -> Option<Gd<Object>> {
        let name = match self {
            Body::Flat(_) => "NavigationServer2D",
            Body::Spatial(_) => "NavigationServer3D",
        };
        Engine::singleton().get_singleton(name)
    }

    /// Moves the body from `from` toward `next` at `speed` for `delta` seconds, never past it.
    fn advance(&mut self, from: Position, next: Position, speed: f64, delta: f64) {
        let (dx, dy) = (next.x - from.x, next.y - from.y);
        let distance = dx.hypot(dy);
        if distance < 1e-9 || delta <= 0.0 {
            return;
        }
        // As fast as `speed`, and no further than `next` in this step.
        let v = speed.min(distance / delta);
        let (vx, vy) = ((dx / distance * v) as f32, (dy / distance * v) as f32);
        let mut node = self.node();
        if node.is_class("CharacterBody2D") {
            node.set("velocity", &Vector2::new(vx, vy).to_variant());
            node.call("move_and_slide", &[]);
            return;
        }
        if node.is_class("CharacterBody3D") {
            let fall = node
                .get("velocity")
                .try_to::<Vector3>()
                .map_or(0.0, |v| v.y);
            node.set("velocity", &Vector3::new(vx, fall, vy).to_variant());
            node.call("move_and_slide", &[]);
            return;
        }
        let (sx, sy) = (vx * delta as f32, vy * delta as f32);
        match self {
            Body::Flat(body) => {
                let p = body.get_global_position();
                body.set_global_position(Vector2::new(p.x + sx, p.y + sy));
            }
            Body::Spatial(body) => {
                let p = body.get_global_position();
                body.set_global_position(Vector3::new(p.x + sx, p.y, p.z + sy));
            }
        }
    }
}

/// How a walk goes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// Under way.
    Walking,
    /// At the target.
    Arrived,
    /// It cannot get there, and why.
    Blocked(String),
}

/// A move the node carries out for its agent.
#[derive(Debug)]
pub(crate) struct Walk {
    /// The agent's move number (`finish_move` names it).
    pub move_id: u64,
    /// Where it goes.
    pub target: Position,
    navigation: Option<Gd<Node>>,
    /// The navigation agent has its target.
    aimed: bool,
    /// The target was checked against the navigation map.
    checked: bool,
    /// Where the body was when it last made headway, and the seconds since.
    mark: Option<Position>,
    since_mark: f64,
    /// Seconds since it started.
    elapsed: f64,
}

impl Walk {
    /// A walk of `body` to `target`, with its navigation agent if it has one.
    pub fn new(move_id: u64, target: Position, body: &Body) -> Walk {
        Walk {
            navigation: body.navigation_agent(),
            ..Walk::waiting(move_id, target)
        }
    }

    /// A move the game carries out itself (the node only waits for its report).
    pub fn waiting(move_id: u64, target: Position) -> Walk {
        Walk {
            move_id,
            target,
            navigation: None,
            aimed: false,
            checked: false,
            mark: None,
            since_mark: 0.0,
            elapsed: 0.0,
        }
    }

    /// One physics step: moves `body` and says how the walk goes.
    pub fn step(&mut self, body: &mut Body, delta: f64, speed: f64, stuck_seconds: f64) -> Step {
        let Some(at) = body.position() else {
            return Step::Blocked("its body is gone".into());
        };
        self.elapsed += delta;
        let target = self.target;
        let next = match self.navigation.clone() {
            Some(nav) if nav.is_instance_valid() => match self.navigate(body, nav, at) {
                Ok(next) => next,
                Err(step) => return step,
            },
            Some(_) => return Step::Blocked("its NavigationAgent was freed".into()),
            None => {
                if distance(at, target) <= ARRIVE_DISTANCE {
                    return Step::Arrived;
                }
                target
            }
        };
        // Headway: at least a share of what it could have covered in `stuck_seconds`.
        let mark = *self.mark.get_or_insert(at);
        self.since_mark += delta;
        if distance(at, mark) >= (speed * stuck_seconds * HEADWAY_SHARE).max(1e-3) {
            self.mark = Some(at);
            self.since_mark = 0.0;
        } else if stuck_seconds > 0.0 && self.since_mark >= stuck_seconds {
            return Step::Blocked(format!(
                "stuck at {at} on the way to {target}: something is in the way"
            ));
        }
        body.advance(at, next, speed, delta);
        Step::Walking
    }

    /// The next point of the navigation path, or how the walk ended.
    fn navigate(&mut self, body: &Body, mut nav: Gd<Node>, at: Position) -> Result<Position, Step> {
        let target = self.target;
        if !self.aimed {
            nav.set("target_position", &body.point(target));
            self.aimed = true;
        }
        let reach = nav
            .get("target_desired_distance")
            .try_to::<f64>()
            .unwrap_or(1.0)
            .max(ARRIVE_DISTANCE);
        let map = nav.call("get_navigation_map", &[]);
        let Some(mut server) = body.navigation_server() else {
            return Err(Step::Blocked("no navigation server".into()));
        };
        let iteration = server
            .call("map_get_iteration_id", std::slice::from_ref(&map))
            .try_to::<i64>()
            .unwrap_or(0);
        if iteration == 0 {
            // The map has not been synchronised yet (the first physics frame): wait.
            return Ok(at);
        }
        let settling = self.elapsed < SETTLE_SECONDS;
        if !self.checked {
            let closest = server.call("map_get_closest_point", &[map, body.point(target)]);
            if let Some(closest) = body.plane(&closest)
                && distance(closest, target) > reach
            {
                if settling {
                    // The map may not have its polygons yet: ask again next frame.
                    return Ok(at);
                }
                // Whole units read better to a brain (and a player) than the mesh's fractions.
                let closest = Position::new(closest.x.round(), closest.y.round());
                return Err(Step::Blocked(format!(
                    "{target} is off the navigation map (the nearest point on it is {closest})"
                )));
            }
            self.checked = true;
        }
        let next = nav.call("get_next_path_position", &[]);
        let finished = nav
            .call("is_navigation_finished", &[])
            .try_to::<bool>()
            .unwrap_or(false);
        if finished {
            let reached = nav
                .call("is_target_reached", &[])
                .try_to::<bool>()
                .unwrap_or(false);
            if reached || distance(at, target) <= reach {
                return Err(Step::Arrived);
            }
            if settling {
                // A path asked for before the map was ready: ask for a new one.
                nav.set("target_position", &body.point(target));
                return Ok(at);
            }
            return Err(Step::Blocked(format!("no path to {target}")));
        }
        Ok(body.plane(&next).unwrap_or(target))
    }
}

/// A coordinate of Godot's (an `f32`) as the agents see it: to a thousandth of a unit, so that
/// 206.8 reads as 206.8 in a brain's context and a trace, not as 206.8000030517578.
fn coordinate(v: f32) -> f64 {
    (f64::from(v) * 1000.0).round() / 1000.0
}

fn distance(a: Position, b: Position) -> f64 {
    (a.x - b.x).hypot(a.y - b.y)
}

/// Hands an event about its agent to a bound node; false when the node is gone.
pub(crate) type Deliver = std::rc::Rc<dyn Fn(&agents_core::bus::BusMessage) -> bool>;

/// An [AgentNode](crate::agent_node::AgentNode) as its runtime keeps it: where its agent's
/// events go, its body, and the position last reported. The node makes it when its agent
/// spawned ([`BoundNode::new`]); the runtime knows the node only through it.
pub(crate) struct BoundNode {
    /// Hands the node an event about its agent.
    pub deliver: Deliver,
    body: Option<Body>,
    /// The position last reported to the agent.
    pub reported: Option<Position>,
}

impl BoundNode {
    /// A node bound to its agent: `deliver` hands it the agent's events, `body` is what it
    /// moves (`None`: it reports no position).
    pub fn new(deliver: Deliver, body: Option<Body>) -> Self {
        BoundNode {
            deliver,
            body,
            reported: None,
        }
    }

    /// Where the body is now (`None`: it reports none, or it is gone).
    pub fn body_position(&self) -> Option<Position> {
        self.body.as_ref()?.position()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_read_as_the_decimals_they_were_written_with() {
        assert_eq!(coordinate(206.8), 206.8);
        assert_eq!(coordinate(-282.8), -282.8);
        assert_eq!(coordinate(500.0), 500.0);
        assert_eq!(coordinate(0.0004), 0.0);
        assert_eq!(coordinate(1e7), 1e7);
    }
}
