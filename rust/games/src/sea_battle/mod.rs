//! Sea battle (Battleship) on two 10×10 boards with the fleet 5, 4, 3, 3, 2.
//!
//! # State grammar
//!
//! ```text
//! P:<board>|O:<board>|F:<board>|OF:<board>|T:<player|opponent>|ST:<in_progress|game_over>|LA:<last_action>|W:<player|opponent|->
//! ```
//!
//! - A board is ten rows of ten cells, **row 1 first**, rows separated by `/` (so a board is 109
//!   characters); in a row the cells are columns `A` to `J`. `A1` is the first character of the
//!   board, `J1` the tenth, `A2` the first character after the first `/`, `J10` the last.
//! - Cells: `.` water not shot at, `S` ship not hit, `H` hit ship, `M` miss (shot into water).
//! - `P` is the player's full board (the player's ships, and the opponent's shots at them), `O` the
//!   opponent's full board (its ships, and the player's shots).
//! - `F` is the player's fog board: what the player has learned about `O` — exactly `O` with every
//!   `S` shown as `.`. `OF` is the opponent's fog board: exactly `P` with every `S` shown as `.`.
//!   A shot by the player therefore changes the same cell in `O` and `F` (`S`→`H` or `.`→`M`); a
//!   shot by the opponent changes `P` and `OF`. Fog boards never contain `S`.
//! - `T` names the side that shoots next. The player fires first, the sides alternate and a hit
//!   gives no extra shot; after the winning shot `T` names the loser (the side that would have shot
//!   next), so `T` always flips after a shot.
//! - `LA` is `-` before the first shot, else `<COORD>:miss`, `<COORD>:hit` or `<COORD>:sunk(N)`
//!   (N = length of the ship sunk by that shot) with an upper-case coordinate such as `B4`.
//! - `W` is `-` while the game is in progress, else the side that hit every cell of the other
//!   side's fleet.
//!
//! Ships are straight, horizontal or vertical, and never touch — not even diagonally — so every
//! group of `S`/`H` cells that touch (8-neighbourhood) is exactly one ship and "sunk" is exact.
//!
//! # Validation
//!
//! The parser (errors `Invalid state: <detail>`) checks the syntax, that each full board holds
//! exactly the fleet 5, 4, 3, 3, 2 (straight, not touching), that `F` and `OF` match `O` and `P`,
//! that the number of shots fits `T` (player shots = opponent shots when `T:player`, one more
//! when `T:opponent`), that `ST`/`W`/`T` fit the boards (game over exactly when one fleet is all
//! hit, won by the side that sank it, who fired last), and that `LA` is `-` exactly when no shot
//! was fired and otherwise describes the last shooter's shot as the boards show it.
//!
//! # Moves
//!
//! A move is a coordinate `A1`–`J10` of the board the side to move shoots at (`O` for the player,
//! `P` for the opponent). Input is trimmed and case-insensitive (`" b4 "` is `B4`); output is upper
//! case. Legal moves are the untargeted cells (`.` or `S`) of that board in row-major order
//! `A1, B1, …, J1, A2, …, J10`.

mod ai;

use std::fmt;
use std::str::FromStr;

use rand::RngExt;

use crate::seed::GameRng;
use crate::{Level, MoveError, ParseError, SearchLimits};

pub use ai::{FogView, Known};

/// Board width and height.
pub const SIZE: usize = 10;
/// Cells per board.
pub const CELLS: usize = SIZE * SIZE;
/// Ship lengths of each fleet, in placement order.
pub const FLEET: [u8; 5] = [5, 4, 3, 3, 2];
/// The message of every illegal move.
pub const ILLEGAL_MOVE: &str = "Illegal move.";

fn invalid(detail: impl fmt::Display) -> ParseError {
    ParseError::new(format!("Invalid state: {detail}"))
}

/// A cell coordinate: column `A`–`J`, row 1–10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coord {
    index: u8,
}

