//! What each action of the key table does to the explorer's state.

use super::*;

impl App {
    pub fn update(&mut self, action: Action) {
        if self.scroll_popup(action) {
            return;
        }
        // Every popup opens from here, at its first line.
        self.popup_scroll = 0;
        match action {
            Action::Quit => self.ask_quit(),
            Action::Help => self.popup = Some(Popup::Help),
            Action::NextDate => self.move_date(1),
            Action::PrevDate => self.move_date(-1),
            Action::JumpToDate => self.popup = Some(Popup::Input { kind: InputKind::JumpToDate, text: String::new() }),
            Action::NextScreen => self.set_screen(self.screen.next()),
            Action::PrevScreen => self.set_screen(self.screen.prev()),
            Action::Screen(s) => self.set_screen(s),
            Action::RowDown => self.move_row(1),
            Action::RowUp => self.move_row(-1),
            Action::PageDown => self.move_row(self.drawn.page_rows as i64),
            Action::PageUp => self.move_row(-(self.drawn.page_rows as i64)),
            Action::Top => self.cur_mut().row = 0,
            Action::Bottom => self.cur_mut().row = self.current_table().map(|t| t.rows.len()).unwrap_or(0).saturating_sub(1),
            Action::NextMatch => self.next_match(1),
            Action::PrevMatch => self.next_match(-1),
            Action::Drill => self.drill(),
            Action::Back => self.cancel_running(),
            Action::Rebuild => self.on_selected_date(|d| (format!("previewing a rebuild of {d}"), Job::PreviewRebuild(d))),
            Action::RetryV1 => self.on_selected_date(|d| (format!("running v1 for {d}"), Job::RetryV1(d))),
            Action::LandNext => self.ask_land_next(),
            Action::LandCorrection => self.ask_land_correction(),
            Action::CrashDemo => self.crash_demo(),
            Action::Rollback => self.ask_rollback(),
            Action::Reopen => match self.selected_date() {
                Some(d) => {
                    let kind = match &self.user {
                        Some(by) => InputKind::ReopenReason(d, by.clone()),
                        None => InputKind::ReopenBy(d),
                    };
                    self.popup = Some(Popup::Input { kind, text: String::new() });
                }
                None => self.message = "no date selected".into(),
            },
            Action::Reset => self.ask_reset(),
            Action::SplitByCountry => self.by_country = !self.by_country,
            Action::FilterCountry => self.next_country_filter(),
            Action::Search => self.popup = Some(Popup::Input { kind: InputKind::SearchBaskets, text: self.search.clone() }),
            Action::Copy => self.copy_basket_id(),
            Action::ColumnsRight => self.scroll_columns_right(),
            Action::ColumnsLeft => self.cur_mut().first_col = self.cur().first_col.saturating_sub(1),
            Action::SortNext => self.sort_next_column(),
            Action::SortReverse => {
                let sort = self.cur().sort.unwrap_or(Sort { column: 0, descending: false });
                self.set_sort(Some(Sort { descending: !sort.descending, ..sort }));
            }
            Action::ExportCsv => self.export(Format::Csv),
            Action::ExportJson => self.export(Format::Json),
            // A question's answers and a text field's keys: on_confirm_key and on_input_key take
            // them while one is open.
            Action::Confirm
            | Action::Cancel
            | Action::Submit
            | Action::CloseField
            | Action::DeleteChar
            | Action::ClearLine
            | Action::DeleteWord => {}
            Action::ToggleMouse => {
                self.mouse = !self.mouse;
                self.message = format!("mouse {}", if self.mouse { "on" } else { "off: the terminal's own selection works" });
            }
        }
    }

    /// A key while a text popup (help, an error, a detail) is open: it closes or scrolls it, and
    /// nothing else happens. False when no such popup is open.
    pub(super) fn scroll_popup(&mut self, action: Action) -> bool {
        if !matches!(self.popup, Some(Popup::Help | Popup::Error(_) | Popup::Detail { .. })) {
            return false;
        }
        let (shown, last) = self.drawn.popup_view;
        let scroll = &mut self.popup_scroll;
        match action {
            Action::Back | Action::Help | Action::Drill | Action::Quit => self.popup = None,
            Action::RowDown => *scroll = (*scroll + 1).min(last),
            Action::RowUp => *scroll = scroll.saturating_sub(1),
            Action::PageDown => *scroll = (*scroll + shown).min(last),
            Action::PageUp => *scroll = scroll.saturating_sub(shown),
            Action::Top => *scroll = 0,
            Action::Bottom => *scroll = last,
            _ => {}
        }
        true
    }

    /// Quits, or during a write, quits once it ends.
    pub(super) fn ask_quit(&mut self) {
        if self.running.as_ref().is_some_and(|r| r.writes) {
            self.quit_after_write = true;
            self.message = "quitting once the running write ends (Esc cancels it: then nothing of it commits)".into();
        } else {
            self.quit = true;
        }
    }

