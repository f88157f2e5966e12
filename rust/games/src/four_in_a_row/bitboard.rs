//! The classic 7 × (6 + 1) Connect-Four bitboard.
//!
//! Bit `col * 7 + row` is the cell in column `col` (0 = leftmost) and row `row` (0 = bottom).
//! The seventh bit of each column is a sentinel that is always empty, so shifts by 1 (vertical),
//! 7 (horizontal), 6 and 8 (the two diagonals) never wrap from one column into the next.

/// Number of columns.
pub const WIDTH: usize = 7;
/// Number of rows.
pub const HEIGHT: usize = 6;
/// Bits per column (rows plus the sentinel).
pub(crate) const H1: usize = HEIGHT + 1;
/// Number of cells.
pub const CELLS: usize = WIDTH * HEIGHT;

/// One bit at the bottom cell of every column.
pub(crate) const BOTTOM_MASK: u64 = {
    let mut m = 0u64;
    let mut c = 0;
    while c < WIDTH {
        m |= 1 << (c * H1);
        c += 1;
    }
    m
};

/// Every playable cell.
pub(crate) const BOARD_MASK: u64 = BOTTOM_MASK * ((1 << HEIGHT) - 1);

/// All playable cells of column `col`.
pub(crate) const fn column_mask(col: usize) -> u64 {
    ((1u64 << HEIGHT) - 1) << (col * H1)
}

/// The top playable cell of column `col`.
pub(crate) const fn top_mask(col: usize) -> u64 {
    1u64 << (HEIGHT - 1 + col * H1)
}

/// The bit of the cell at `col`, `row` (row 0 = bottom).
pub(crate) const fn cell(col: usize, row: usize) -> u64 {
    1u64 << (col * H1 + row)
}

/// True when `discs` contains four in a row in any direction.
pub(crate) fn has_four(discs: u64) -> bool {
    for shift in [1, H1, H1 - 1, H1 + 1] {
        let m = discs & (discs >> shift);
        if m & (m >> (2 * shift)) != 0 {
            return true;
        }
    }
    false
}

/// Empty cells (anywhere on the board, not only playable ones) that would complete four in a
/// row for `discs`, given the occupied cells `mask`.
pub(crate) fn winning_cells(discs: u64, mask: u64) -> u64 {
    // Vertical: three below.
    let mut r = (discs << 1) & (discs << 2) & (discs << 3);
    for shift in [H1, H1 - 1, H1 + 1] {
        let mut p = (discs << shift) & (discs << (2 * shift));
        r |= p & (discs << (3 * shift));
        r |= p & (discs >> shift);
        p = (discs >> shift) & (discs >> (2 * shift));
        r |= p & (discs << shift);
        r |= p & (discs >> (3 * shift));
    }
    r & (BOARD_MASK ^ mask)
}

/// The cells where a disc can be dropped now (one per non-full column).
pub(crate) fn playable(mask: u64) -> u64 {
    (mask + BOTTOM_MASK) & BOARD_MASK
}

/// For every cell, how many four-cell lines pass through it (3‥13), the classic positional
/// weight: centre cells take part in more lines.
pub(crate) const CELL_WEIGHTS: [[i32; HEIGHT]; WIDTH] = {
    let mut w = [[0i32; HEIGHT]; WIDTH];
    // Directions as (dc, dr).
    let dirs: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];
    let mut d = 0;
    while d < 4 {
        let (dc, dr) = dirs[d];
        let mut c = 0i32;
        while c < WIDTH as i32 {
            let mut r = 0i32;
            while r < HEIGHT as i32 {
                let (ec, er) = (c + 3 * dc, r + 3 * dr);
                if ec >= 0 && ec < WIDTH as i32 && er >= 0 && er < HEIGHT as i32 {
                    let mut k = 0;
                    while k < 4 {
                        w[(c + k * dc) as usize][(r + k * dr) as usize] += 1;
                        k += 1;
                    }
                }
                r += 1;
            }
            c += 1;
        }
        d += 1;
    }
    w
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_have_the_expected_sizes() {
        assert_eq!(BOARD_MASK.count_ones() as usize, CELLS);
        assert_eq!(BOTTOM_MASK.count_ones() as usize, WIDTH);
        assert_eq!(column_mask(3).count_ones() as usize, HEIGHT);
        assert_eq!(top_mask(0), cell(0, 5));
        assert_eq!(BOTTOM_MASK & column_mask(6), cell(6, 0));
    }

    #[test]
    fn fours_in_every_direction() {
        let horizontal = cell(0, 0) | cell(1, 0) | cell(2, 0) | cell(3, 0);
        let vertical = cell(6, 2) | cell(6, 3) | cell(6, 4) | cell(6, 5);
        let diag_up = cell(1, 0) | cell(2, 1) | cell(3, 2) | cell(4, 3);
        let diag_down = cell(3, 5) | cell(4, 4) | cell(5, 3) | cell(6, 2);
        for four in [horizontal, vertical, diag_up, diag_down] {
            assert!(has_four(four));
            // Removing any disc breaks it.
            let mut bits = four;
            while bits != 0 {
                let b = bits & bits.wrapping_neg();
                assert!(!has_four(four ^ b));
                bits ^= b;
            }
        }
        // No wrap-around between columns.
        assert!(!has_four(cell(0, 5) | cell(1, 0) | cell(1, 1) | cell(1, 2)));
        assert!(!has_four(cell(0, 3) | cell(0, 4) | cell(0, 5) | cell(1, 0)));
    }

    #[test]
    fn winning_cells_finds_gaps_and_ends() {
        let discs = cell(0, 0) | cell(1, 0) | cell(3, 0);
        assert_eq!(winning_cells(discs, discs), cell(2, 0));
        let three = cell(2, 0) | cell(3, 0) | cell(4, 0);
        assert_eq!(winning_cells(three, three), cell(1, 0) | cell(5, 0));
        let tower = cell(4, 0) | cell(4, 1) | cell(4, 2);
        assert_eq!(winning_cells(tower, tower), cell(4, 3));
    }

    #[test]
    fn centre_weights_are_classic() {
        assert_eq!(CELL_WEIGHTS[0], [3, 4, 5, 5, 4, 3]);
        assert_eq!(CELL_WEIGHTS[3], [7, 10, 13, 13, 10, 7]);
    }
}
