## The agent town's ground (demo/town.gd): grass, the festival square and its well, five houses,
## the fields and trees, drawn in the 1280×720 window — and what stands in a villager's way.
## The houses, the well and the trees are holes in the navigation mesh that the map bakes for its
## `NavigationRegion2D` (so a villager's `NavigationAgent2D` finds a path around them) and solid
## `StaticBody2D`s (so a `CharacterBody2D` cannot walk through one).
##
## The layout is given in the town's world units (0..world_size, as in demo/villagers.json) and
## placed on the map by [method to_level]; everything else here is in level coordinates (pixels).
extends Node2D

const DemoUi := preload("res://demo/demo_ui.gd")

## Where the map is drawn in the window.
const MAP := Rect2(16, 76, 816, 628)
## World (0, 0) and world_size are this far inside MAP.
const MAP_PAD := 46.0
## The ground a villager's feet may stand on: inside MAP, with room for its head above and its
## name and role below.
const GROUND := Rect2(MAP.position + Vector2(24, 44), MAP.size - Vector2(48, 104))
## How far a villager's middle keeps from a wall, the well, a tree or the ground's edge (the
## navigation mesh's agent radius).
const CLEARANCE := 14.0
## Physics layer of the walls (villagers collide with this layer only, not with each other).
const WALL_LAYER := 1

## The houses: the door (world units, bottom middle of the walls), the walls' size (pixels),
## their colours and the sign.
const HOUSES := [
	{"title": "Bakery", "door": Vector2(17, 17), "size": Vector2(112, 64),
		"walls": Color(0.88, 0.8, 0.64), "roof": Color(0.76, 0.34, 0.27)},
	{"title": "Forge", "door": Vector2(84, 15), "size": Vector2(104, 60),
		"walls": Color(0.56, 0.54, 0.52), "roof": Color(0.34, 0.36, 0.42), "chimney": true},
	{"title": "Town hall", "door": Vector2(50, 24), "size": Vector2(150, 76),
		"walls": Color(0.86, 0.84, 0.78), "roof": Color(0.48, 0.34, 0.6), "columns": true},
	{"title": "Guard post", "door": Vector2(74, 86), "size": Vector2(70, 86),
		"walls": Color(0.6, 0.6, 0.62), "roof": Color(0.28, 0.42, 0.72)},
	{"title": "Farm", "door": Vector2(33, 96), "size": Vector2(92, 58),
		"walls": Color(0.72, 0.3, 0.26), "roof": Color(0.45, 0.25, 0.2)},
]
## The festival square's middle (world units); its well stands there.
const SQUARE := Vector2(45, 55)
## The wheat fields' top-left corner (world units) and size (pixels).
const FIELDS_AT := Vector2(1, 80)
const FIELDS_SIZE := Vector2(176, 96)
## How many trees the map tries to plant, and the seed that places them.
const TREES := 22
const TREE_SEED := 4

## The world's size in world units (demo/villagers.json's world_size).
var world_size := Vector2(100, 100)
## Whether to draw (with a display); the navigation and the walls are built either way.
var drawn := true
## The navigation region the map baked.
var region: NavigationRegion2D

## Each house: its door (level), walls rectangle, roof peak and the rectangle it covers.
var _houses: Array[Dictionary] = []
## Each tree: [position, radius].
var _trees: Array = []
var _square := Vector2.ZERO
var _fields := Rect2()


## Lays the town out for a world of [param size] units: houses, well and trees placed so that
## none covers one of [param keep_clear] (level points: where the villagers start), then the
## walls and the navigation mesh around them.
func build(size: Vector2, keep_clear: Array[Vector2]) -> void:
	world_size = size
	_square = to_level(SQUARE)
	_fields = Rect2(to_level(FIELDS_AT), FIELDS_SIZE)
	_houses.clear()
	for house: Dictionary in HOUSES:
		var door := to_level(house.door)
		var walls := Rect2(door - Vector2(house.size.x * 0.5, house.size.y), house.size)
		var peak := Vector2(door.x, walls.position.y - house.size.y * 0.55)
		# What the house covers, roof included: the villagers walk around it.
		var covers := Rect2(walls.position.x - 10, peak.y, walls.size.x + 20, walls.end.y - peak.y)
		var placed := house.duplicate()
		placed.merge({"door_at": door, "walls_rect": walls, "peak": peak, "covers": covers})
		_houses.append(placed)
	_plant_trees(keep_clear)
	_build_walls()
	_build_navigation()
	queue_redraw()