    /// Esc with work running: asks the loop to interrupt it.
    pub(super) fn cancel_running(&mut self) {
        if self.running.is_some() {
            self.cancel = true;
            self.message = "cancelling…".into();
        }
    }

    /// Starts the job `job` makes of the selected date, labelled, when a date is selected.
    pub(super) fn on_selected_date(&mut self, job: impl FnOnce(NaiveDate) -> (String, Job)) {
        if let Some(d) = self.selected_date() {
            let (label, job) = job(d);
            self.start(label, job);
        }
    }

    /// The crash demo: a rebuild of the selected date that fails after its third statement.
    pub(super) fn crash_demo(&mut self) {
        let late_days = self.view.as_ref().map(|v| v.check.late_days()).unwrap_or(crate::rules::DEFAULT_LATE_DAYS);
        self.on_selected_date(|d| {
            (format!("rebuilding {d} with a crash after statement 3"), Job::Rebuild { date: d, late_days, fail_after: Some(3) })
        });
    }

    /// The next country of the date as the Baskets filter, then none.
    pub(super) fn next_country_filter(&mut self) {
        if self.screen == Screen::Trend {
            // The trend shows one series at a time (a country's): the next one, round to the first.
            let Some(snap) = &self.snapshot else { return };
            let names: Vec<&String> = snap.trend.series.iter().map(|s| &s.label).collect();
            let shown = self.trend_series().map(|s| &s.label);
            let at = names.iter().position(|c| Some(*c) == shown).unwrap_or(0);
            self.country_filter = names.get((at + 1) % names.len().max(1)).map(|c| (*c).clone());
            self.cur_mut().row = 0;
            return;
        }
        // The date's parts (retail: its countries) that have re-sent entities.
        let countries: Vec<String> = self
            .baskets()
            .map(|r| {
                r.baskets.iter().map(|b| crate::reports::model::part_of(&r.model, &b.attributes)).collect::<std::collections::BTreeSet<_>>()
            })
            .map(|parts| parts.into_iter().filter(|p| !p.is_empty()).collect())
            .unwrap_or_default();
        self.country_filter = match &self.country_filter {
            None => countries.first().cloned(),
            Some(c) => countries.iter().skip_while(|x| *x != c).nth(1).cloned(),
        };
        self.cur_mut().row = 0;
    }

    pub(super) fn scroll_columns_right(&mut self) {
        if self.cur().first_col < self.drawn.col_room {
            self.cur_mut().first_col += 1;
        } else {
            self.message = "the last column is in view".into();
        }
    }

    /// Sorts by the next column (after the last, the report's own order again).
    pub(super) fn sort_next_column(&mut self) {
        let columns = self.current_table().map(|t| t.columns.len()).unwrap_or(0);
        let next = match self.cur().sort {
            None => Some(0),
            Some(s) => Some(s.column + 1).filter(|c| *c < columns),
        };
        self.set_sort(next.map(|column| Sort { column, descending: false }));
    }

    /// U: asks before it lands the world's next upload.
    pub(super) fn ask_land_next(&mut self) {
        let next = self.snapshot.as_ref().and_then(|s| s.next_upload);
        self.popup = Some(match next {
            Some(u) => Popup::Confirm {
                what: Confirmable::LandNext,
                text: question(
                    &format!(
                        "Land upload {u} and run v2 for it?\n\nIts rows join the lab for good (every write is a snapshot; b rolls silver and gold back)."
                    ),
                    "land",
                ),
            },
            None => Popup::Error("every upload of the world has landed: there is no next upload".into()),
        });
    }

    /// C: asks before it lands the next correction shipped with the world.
    pub(super) fn ask_land_correction(&mut self) {
        self.popup = Some(Popup::Confirm {
            what: Confirmable::LandCorrection,
            text: question(
                "Land the next correction shipped with the world, and run v2 for its upload?\n\n\
                 The corrected file becomes its path's next version; the dates it touches get new versions \
                 (every write is a snapshot; b rolls silver and gold back).",
                "land",
            ),
        });
    }

    /// b: asks before it rolls every date back to the selected snapshot.
    pub(super) fn ask_rollback(&mut self) {
        if let Some(s) = self.selected_snapshot() {
            self.popup = Some(Popup::Confirm {
                what: Confirmable::Rollback(s),
                text: question(
                    &format!(
                        "Roll silver and gold of EVERY business date back to snapshot {s}?\n\nEach date returns to the version \
                         snapshot {s} held, not only this one: later runs' changes to other dates are undone too. The \
                         rollback is a new snapshot: history is kept, and it can itself be rolled back."
                    ),
                    "roll back",
                ),
            });
        }
    }