impl Coord {
    /// The coordinate of column `col` (0 = `A`) and row `row` (0 = row 1), if on the board.
    pub fn new(col: usize, row: usize) -> Option<Coord> {
        (col < SIZE && row < SIZE).then(|| Coord {
            index: (row * SIZE + col) as u8,
        })
    }

    /// The coordinate of a row-major index 0–99 (`A1` = 0, `J1` = 9, `A2` = 10).
    pub fn from_index(index: usize) -> Option<Coord> {
        (index < CELLS).then_some(Coord { index: index as u8 })
    }

    /// Row-major index 0–99.
    pub fn index(self) -> usize {
        usize::from(self.index)
    }

    /// Column 0–9 (`A`–`J`).
    pub fn col(self) -> usize {
        self.index() % SIZE
    }

    /// Row 0–9 (row 1–10).
    pub fn row(self) -> usize {
        self.index() / SIZE
    }

    /// Parses the canonical form only (upper case, no spaces).
    fn parse_exact(s: &str) -> Option<Coord> {
        let bytes = s.as_bytes();
        let (&letter, digits) = bytes.split_first()?;
        if !(b'A'..=b'J').contains(&letter) {
            return None;
        }
        let row = match digits {
            [d @ b'1'..=b'9'] => usize::from(d - b'0'),
            [b'1', b'0'] => 10,
            _ => return None,
        };
        Coord::new(usize::from(letter - b'A'), row - 1)
    }
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'A' + self.col() as u8) as char, self.row() + 1)
    }
}

impl FromStr for Coord {
    type Err = ParseError;

    /// Trimmed and case-insensitive: `" b4 "` is `B4`. No leading zeros (`A01` is refused).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Coord::parse_exact(&s.trim().to_ascii_uppercase()).ok_or_else(|| {
            ParseError::new(format!("Invalid coordinate {s:?} (expected A1 to J10)"))
        })
    }
}

/// One cell of a board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cell {
    /// `.`: water not shot at (on a fog board: not shot at).
    Empty,
    /// `S`: ship, not hit (full boards only).
    Ship,
    /// `H`: hit ship.
    Hit,
    /// `M`: a shot into water.
    Miss,
}

impl Cell {
    fn from_byte(b: u8) -> Option<Cell> {
        match b {
            b'.' => Some(Cell::Empty),
            b'S' => Some(Cell::Ship),
            b'H' => Some(Cell::Hit),
            b'M' => Some(Cell::Miss),
            _ => None,
        }
    }

    fn as_char(self) -> char {
        match self {
            Cell::Empty => '.',
            Cell::Ship => 'S',
            Cell::Hit => 'H',
            Cell::Miss => 'M',
        }
    }

    /// True for cells already shot at (`H` or `M`).
    pub fn is_targeted(self) -> bool {
        matches!(self, Cell::Hit | Cell::Miss)
    }

    /// True for ship cells, hit or not.
    pub fn is_ship(self) -> bool {
        matches!(self, Cell::Ship | Cell::Hit)
    }
}

/// A 10×10 board, row-major (`A1` first).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Board {
    cells: [Cell; CELLS],
}

impl Board {
    /// An empty board.
    pub fn empty() -> Board {
        Board {
            cells: [Cell::Empty; CELLS],
        }
    }

    /// The cell at `c`.
    pub fn get(&self, c: Coord) -> Cell {
        self.cells[c.index()]
    }

    /// All cells, row-major.
    pub fn cells(&self) -> &[Cell; CELLS] {
        &self.cells
    }

    /// The board as the shooter sees it: every `S` shown as `.`.
    pub fn fog(&self) -> Board {
        let mut fog = self.clone();
        for cell in &mut fog.cells {
            if *cell == Cell::Ship {
                *cell = Cell::Empty;
            }
        }
        fog
    }

    /// Number of shots taken at this board.
    pub fn shots(&self) -> usize {
        self.cells.iter().filter(|c| c.is_targeted()).count()
    }

