//! Each screen's place in its table (row, sort, scrolled columns), the popup's scroll and what
//! the last frame measured: the app's methods read and move the selected screen's.

use super::{App, Sort, row_order};

/// A screen's own place in its table: the cursor row (counting rows as shown), the sort and the
/// first scrolled column. Each screen keeps its own, so a tab left and come back to is where it
/// was; a new date's rows put every screen's cursor back on its first row.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cursor {
    pub(super) row: usize,
    /// None: the report's own order.
    pub(super) sort: Option<Sort>,
    /// The first scrolled column shown after the pinned first one.
    pub(super) first_col: usize,
}

impl App {
    /// The selected screen's place in its table.
    pub(super) fn cur(&self) -> &Cursor {
        &self.cursors[self.screen.index()]
    }

    pub(super) fn cur_mut(&mut self) -> &mut Cursor {
        &mut self.cursors[self.screen.index()]
    }

    /// Every screen's cursor on its first row: the date's rows are new.
    pub(super) fn rows_to_top(&mut self) {
        for c in &mut self.cursors {
            c.row = 0;
        }
    }

    /// The cursor's row, counting rows as the table shows them.
    pub fn row(&self) -> usize {
        self.cur().row
    }

    /// Puts the cursor on row `row` as shown (the last row, past the end).
    pub fn select_row(&mut self, row: usize) {
        self.cur_mut().row = row;
        self.clamp_row();
    }

    pub fn sort(&self) -> Option<Sort> {
        self.cur().sort
    }

    pub(crate) fn first_col(&self) -> usize {
        self.cur().first_col
    }

    pub(crate) fn popup_scroll(&self) -> u16 {
        self.popup_scroll
    }

    /// What the last frame measured (a page's rows, the columns' room, the popup's lines).
    pub fn last_drawn(&self) -> crate::tui::widgets::FrameMeasures {
        self.drawn
    }

    /// Takes in what a frame measured: the loop calls it after each draw.
    pub fn measured(&mut self, drawn: crate::tui::widgets::FrameMeasures) {
        self.drawn = drawn;
    }

    /// The row under the cursor as an index into the report's own rows (the table may be sorted).
    pub(crate) fn source_row(&self) -> usize {
        match (self.cur().sort, self.current_table()) {
            (Some(s), Some(t)) => row_order(&t, Some(s)).get(self.cur().row).copied().unwrap_or(self.cur().row),
            _ => self.cur().row,
        }
    }

    /// Sorts the table as `sort` says, keeping the cursor on the same row.
    pub(super) fn set_sort(&mut self, sort: Option<Sort>) {
        let Some(t) = self.current_table() else { return };
        let at = self.source_row();
        self.cur_mut().sort = sort;
        self.cur_mut().row = row_order(&t, sort).iter().position(|&i| i == at).unwrap_or(0);
        self.message = match sort {
            Some(s) => format!(
                "sorted by {} {}",
                t.columns.get(s.column).map(|c| c.label.as_str()).unwrap_or("?"),
                if s.descending { "▼ (S reverses)" } else { "▲ (S reverses, s the next column)" }
            ),
            None => "unsorted: the report's own order".into(),
        };
    }

    pub(super) fn clamp_row(&mut self) {
        let n = self.current_table().map(|t| t.rows.len()).unwrap_or(0);
        self.cur_mut().row = self.cur().row.min(n.saturating_sub(1));
    }
}