## World units → level coordinates (pixels on the map).
func to_level(p: Vector2) -> Vector2:
	var area := MAP.grow(-MAP_PAD)
	return area.position + p / world_size * area.size


## How many level pixels one world unit is, on average (for distances such as hearing).
func pixels_per_unit() -> float:
	var area := MAP.grow(-MAP_PAD)
	return (area.size.x / world_size.x + area.size.y / world_size.y) * 0.5


## The rectangle a villager may be sent to: the ground less the clearance at its edge.
func walkable_bounds() -> Rect2:
	return GROUND.grow(-CLEARANCE - 2.0)


## What stands in the way, as outlines (level coordinates): houses, the well, the trees.
func obstacles() -> Array[PackedVector2Array]:
	var out: Array[PackedVector2Array] = []
	for house in _houses:
		var r: Rect2 = house.covers
		out.append(PackedVector2Array([r.position, Vector2(r.end.x, r.position.y), r.end,
			Vector2(r.position.x, r.end.y)]))
	out.append(_oval(_square + Vector2(0, 2), Vector2(28, 16), 12))
	for tree in _trees:
		out.append(_oval(tree[0] + Vector2(0, tree[1] * 0.2), Vector2(tree[1] * 0.8, tree[1] * 0.8), 10))
	return out


## Trees where nothing else is: off the houses, the square, the fields, the paths and the
## villagers' starting places.
func _plant_trees(keep_clear: Array[Vector2]) -> void:
	_trees.clear()
	var rng := RandomNumberGenerator.new()
	rng.seed = TREE_SEED
	var busy: Array[Rect2] = [_fields.grow(14), Rect2(_square - Vector2(170, 110), Vector2(340, 220))]
	for house in _houses:
		busy.append((house.covers as Rect2).grow(12))
	for p in keep_clear:
		busy.append(Rect2(p - Vector2(40, 50), Vector2(80, 100)))
	var tries := 0
	while _trees.size() < TREES and tries < 600:
		tries += 1
		var p := Vector2(rng.randf_range(GROUND.position.x + 20, GROUND.end.x - 20),
			rng.randf_range(GROUND.position.y + 20, GROUND.end.y - 10))
		var radius := 15.0 + rng.randf() * 7.0
		var free := true
		for r in busy:
			if r.grow(26).has_point(p):
				free = false
				break
		for house in _houses:
			var door: Vector2 = house.door_at
			if Geometry2D.get_closest_point_to_segment(p, _square, door).distance_to(p) < 40.0:
				free = false
		if not free:
			continue
		busy.append(Rect2(p - Vector2(34, 34), Vector2(68, 68)))
		_trees.append([p, radius])


## A StaticBody2D for each obstacle, on WALL_LAYER.
func _build_walls() -> void:
	var walls := StaticBody2D.new()
	walls.name = "Walls"
	walls.collision_layer = WALL_LAYER
	walls.collision_mask = 0
	for outline in obstacles():
		var shape := CollisionPolygon2D.new()
		shape.polygon = outline
		walls.add_child(shape)
	add_child(walls)