    /// True when every ship cell is hit.
    pub fn all_sunk(&self) -> bool {
        !self.cells.contains(&Cell::Ship)
    }

    /// The ships: each a list of row-major indices (sorted), found as groups of touching ship
    /// cells (8-neighbourhood). On a valid board each group is one straight ship.
    pub fn ships(&self) -> Vec<Vec<usize>> {
        let mut seen = [false; CELLS];
        let mut ships = Vec::new();
        for start in 0..CELLS {
            if seen[start] || !self.cells[start].is_ship() {
                continue;
            }
            let mut group = Vec::new();
            let mut stack = vec![start];
            seen[start] = true;
            while let Some(i) = stack.pop() {
                group.push(i);
                for n in neighbours8(i) {
                    if !seen[n] && self.cells[n].is_ship() {
                        seen[n] = true;
                        stack.push(n);
                    }
                }
            }
            group.sort_unstable();
            ships.push(group);
        }
        ships
    }

    /// The ship holding cell `index` (indices sorted), if it is a ship cell.
    fn ship_at(&self, index: usize) -> Option<Vec<usize>> {
        self.ships().into_iter().find(|ship| ship.contains(&index))
    }

    /// Parses ten `/`-separated rows of ten cells; `fog` boards may not contain `S`.
    fn parse(text: &str, key: &str, fog: bool) -> Result<Board, ParseError> {
        let rows: Vec<&str> = text.split('/').collect();
        if rows.len() != SIZE {
            return Err(invalid(format!(
                "{key} needs 10 rows separated by '/', found {}",
                rows.len()
            )));
        }
        let mut board = Board::empty();
        for (r, row) in rows.iter().enumerate() {
            let found = row.chars().count();
            if found != SIZE {
                return Err(invalid(format!(
                    "{key} row {} needs 10 cells, found {found}",
                    r + 1
                )));
            }
            for (c, ch) in row.chars().enumerate() {
                let cell = u8::try_from(ch)
                    .ok()
                    .and_then(Cell::from_byte)
                    .filter(|&cell| !(fog && cell == Cell::Ship));
                let Some(cell) = cell else {
                    let allowed = if fog { "., H, M" } else { "., S, H, M" };
                    return Err(invalid(format!(
                        "{key} has {ch:?} at {} (allowed: {allowed})",
                        Coord::new(c, r).map(|x| x.to_string()).unwrap_or_default()
                    )));
                };
                board.cells[r * SIZE + c] = cell;
            }
        }
        Ok(board)
    }

    /// Checks that the ships are exactly the fleet, straight and not touching.
    fn check_fleet(&self, key: &str) -> Result<(), ParseError> {
        let ships = self.ships();
        for ship in &ships {
            let first = ship[0];
            let horizontal = ship.iter().all(|&i| i / SIZE == first / SIZE)
                && ship.windows(2).all(|w| w[1] == w[0] + 1);
            let vertical = ship.windows(2).all(|w| w[1] == w[0] + SIZE);
            if !(horizontal || vertical) || ship.len() > usize::from(FLEET[0]) {
                return Err(invalid(format!(
                    "{key} has ships that touch or bend at {}",
                    Coord::from_index(first)
                        .map(|c| c.to_string())
                        .unwrap_or_default()
                )));
            }
        }
        let mut lengths: Vec<usize> = ships.iter().map(Vec::len).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        let expected: Vec<usize> = FLEET.iter().map(|&n| usize::from(n)).collect();
        if lengths != expected {
            let found = lengths
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",");
            return Err(invalid(format!(
                "{key} must hold ships of lengths 5,4,3,3,2, found {}",
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found
                }
            )));
        }
        Ok(())
    }

    /// A random board holding the fleet, ships never touching (not even diagonally). Each ship,
    /// longest first, takes a uniformly random placement among those still possible.
    pub fn random(rng: &mut GameRng) -> Board {
        // A dead end (no room left for a ship) is practically impossible with this fleet; start
        // over when it happens, and after many attempts use a fixed valid layout.
        for _ in 0..1000 {
            if let Some(board) = Board::try_random(rng) {
                return board;
            }
        }
        let mut board = Board::empty();
        for (ship, &len) in FLEET.iter().enumerate() {
            for k in 0..usize::from(len) {
                board.cells[ship * 2 * SIZE + k] = Cell::Ship;
            }
        }
        board
    }

    fn try_random(rng: &mut GameRng) -> Option<Board> {
        let mut board = Board::empty();
        let mut blocked = [false; CELLS];
        for &len in &FLEET {
            let options: Vec<Vec<usize>> = placements(usize::from(len))
                .filter(|cells| cells.iter().all(|&i| !blocked[i]))
                .collect();
            if options.is_empty() {
                return None;
            }
            let chosen = &options[rng.random_range(0..options.len())];
            for &i in chosen {
                board.cells[i] = Cell::Ship;
                blocked[i] = true;
                for n in neighbours8(i) {
                    blocked[n] = true;
                }
            }
        }
        Some(board)
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in 0..SIZE {
            if row > 0 {
                f.write_str("/")?;
            }
            for col in 0..SIZE {
                write!(f, "{}", self.cells[row * SIZE + col].as_char())?;
            }
        }
        Ok(())
    }
}