    /// R: asks before it empties the lab.
    pub(super) fn ask_reset(&mut self) {
        self.popup = Some(Popup::Confirm {
            what: Confirmable::Reset,
            text: question("Reset the lab?\n\nThe raw zone, bronze, silver, gold and every snapshot are deleted.", "reset"),
        })
    }

    /// Moves to the next (or, `step` -1, previous) row of the table on screen that holds the
    /// search text, wrapping around; says so when none does.
    pub(super) fn next_match(&mut self, step: i64) {
        let q = self.search.to_lowercase();
        if q.is_empty() {
            self.message = "no search yet: / searches".into();
            return;
        }
        let Some(t) = self.current_table() else { return };
        let order = row_order(&t, self.cur().sort);
        let n = t.rows.len() as i64;
        let hit = (1..=n)
            .map(|k| (self.cur().row as i64 + step * k).rem_euclid(n.max(1)) as usize)
            .find(|&i| t.rows[order[i]].cells.iter().any(|c| c.display().to_lowercase().contains(&q)));
        match hit {
            Some(i) => {
                self.cur_mut().row = i;
                self.message = format!("match for '{}' on row {} of {n}", crate::sanitize::for_terminal(&self.search), i + 1);
            }
            None => self.message = format!("no row here holds '{}'", crate::sanitize::for_terminal(&self.search)),
        }
    }

    /// The screen `s`, at its own row, sort and columns as it was left (its table may have fewer
    /// rows since: the row is kept inside it).
    pub(super) fn set_screen(&mut self, s: Screen) {
        self.screen = s;
        // A status line speaks of the screen it was said on.
        self.message.clear();
        self.clamp_row();
    }

    pub(super) fn move_row(&mut self, delta: i64) {
        let n = self.current_table().map(|t| t.rows.len()).unwrap_or(0) as i64;
        if n > 0 {
            self.cur_mut().row = (self.cur().row as i64 + delta).clamp(0, n - 1) as usize;
        }
    }

    pub(super) fn basket_id_at_row(&self) -> Option<String> {
        self.behaviour().basket_at(self, self.source_row())
    }

    pub(super) fn copy_basket_id(&mut self) {
        use base64::Engine;
        if let Some(id) = self.basket_id_at_row() {
            let b64 = base64::engine::general_purpose::STANDARD.encode(id.as_bytes());
            self.terminal_writes.push(format!("\x1b]52;c;{b64}\x07"));
            self.message = format!("copied {} to the clipboard (OSC 52)", crate::sanitize::for_terminal(&id));
        }
    }

    pub(super) fn drill(&mut self) {
        self.popup = self.behaviour().drill(self, self.source_row());
    }

    /// An audit row opened before its date's reports arrived is drawn again with them (its
    /// entities come from the date's view). While a popup is open the cursor does not move, so
    /// the row is the one opened.
    pub(super) fn refresh_drill(&mut self) {
        if self.screen == Screen::Audit
            && matches!(self.popup, Some(Popup::Detail { .. }))
            && let Some(p) = self.behaviour().drill(self, self.source_row())
        {
            self.popup = Some(p);
        }
    }

    /// Writes the table on screen as it is shown (the search filter and the sort included) to a
    /// new file in the working directory: `recount-SCREEN-DATE.csv`, then `…-2.csv`, never over
    /// an earlier export.
    pub(super) fn export(&mut self, format: Format) {
        let (Some(d), Some(table)) = (self.selected_date(), self.current_table()) else { return };
        let order = row_order(&table, self.cur().sort);
        let shown = Table { rows: order.iter().filter_map(|&i| table.rows.get(i).cloned()).collect(), ..table }.dated(d);
        let (ext, text) = match format {
            Format::Json => {
                let rows: Vec<serde_json::Map<String, serde_json::Value>> = shown
                    .rows
                    .iter()
                    .map(|r| shown.columns.iter().zip(&r.cells).map(|(c, v)| (c.key.clone(), serde_json::json!(v))).collect())
                    .collect();
                ("json", crate::sanitize::json(serde_json::to_string_pretty(&rows).unwrap_or_default()) + "\n")
            }
            _ => ("csv", crate::reports::table::csv_of(std::slice::from_ref(&shown))),
        };
        let dir = self.export_dir.clone().or_else(|| std::env::current_dir().ok()).unwrap_or_else(std::env::temp_dir);
        let name = self.screen.file_word();
        let path = (1..)
            .map(|n| dir.join(if n == 1 { format!("recount-{name}-{d}.{ext}") } else { format!("recount-{name}-{d}-{n}.{ext}") }))
            .find(|p| !p.exists())
            .unwrap_or_else(|| dir.join(format!("recount-{name}-{d}.{ext}")));
        let written = std::fs::OpenOptions::new().write(true).create_new(true).open(&path).and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes())
        });
        self.message = match written {
            Ok(()) => format!("exported the {} row(s) on screen to {}", shown.rows.len(), path.display()),
            Err(e) => format!("export failed: {e}"),
        };
    }
}