## The navigation mesh: the ground, with a hole (and CLEARANCE around it) for every obstacle,
## baked now (synchronously) into the map's NavigationRegion2D.
func _build_navigation() -> void:
	var mesh := NavigationPolygon.new()
	mesh.agent_radius = CLEARANCE
	var source := NavigationMeshSourceGeometryData2D.new()
	var g := GROUND
	source.add_traversable_outline(PackedVector2Array([g.position, Vector2(g.end.x, g.position.y),
		g.end, Vector2(g.position.x, g.end.y)]))
	for outline in obstacles():
		source.add_obstruction_outline(outline)
	NavigationServer2D.bake_from_source_geometry_data(mesh, source)
	region = NavigationRegion2D.new()
	region.name = "Navigation"
	region.navigation_polygon = mesh
	add_child(region)


func _oval(center: Vector2, radii: Vector2, points: int) -> PackedVector2Array:
	var out := PackedVector2Array()
	for i in points:
		var a := TAU * i / points
		out.append(center + Vector2(cos(a) * radii.x, sin(a) * radii.y))
	return out


# -- Drawing ------------------------------------------------------------------------------------


func _draw() -> void:
	if not drawn or _houses.is_empty():
		return
	draw_rect(Rect2(Vector2.ZERO, get_viewport_rect().size), DemoUi.BG)
	draw_style_box(DemoUi.box(Color(0.27, 0.42, 0.26), Color(0.2, 0.3, 0.2), 12, 2), MAP)
	var font := ThemeDB.fallback_font
	var rng := RandomNumberGenerator.new()
	rng.seed = TREE_SEED
	var inner := MAP.grow(-10)
	# Grass tufts and flowers.
	for i in 420:
		var p := Vector2(rng.randf_range(inner.position.x, inner.end.x), rng.randf_range(inner.position.y, inner.end.y))
		var shade := Color(0.33, 0.52, 0.3) if i % 2 == 0 else Color(0.23, 0.36, 0.22)
		draw_line(p, p + Vector2(-2, -5), shade, 1.5, true)
		draw_line(p, p + Vector2(2, -6), shade, 1.5, true)
	for i in 36:
		var p := Vector2(rng.randf_range(inner.position.x, inner.end.x), rng.randf_range(inner.position.y, inner.end.y))
		draw_circle(p, 2.2, [Color(0.98, 0.9, 0.5), Color(0.95, 0.6, 0.7), Color(0.85, 0.85, 1.0)][i % 3])
	# Paths from the square to every door.
	var path := Color(0.56, 0.48, 0.36)
	for house in _houses:
		var door: Vector2 = house.door_at
		draw_line(_square, door + Vector2(0, 8), path, 20.0, true)
		draw_circle(door + Vector2(0, 8), 10.0, path)
	# The fields.
	for row in 8:
		var y := _fields.position.y + 6 + row * 12
		var crop := Color(0.86, 0.72, 0.36) if row < 4 else Color(0.5, 0.66, 0.3)
		draw_line(Vector2(_fields.position.x, y), Vector2(_fields.end.x, y), crop, 7.0, true)
	_draw_square(font)
	for house in _houses:
		_draw_house(font, house)
	for tree in _trees:
		_draw_tree(tree[0], tree[1])


## The festival square, its well and bunting.
func _draw_square(font: Font) -> void:
	var square := _square
	draw_colored_polygon(_oval(square, Vector2(150, 92), 40), Color(0.62, 0.57, 0.48))
	draw_colored_polygon(_oval(square, Vector2(138, 82), 40), Color(0.68, 0.63, 0.53))
	draw_colored_polygon(_oval(square + Vector2(0, 4), Vector2(26, 14), 28), Color(0.3, 0.3, 0.33))
	draw_colored_polygon(_oval(square, Vector2(24, 13), 28), Color(0.45, 0.46, 0.5))
	draw_colored_polygon(_oval(square, Vector2(17, 8), 28), Color(0.3, 0.55, 0.85))
	var flags := [DemoUi.RED, DemoUi.ACCENT, DemoUi.BLUE, DemoUi.GREEN, Color(0.85, 0.5, 0.75)]
	for side in [-1.0, 1.0]:
		var a := square + Vector2(side * 128, -54)
		var b := square + Vector2(side * 22, -30)
		draw_line(a + Vector2(0, 26), a, Color(0.4, 0.3, 0.22), 3.0)
		for i in 6:
			var t := (i + 0.5) / 6.0
			var p := a.lerp(b, t) + Vector2(0, sin(t * PI) * 10.0)
			draw_colored_polygon(PackedVector2Array([p - Vector2(5, 0), p + Vector2(5, 0), p + Vector2(0, 10)]), flags[i % flags.size()])
		draw_polyline(PackedVector2Array([a, a.lerp(b, 0.5) + Vector2(0, 10), b]), Color(0.9, 0.9, 0.9, 0.6), 1.0, true)
	_sign(font, square + Vector2(0, 44), "Festival square")