/// All straight placements of a ship of `len` cells: horizontal ones row by row, then vertical
/// ones; each as row-major indices in order.
pub(crate) fn placements(len: usize) -> impl Iterator<Item = Vec<usize>> {
    let horizontal = (0..SIZE).flat_map(move |row| {
        (0..=SIZE - len).map(move |col| (0..len).map(|k| row * SIZE + col + k).collect())
    });
    let vertical = (0..=SIZE - len).flat_map(move |row| {
        (0..SIZE).map(move |col| (0..len).map(|k| (row + k) * SIZE + col).collect())
    });
    horizontal.chain(vertical)
}

/// The up to eight neighbours of a row-major index.
pub(crate) fn neighbours8(index: usize) -> impl Iterator<Item = usize> {
    let (row, col) = ((index / SIZE) as i32, (index % SIZE) as i32);
    (-1..=1i32)
        .flat_map(move |dr| (-1..=1i32).map(move |dc| (dr, dc)))
        .filter(|&(dr, dc)| dr != 0 || dc != 0)
        .filter_map(move |(dr, dc)| {
            let (r, c) = (row + dr, col + dc);
            ((0..SIZE as i32).contains(&r) && (0..SIZE as i32).contains(&c))
                .then(|| (r as usize) * SIZE + c as usize)
        })
}

pub use crate::side::{Side, Status};

/// What a shot did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Water.
    Miss,
    /// A ship cell; the ship still floats.
    Hit,
    /// The last unhit cell of a ship of this length.
    Sunk(u8),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Miss => f.write_str("miss"),
            Outcome::Hit => f.write_str("hit"),
            Outcome::Sunk(n) => write!(f, "sunk({n})"),
        }
    }
}

/// A shot and its outcome (`LA`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shot {
    /// The cell shot at.
    pub coord: Coord,
    /// What it did.
    pub outcome: Outcome,
}

impl fmt::Display for Shot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.coord, self.outcome)
    }
}

impl FromStr for Shot {
    type Err = ParseError;

    /// The canonical form only: `B4:miss`, `B4:hit`, `B4:sunk(3)`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || invalid(format!("bad last action {s:?}"));
        let (coord, outcome) = s.split_once(':').ok_or_else(bad)?;
        let coord = Coord::parse_exact(coord).ok_or_else(bad)?;
        let outcome = match outcome {
            "miss" => Outcome::Miss,
            "hit" => Outcome::Hit,
            other => {
                let n = other
                    .strip_prefix("sunk(")
                    .and_then(|rest| rest.strip_suffix(')'))
                    .and_then(|n| match n {
                        "2" => Some(2),
                        "3" => Some(3),
                        "4" => Some(4),
                        "5" => Some(5),
                        _ => None,
                    })
                    .ok_or_else(bad)?;
                Outcome::Sunk(n)
            }
        };
        Ok(Shot { coord, outcome })
    }
}

/// A sea battle position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeaBattleState {
    /// `[P, O]`: the player's and the opponent's full boards.
    boards: [Board; 2],
    turn: Side,
    status: Status,
    last_action: Option<Shot>,
    winner: Option<Side>,
}

fn board_index(owner: Side) -> usize {
    match owner {
        Side::Player => 0,
        Side::Opponent => 1,
    }
}

impl SeaBattleState {
    /// A new game: both fleets placed at random from `rng` (the player's first), nothing shot
    /// yet, the player to fire.
    pub fn new_game(rng: &mut GameRng) -> SeaBattleState {
        let player = Board::random(rng);
        let opponent = Board::random(rng);
        SeaBattleState::from_boards(player, opponent)
    }

    /// A game about to start with the given full boards (no shots on them are expected).
    fn from_boards(player: Board, opponent: Board) -> SeaBattleState {
        SeaBattleState {
            boards: [player, opponent],
            turn: Side::Player,
            status: Status::InProgress,
            last_action: None,
            winner: None,
        }
    }

    /// The full board of `owner` (`P` for the player, `O` for the opponent).
    pub fn board(&self, owner: Side) -> &Board {
        &self.boards[board_index(owner)]
    }

    /// The board `shooter` fires at.
    pub fn target_board(&self, shooter: Side) -> &Board {
        self.board(shooter.other())
    }

    /// What `shooter` knows of the board it fires at (`F` for the player, `OF` for the opponent).
    pub fn fog(&self, shooter: Side) -> Board {
        self.target_board(shooter).fog()
    }

    /// The side that fires next.
    pub fn turn(&self) -> Side {
        self.turn
    }

    /// In progress or over.
    pub fn status(&self) -> Status {
        self.status
    }

    /// True when the game is over.
    pub fn is_over(&self) -> bool {
        self.status == Status::GameOver
    }

    /// The last shot, if any.
    pub fn last_action(&self) -> Option<Shot> {
        self.last_action
    }

    /// The winner, once the game is over.
    pub fn winner(&self) -> Option<Side> {
        self.winner
    }

    /// Untargeted cells of the board the side to move fires at, row-major (`A1, B1, …, J10`);
    /// empty when the game is over.
    pub fn legal_moves(&self) -> Vec<Coord> {
        if self.is_over() {
            return Vec::new();
        }
        let target = self.target_board(self.turn);
        (0..CELLS)
            .filter(|&i| !target.cells[i].is_targeted())
            .filter_map(Coord::from_index)
            .collect()
    }

    /// Fires at a coordinate given as text (trimmed, case-insensitive).
    ///
    /// Errors (message `Illegal move.`), checked in this order: `game_over`, `invalid_coord`,
    /// `already_targeted`.
    pub fn apply_str(&self, coord: &str) -> Result<SeaBattleState, MoveError> {
        if self.is_over() {
            return Err(MoveError::new("game_over", ILLEGAL_MOVE));
        }
        let coord: Coord = coord
            .parse()
            .map_err(|_| MoveError::new("invalid_coord", ILLEGAL_MOVE))?;
        self.apply(coord)
    }