## A house: shadow, walls, roof, door, windows, the extras of HOUSES, its sign.
func _draw_house(font: Font, house: Dictionary) -> void:
	var door: Vector2 = house.door_at
	var size: Vector2 = house.size
	var walls: Color = house.walls
	var roof: Color = house.roof
	var base: Rect2 = house.walls_rect
	var peak: Vector2 = house.peak
	draw_rect(Rect2(base.position + Vector2(4, 6), base.size), Color(0, 0, 0, 0.22))
	draw_rect(base, walls)
	draw_rect(base, walls.darkened(0.35), false, 2.0)
	var top := base.position.y
	var outline := PackedVector2Array([Vector2(base.position.x - 10, top + 2), peak,
		Vector2(base.end.x + 10, top + 2)])
	draw_colored_polygon(outline, roof)
	draw_polyline(outline, roof.darkened(0.3), 2.0, true)
	draw_rect(Rect2(door + Vector2(-9, -24), Vector2(18, 24)), walls.darkened(0.55))
	if size.x > 80:
		for x in [-size.x * 0.32, size.x * 0.32 - 16]:
			draw_rect(Rect2(door + Vector2(x, -size.y * 0.62), Vector2(16, 14)), Color(0.98, 0.86, 0.5))
	if house.get("chimney", false):
		draw_rect(Rect2(door + Vector2(28, -92), Vector2(14, 26)), Color(0.3, 0.3, 0.32))
		for i in 3:
			draw_circle(door + Vector2(36 + i * 7, -100 - i * 10), 6.0 + i * 2,
				Color(0.75, 0.75, 0.78, 0.45 - i * 0.12))
	if house.get("columns", false):
		for i in 4:
			draw_rect(Rect2(door + Vector2(-56 + i * 34, -60), Vector2(8, 42)), Color(0.96, 0.95, 0.9))
	_sign(font, Vector2(door.x, peak.y - 10), house.title)


func _sign(font: Font, center: Vector2, title: String) -> void:
	var width := font.get_string_size(title, HORIZONTAL_ALIGNMENT_LEFT, -1, 13).x
	var plate := Rect2(center - Vector2(width * 0.5 + 8, 11), Vector2(width + 16, 20))
	draw_style_box(DemoUi.box(Color(0.1, 0.11, 0.14, 0.8), Color(0, 0, 0, 0), 6, 0), plate)
	draw_string(font, Vector2(plate.position.x + 8, center.y + 4), title, HORIZONTAL_ALIGNMENT_LEFT,
		-1, 13, Color(0.95, 0.92, 0.84))


func _draw_tree(p: Vector2, r: float) -> void:
	draw_colored_polygon(_oval(p + Vector2(4, r * 0.9), Vector2(r * 0.9, r * 0.35), 24), Color(0, 0, 0, 0.22))
	draw_rect(Rect2(p + Vector2(-3, 0), Vector2(6, r * 0.9)), Color(0.4, 0.28, 0.18))
	draw_circle(p, r, Color(0.16, 0.34, 0.18))
	draw_circle(p + Vector2(-r * 0.3, -r * 0.25), r * 0.7, Color(0.22, 0.44, 0.24))
	draw_circle(p + Vector2(r * 0.25, -r * 0.4), r * 0.45, Color(0.3, 0.52, 0.3))