    /// The side to move fires at `coord`; returns the new position.
    ///
    /// Errors (message `Illegal move.`): `game_over`, `already_targeted`.
    pub fn apply(&self, coord: Coord) -> Result<SeaBattleState, MoveError> {
        if self.is_over() {
            return Err(MoveError::new("game_over", ILLEGAL_MOVE));
        }
        let shooter = self.turn;
        let mut next = self.clone();
        let target = &mut next.boards[board_index(shooter.other())];
        let i = coord.index();
        let outcome = match target.cells[i] {
            Cell::Hit | Cell::Miss => return Err(MoveError::new("already_targeted", ILLEGAL_MOVE)),
            Cell::Empty => {
                target.cells[i] = Cell::Miss;
                Outcome::Miss
            }
            Cell::Ship => {
                target.cells[i] = Cell::Hit;
                match target.ship_at(i) {
                    Some(ship) if ship.iter().all(|&j| target.cells[j] == Cell::Hit) => {
                        Outcome::Sunk(ship.len() as u8)
                    }
                    _ => Outcome::Hit,
                }
            }
        };
        if target.all_sunk() {
            next.status = Status::GameOver;
            next.winner = Some(shooter);
        }
        next.turn = shooter.other();
        next.last_action = Some(Shot { coord, outcome });
        Ok(next)
    }

    /// What `shooter` legitimately knows of its target: the fog board plus the sunk
    /// announcements (which hits belong to sunk ships, and so which ships are left).
    pub fn view(&self, shooter: Side) -> FogView {
        FogView::from_target(self.target_board(shooter))
    }

    /// Legal moves of the side to move ordered best first by the hard AI's probability density
    /// (ties in row-major order). Uses only the shooter's [`FogView`].
    pub fn ranked_moves(&self) -> Vec<Coord> {
        if self.is_over() {
            return Vec::new();
        }
        self.view(self.turn).ranked()
    }

    /// The built-in AI's shot for the side to move (see [`FogView::choose`]); `None` when the game
    /// is over. It never looks at unhit ship cells. `limits` is accepted for uniformity; the
    /// density computation is exact and fast, so no time budget is needed.
    pub fn choose_move(
        &self,
        level: Level,
        _limits: SearchLimits,
        rng: &mut GameRng,
    ) -> Option<Coord> {
        if self.is_over() {
            return None;
        }
        self.view(self.turn).choose(level, rng)
    }
}

impl fmt::Display for SeaBattleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "P:{}|O:{}|F:{}|OF:{}|T:{}|ST:{}|LA:",
            self.boards[0],
            self.boards[1],
            self.boards[1].fog(),
            self.boards[0].fog(),
            self.turn,
            self.status
        )?;
        match self.last_action {
            Some(shot) => write!(f, "{shot}")?,
            None => f.write_str("-")?,
        }
        match self.winner {
            Some(w) => write!(f, "|W:{w}"),
            None => f.write_str("|W:-"),
        }
    }
}

impl FromStr for SeaBattleState {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const KEYS: [&str; 8] = ["P", "O", "F", "OF", "T", "ST", "LA", "W"];
        let fields: Vec<&str> = s.trim().split('|').collect();
        if fields.len() != KEYS.len() {
            return Err(invalid(format!(
                "expected 8 fields P|O|F|OF|T|ST|LA|W, found {}",
                fields.len()
            )));
        }
        let mut v = [""; 8];
        for (i, (field, key)) in fields.iter().zip(KEYS).enumerate() {
            v[i] = field
                .strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(':'))
                .ok_or_else(|| invalid(format!("field {} must start with \"{key}:\"", i + 1)))?;
        }
        let player = Board::parse(v[0], "P", false)?;
        let opponent = Board::parse(v[1], "O", false)?;
        let fog = Board::parse(v[2], "F", true)?;
        let opponent_fog = Board::parse(v[3], "OF", true)?;
        let turn = match v[4] {
            "player" => Side::Player,
            "opponent" => Side::Opponent,
            other => {
                return Err(invalid(format!(
                    "bad turn {other:?} (expected player or opponent)"
                )));
            }
        };
        let status = match v[5] {
            "in_progress" => Status::InProgress,
            "game_over" => Status::GameOver,
            other => {
                return Err(invalid(format!(
                    "bad status {other:?} (expected in_progress or game_over)"
                )));
            }
        };
        let last_action = match v[6] {
            "-" => None,
            la => Some(la.parse::<Shot>()?),
        };
        let winner = match v[7] {
            "-" => None,
            "player" => Some(Side::Player),
            "opponent" => Some(Side::Opponent),
            other => {
                return Err(invalid(format!(
                    "bad winner {other:?} (expected player, opponent or -)"
                )));
            }
        };
        player.check_fleet("P")?;
        opponent.check_fleet("O")?;
        for (fog, full, key, full_key) in [
            (&fog, &opponent, "F", "O"),
            (&opponent_fog, &player, "OF", "P"),
        ] {
            if let Some(i) = (0..CELLS).find(|&i| fog.cells[i] != full.fog().cells[i]) {
                return Err(invalid(format!(
                    "{key} does not match the shots on {full_key} at {}",
                    Coord::from_index(i)
                        .map(|c| c.to_string())
                        .unwrap_or_default()
                )));
            }
        }
        let (player_shots, opponent_shots) = (opponent.shots(), player.shots());
        let expected_opponent_shots = match turn {
            Side::Player => player_shots,
            Side::Opponent => player_shots.wrapping_sub(1),
        };
        if opponent_shots != expected_opponent_shots {
            return Err(invalid(format!(
                "shot counts do not fit T:{turn}: the player fired {player_shots}, the opponent \
                 {opponent_shots} (the player fires first, then the sides alternate)"
            )));
        }
        let state = SeaBattleState {
            boards: [player, opponent],
            turn,
            status,
            last_action,
            winner,
        };
        state.check_outcome()?;
        state.check_last_action(player_shots + opponent_shots)?;
        Ok(state)
    }
}

impl SeaBattleState {
    fn check_outcome(&self) -> Result<(), ParseError> {
        let player_fleet_sunk = self.boards[0].all_sunk();
        let opponent_fleet_sunk = self.boards[1].all_sunk();
        let sunk_by = match (player_fleet_sunk, opponent_fleet_sunk) {
            (true, true) => return Err(invalid("both fleets are sunk")),
            (false, true) => Some(Side::Player),
            (true, false) => Some(Side::Opponent),
            (false, false) => None,
        };
        match (self.status, sunk_by) {
            (Status::InProgress, Some(w)) => Err(invalid(format!(
                "ST must be game_over: the {w} has sunk every ship"
            ))),
            (Status::InProgress, None) if self.winner.is_some() => {
                Err(invalid("W must be - while the game is in progress"))
            }
            (Status::GameOver, None) => Err(invalid("ST is game_over but no fleet is sunk")),
            (Status::GameOver, Some(w)) if self.winner != Some(w) => {
                Err(invalid(format!("W must be {w}: the {w} sank every ship")))
            }
            (Status::GameOver, Some(w)) if self.turn != w.other() => Err(invalid(format!(
                "T must be {} after the {w}'s winning shot",
                w.other()
            ))),
            _ => Ok(()),
        }
    }

    fn check_last_action(&self, total_shots: usize) -> Result<(), ParseError> {
        let Some(shot) = self.last_action else {
            return if total_shots == 0 {
                Ok(())
            } else {
                Err(invalid("LA must name the last shot once shots were fired"))
            };
        };
        if total_shots == 0 {
            return Err(invalid("LA must be - before the first shot"));
        }
        let shooter = self.turn.other();
        let board = self.target_board(shooter);
        let actual = match board.get(shot.coord) {
            Cell::Miss => Some(Outcome::Miss),
            Cell::Hit => match board.ship_at(shot.coord.index()) {
                Some(ship) if ship.iter().all(|&j| board.cells[j] == Cell::Hit) => {
                    Some(Outcome::Sunk(ship.len() as u8))
                }
                _ => Some(Outcome::Hit),
            },
            Cell::Empty | Cell::Ship => None,
        };
        match actual {
            Some(outcome) if outcome == shot.outcome => Ok(()),
            Some(outcome) => Err(invalid(format!(
                "LA says {} but the board shows {}:{outcome}",
                shot, shot.coord
            ))),
            None => Err(invalid(format!(
                "LA names {} but the {shooter}'s target board has no shot there",
                shot.coord
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
