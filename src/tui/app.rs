//! The explorer's state and what each action does to it. Drawing reads this state and nothing
//! else; work that touches the lab goes to the worker as a `Job`.

use super::keys::Action;
use super::screen::Screen;
use super::worker::{DateView, Job, Reopening, Reply};
use crate::lake::v2::RebuildPreview;
use crate::reports::overview::LabOverview;
use crate::reports::table::{Format, Table};
use chrono::NaiveDate;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmable {
    /// A rebuild of a date under the window its preview showed.
    Rebuild {
        date: NaiveDate,
        late_days: u32,
    },
    Rollback(i64),
    Reset,
    /// Landing the world's next upload and running v2 for it.
    LandNext,
    /// Landing the next correction shipped with the world and running v2 for its upload.
    LandCorrection,
    /// Reopening a closed date with the decision typed for it.
    Reopen {
        date: NaiveDate,
        decision: Reopening,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    JumpToDate,
    SearchBaskets,
    /// Who decides to reopen the date, asked first when `$USER` does not say.
    ReopenBy(NaiveDate),
    /// Why finance reopens the date, and who decided.
    ReopenReason(NaiveDate, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Popup {
    Help,
    Error(String),
    /// A full cell, or the baskets behind a number.
    Detail {
        title: String,
        body: String,
    },
    Confirm {
        what: Confirmable,
        text: String,
    },
    Input {
        kind: InputKind,
        text: String,
    },
}

#[derive(Debug, Clone)]
pub struct Running {
    pub label: String,
    pub started: Instant,
    /// The running job writes to the lab.
    pub writes: bool,
    /// The running job is a (re)load of the navigator.
    pub loads: bool,
    /// DuckDB's estimate for the running statement, 0-100, when it has one.
    pub percent: Option<f64>,
}

impl Running {
    fn new(label: impl Into<String>) -> Running {
        Running { label: label.into(), started: Instant::now(), percent: None, writes: false, loads: false }
    }
}

pub struct App {
    /// Who is at the explorer, as `$USER` says (None: a reopening asks for the name).
    pub user: Option<String>,
    /// What the explorer reads when it is not the lab (`warehouse DIR`), shown beside the tabs.
    pub store: String,
    pub screen: Screen,
    pub snapshot: Option<LabOverview>,
    pub view: Option<DateView>,
    /// Index into the navigator's dates.
    pub selected: usize,
    pub popup: Option<Popup>,
    pub running: Option<Running>,
    pub message: String,
    pub by_country: bool,
    pub country_filter: Option<String>,
    pub search: String,
    pub mouse: bool,
    pub quit: bool,
    pub theme: super::theme::Theme,
    /// Jobs the app wants sent; the loop drains them (tests read them).
    pub outbox: Vec<Job>,
    /// Text the loop must write to the terminal raw (OSC 52).
    pub terminal_writes: Vec<String>,
    /// Esc during work: the loop interrupts DuckDB's running statement.
    pub cancel: bool,
    /// Quit was pressed during a write: quit when it ends.
    pub quit_after_write: bool,
    /// Loads that failed in a row: after `MAX_LOAD_FAILURES` the explorer stops reloading.
    pub load_failures: u32,
    /// The check of the selected date while the rest of its view loads (the Overview draws it).
    pub head: Option<crate::reports::check::CheckReport>,
    /// The date whose view follows its head: its load is no longer the running job (the user may
    /// act on the Overview meanwhile), so its view is taken in quietly when it comes.
    rest_pending: Option<NaiveDate>,
    /// The widgets' own state: the app's alone, read through its methods.
    cursor: Cursor,
    /// Where `e` and `E` write (the working directory unless set).
    export_dir: Option<std::path::PathBuf>,
    /// The foreign gold the Audit screen shows (`tui --audit`): None when none was given.
    pub audit: Option<Audit>,
    /// On a lab of a model other than retail: its dates and the selected date's reports, which
    /// every screen reads instead of retail's (`screens::model_home`).
    pub model: Option<ModelScreens>,
}

/// What the screens of a model lab read.
#[derive(Debug, Clone)]
pub struct ModelScreens {
    pub dates: crate::reports::model_day::DatesReport,
    pub day: Option<super::worker::ModelDay>,
}

/// The Audit screen's foreign gold: waiting for its first audit, audited, or unreadable.
#[derive(Debug, Clone)]
pub enum Audit {
    /// Asked for (its source), not audited yet.
    Pending(String),
    Done(Box<crate::reports::audit::AuditReport>),
    /// Why it could not be audited (a missing column, an unreadable file).
    Failed(String),
}

/// The table's and the popup's state: the cursor row (counting rows as shown), the sort, the
/// first scrolled column, the popup's first line, and what the last frame measured.
#[derive(Debug, Clone, Default)]
struct Cursor {
    row: usize,
    /// None: the report's own order.
    sort: Option<Sort>,
    /// The first scrolled column shown after the pinned first one.
    first_col: usize,
    popup_scroll: u16,
    drawn: super::draw::Drawn,
}

/// A table's sort: by a column, up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub column: usize,
    pub descending: bool,
}

/// The order the table's rows show in: indices into `table.rows`, sorted stably by `sort`.
pub(crate) fn row_order(table: &Table, sort: Option<Sort>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..table.rows.len()).collect();
    if let Some(s) = sort {
        let empty = crate::reports::Cell::Empty;
        order.sort_by(|&a, &b| {
            let (x, y) = (table.rows[a].cells.get(s.column).unwrap_or(&empty), table.rows[b].cells.get(s.column).unwrap_or(&empty));
            if s.descending { y.sort_cmp(x) } else { x.sort_cmp(y) }
        });
    }
    order
}

/// Loads that may fail in a row before the explorer stops reloading by itself.
const MAX_LOAD_FAILURES: u32 = 2;

/// The confirmation a rebuild's preview asks for; the rebuild runs under the window it shows.
fn confirm_rebuild(p: &RebuildPreview) -> Popup {
    let text = format!("{}\n\n{}", p.text(), super::keys::active().answers("rebuild"));
    Popup::Confirm { what: Confirmable::Rebuild { date: p.business_date, late_days: p.window.late_days }, text }
}

/// The confirmation a reopening asks for: what it takes in, the amount, and the reason.
fn confirm_reopen(date: NaiveDate, question: &str, decision: Reopening) -> Popup {
    let shown = crate::sanitize::for_terminal(&decision.reason).into_owned();
    let by = crate::sanitize::for_terminal(&decision.by).into_owned();
    let text = format!(
        "{}

Reason: {shown} (decided by {by})

{}",
        question,
        super::keys::active().answers("reopen")
    );
    Popup::Confirm { what: Confirmable::Reopen { date, decision }, text }
}

/// A question's text with its answers from the key table.
fn question(body: &str, verb: &str) -> String {
    format!("{body}\n\n{}", super::keys::active().answers(verb))
}

impl App {
    pub fn new(theme: super::theme::Theme, mouse: bool) -> App {
        App {
            screen: Screen::Overview,
            snapshot: None,
            view: None,
            selected: 0,
            popup: None,
            running: Some(Running { loads: true, ..Running::new("opening the lab") }),
            message: String::new(),
            by_country: false,
            country_filter: None,
            search: String::new(),
            mouse,
            quit: false,
            theme,
            outbox: vec![Job::Load(None)],
            terminal_writes: Vec::new(),
            cancel: false,
            quit_after_write: false,
            load_failures: 0,
            head: None,
            rest_pending: None,
            cursor: Cursor::default(),
            export_dir: None,
            store: String::new(),
            user: crate::lake::reopen::Decision::known_by(),
            audit: None,
            model: None,
        }
    }

    /// The cursor's row, counting rows as the table shows them.
    pub fn row(&self) -> usize {
        self.cursor.row
    }

    /// Puts the cursor on row `row` as shown (the last row, past the end).
    pub fn select_row(&mut self, row: usize) {
        self.cursor.row = row;
        self.clamp_row();
    }

    pub fn sort(&self) -> Option<Sort> {
        self.cursor.sort
    }

    pub(crate) fn first_col(&self) -> usize {
        self.cursor.first_col
    }

    pub(crate) fn popup_scroll(&self) -> u16 {
        self.cursor.popup_scroll
    }

    /// What the last frame measured (a page's rows, the columns' room, the popup's lines).
    pub fn last_drawn(&self) -> super::draw::Drawn {
        self.cursor.drawn
    }

    /// Takes in what a frame measured: the loop calls it after each draw.
    pub fn measured(&mut self, drawn: super::draw::Drawn) {
        self.cursor.drawn = drawn;
    }

    /// Exports go to `dir` instead of the working directory.
    pub fn export_to(&mut self, dir: std::path::PathBuf) {
        self.export_dir = Some(dir);
    }

    pub(crate) fn selected_date(&self) -> Option<NaiveDate> {
        self.snapshot.as_ref()?.dates.get(self.selected).map(|d| d.business_date)
    }

    fn start(&mut self, label: impl Into<String>, job: Job) {
        if self.running.is_some() {
            self.message = "busy: wait for the running work, or Esc to cancel it".into();
            return;
        }
        self.running = Some(Running { writes: job.writes(), ..Running::new(label) });
        self.outbox.push(job);
    }

    /// Another date's view: the navigator stays as it is.
    fn load_date(&mut self, d: NaiveDate) {
        self.view = None;
        self.head = None;
        self.running = Some(Running::new(format!("loading {d}")));
        self.outbox.push(Job::LoadDate(d));
    }

    fn load(&mut self, d: Option<NaiveDate>) {
        self.running = Some(Running { loads: true, ..Running::new("loading") });
        self.outbox.push(Job::Load(d));
    }

    /// Handles the worker's answer: each kind of reply in one place. A date's check ahead of its
    /// view, the view that follows it, and news of another process's write do not answer the
    /// running job; every other reply does (`on_answer`).
    pub fn on_reply(&mut self, reply: Reply) {
        match reply {
            Reply::DateHead(check) => self.on_head(*check),
            Reply::DateLoaded(view) if self.rest_pending == Some(view.check.business_date) => self.on_rest(*view),
            Reply::Paused(text) => self.message = text,
            Reply::Audited(audited) => {
                self.audit = Some(match audited {
                    Ok(report) => Audit::Done(report),
                    Err(why) => Audit::Failed(why),
                });
                self.clamp_row();
            }
            Reply::Changed(text) => {
                self.message = text;
                if self.running.is_none() {
                    let d = self.selected_date();
                    self.load(d);
                }
            }
            answer => self.on_answer(answer),
        }
    }

    /// A date's check, ahead of its view, for the date still selected: the Overview is complete,
    /// so the load stops being the running job; the rest of the view follows in the background.
    fn on_head(&mut self, check: crate::reports::check::CheckReport) {
        if Some(check.business_date) == self.selected_date() && self.running.as_ref().is_some_and(|r| !r.writes) {
            self.rest_pending = Some(check.business_date);
            self.head = Some(check);
            self.running = None;
            self.clamp_row();
        }
    }

    /// The rest of a view whose check came ahead: taken in quietly, if its date is still shown.
    fn on_rest(&mut self, view: DateView) {
        self.rest_pending = None;
        if Some(view.check.business_date) == self.selected_date() {
            self.head = None;
            self.view = Some(view);
            self.clamp_row();
            self.refresh_drill();
        }
    }

    /// A reply to the running job.
    fn on_answer(&mut self, reply: Reply) {
        let finished = self.running.take();
        if self.quit_after_write && finished.as_ref().is_some_and(|r| r.writes) {
            // The user asked to quit while this write ran: it has ended (committed or not).
            self.quit = true;
        }
        match reply {
            Reply::ModelLoaded(load) => {
                let super::worker::ModelLoad { overview, dates, day } = *load;
                let want = day.as_ref().map(|d| d.check.business_date);
                self.model = Some(ModelScreens { dates, day: day.map(|d| *d) });
                self.on_answer(Reply::Loaded(Box::new(overview), None));
                if let Some(i) = want.and_then(|w| self.snapshot.as_ref()?.dates.iter().position(|d| d.business_date == w)) {
                    self.selected = i;
                    self.clamp_row();
                }
            }
            Reply::ModelDate(day) => {
                if Some(day.check.business_date) == self.selected_date() {
                    if let Some(m) = &mut self.model {
                        m.day = Some(*day);
                    }
                    self.clamp_row();
                } else if let Some(d) = self.selected_date() {
                    self.load_date(d);
                }
            }
            Reply::Loaded(snap, view) => {
                self.load_failures = 0;
                let want = view.as_ref().map(|v| v.check.business_date).or_else(|| self.selected_date());
                self.selected =
                    want.and_then(|w| snap.dates.iter().position(|d| d.business_date == w)).unwrap_or(snap.dates.len().saturating_sub(1));
                // The morning's line, until something else is said.
                if self.message.is_empty() {
                    self.message = snap.banner.clone();
                }
                self.snapshot = Some(*snap);
                self.view = view.map(|v| *v);
                self.clamp_row();
            }
            Reply::DateLoaded(view) => {
                self.load_failures = 0;
                // A view for a date the user has already left is dropped.
                if Some(view.check.business_date) == self.selected_date() {
                    self.head = None;
                    self.view = Some(*view);
                    self.clamp_row();
                    self.refresh_drill();
                } else if let Some(d) = self.selected_date() {
                    self.load_date(d);
                }
            }
            Reply::Preview(p) => self.popup = Some(confirm_rebuild(&p)),
            Reply::ReopenPreview(d, text, decision) => self.popup = Some(confirm_reopen(d, &text, decision)),
            Reply::Done(text) => {
                self.message = text;
                let d = self.selected_date();
                self.load(d);
            }
            Reply::Failed(text) => self.on_failed(text, finished.is_some_and(|r| r.loads)),
            // Not answers: on_reply took them.
            Reply::DateHead(_) | Reply::Paused(_) | Reply::Changed(_) | Reply::Audited(_) => {}
        }
    }

    /// The running job failed; a load that keeps failing stops being retried, and says so.
    fn on_failed(&mut self, text: String, was_load: bool) {
        self.rest_pending = None;
        if was_load {
            self.load_failures += 1;
        }
        if self.load_failures >= MAX_LOAD_FAILURES {
            self.popup = Some(Popup::Error(format!(
                "{text}\n\nThe lab could not be loaded {} times in a row, so the explorer stopped retrying. \
                 Move to a date to try again, or quit.",
                self.load_failures
            )));
            return;
        }
        self.popup = Some(Popup::Error(text));
        let d = self.selected_date();
        self.load(d);
    }

    /// The screen's home: retail's, or on a model lab the model's.
    pub(crate) fn home(&self) -> &'static dyn super::screens::Home {
        match self.model {
            Some(_) => super::screens::model_home(self.screen),
            None => self.screen.home(),
        }
    }

    /// On a model lab, the selected date's reports once they have loaded.
    pub(crate) fn model_day(&self) -> Option<&super::worker::ModelDay> {
        self.model.as_ref()?.day.as_ref().filter(|d| Some(d.check.business_date) == self.selected_date())
    }

    /// The audit, once it has run.
    pub(crate) fn audit_report(&self) -> Option<&crate::reports::audit::AuditReport> {
        match &self.audit {
            Some(Audit::Done(report)) => Some(report),
            _ => None,
        }
    }

    /// On the Audit screen, whether every foreign row of `d` matches (None: not audited, or
    /// another screen).
    pub(crate) fn audit_verdict(&self, d: NaiveDate) -> Option<bool> {
        let report = self.audit_report().filter(|_| self.screen == Screen::Audit)?;
        Some(report.rows.iter().filter(|r| r.business_date == d).all(|r| r.causes == [crate::reports::audit::Cause::Matches]))
    }

    /// The check the Overview shows: the view's, or the one sent ahead of it.
    pub(crate) fn check_shown(&self) -> Option<&crate::reports::check::CheckReport> {
        self.view.as_ref().map(|v| &v.check).or(self.head.as_ref()).filter(|c| Some(c.business_date) == self.selected_date())
    }

    /// The table the current screen's rows move through.
    pub fn current_table(&self) -> Option<Table> {
        self.home().table(self)
    }

    /// The row under the cursor as an index into the report's own rows (the table may be sorted).
    pub(crate) fn source_row(&self) -> usize {
        match (self.cursor.sort, self.current_table()) {
            (Some(s), Some(t)) => row_order(&t, Some(s)).get(self.cursor.row).copied().unwrap_or(self.cursor.row),
            _ => self.cursor.row,
        }
    }

    /// Sorts the table as `sort` says, keeping the cursor on the same row.
    fn set_sort(&mut self, sort: Option<Sort>) {
        let Some(t) = self.current_table() else { return };
        let at = self.source_row();
        self.cursor.sort = sort;
        self.cursor.row = row_order(&t, sort).iter().position(|&i| i == at).unwrap_or(0);
        self.message = match sort {
            Some(s) => format!(
                "sorted by {} {}",
                t.columns.get(s.column).map(|c| c.label.as_str()).unwrap_or("?"),
                if s.descending { "▼ (S reverses)" } else { "▲ (S reverses, s the next column)" }
            ),
            None => "unsorted: the report's own order".into(),
        };
    }

    pub(crate) fn basket_visible(&self, b: &crate::reports::baskets::ResentBasket) -> bool {
        let country_ok = self.country_filter.as_ref().is_none_or(|c| &b.country == c);
        let q = self.search.to_lowercase();
        country_ok && (q.is_empty() || b.basket_id.to_lowercase().contains(&q) || b.store_id.to_lowercase().contains(&q))
    }

    fn clamp_row(&mut self) {
        let n = self.current_table().map(|t| t.rows.len()).unwrap_or(0);
        self.cursor.row = self.cursor.row.min(n.saturating_sub(1));
    }

    fn move_date(&mut self, delta: i64) {
        let Some(snap) = &self.snapshot else { return };
        if snap.dates.is_empty() {
            return;
        }
        let next = (self.selected as i64 + delta).clamp(0, snap.dates.len() as i64 - 1) as usize;
        if next != self.selected {
            self.selected = next;
            self.cursor.row = 0;
            if let Some(d) = self.selected_date() {
                self.load_date(d);
            }
        }
    }

    pub fn jump_to(&mut self, text: &str) {
        let Some(snap) = &self.snapshot else { return };
        // The command line's forms and words (`reports::day`): YYYY-MM-DD, MM-DD or yesterday.
        let dates: Vec<NaiveDate> = snap.dates.iter().map(|d| d.business_date).collect();
        let found = crate::reports::day::Day::parse(text).and_then(|day| day.resolve_in(&dates, snap.newest_upload)).and_then(|d| {
            dates.iter().position(|x| *x == d).ok_or_else(|| format!("{d} holds no landed row; the navigator lists the dates that do"))
        });
        match found {
            Ok(i) => {
                self.selected = i;
                self.cursor.row = 0;
                if let Some(d) = self.selected_date() {
                    self.load_date(d);
                }
            }
            Err(why) => self.message = why,
        }
    }

    /// The snapshot the selected row stands for (History's rows), from the report itself.
    fn selected_snapshot(&self) -> Option<i64> {
        self.home().snapshot_at(self, self.source_row())
    }

    /// A key in a text field: its editing actions come from the key table (`Scope::Field`);
    /// any other printable key without Ctrl or Alt is text. Every key is taken while it is open.
    pub fn on_input_key(&mut self, ev: &ratatui::crossterm::event::KeyEvent) -> bool {
        use ratatui::crossterm::event::{KeyCode, KeyModifiers};
        let Some(Popup::Input { kind, text }) = &mut self.popup else { return false };
        match super::keys::active().edit_for(ev) {
            Some(Action::CloseField) => self.popup = None,
            Some(Action::Submit) => {
                let (kind, text) = (kind.clone(), text.clone());
                self.popup = None;
                self.take_input(kind, text);
            }
            Some(Action::DeleteChar) => {
                text.pop();
            }
            Some(Action::ClearLine) => text.clear(),
            Some(Action::DeleteWord) => {
                let kept = text.trim_end().rfind(' ').map(|i| i + 1).unwrap_or(0);
                text.truncate(kept);
            }
            _ => match ev.code {
                KeyCode::Char(_) if ev.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => {}
                KeyCode::Char(c) if !c.is_control() && text.len() < 64 => text.push(c),
                _ => {}
            },
        }
        true
    }

    /// What a text field's Enter does with its text: go to the date, or search.
    fn take_input(&mut self, kind: InputKind, text: String) {
        match kind {
            InputKind::JumpToDate => self.jump_to(&text),
            InputKind::ReopenBy(d) if text.trim().is_empty() => {
                self.message = format!("{d} was not reopened: a reopening needs the name of who decides it");
            }
            InputKind::ReopenBy(d) => self.popup = Some(Popup::Input { kind: InputKind::ReopenReason(d, text), text: String::new() }),
            InputKind::ReopenReason(d, _) if text.trim().is_empty() => {
                self.message = format!("{d} was not reopened: a reopening needs a reason");
            }
            InputKind::ReopenReason(d, by) => {
                self.start(format!("previewing a reopening of {d}"), Job::PreviewReopen(d, Reopening { reason: text, by }))
            }
            InputKind::SearchBaskets => {
                self.search = text;
                // Baskets filters by it; every screen then goes to the first row holding it.
                self.cursor.row = self.current_table().map(|t| t.rows.len()).unwrap_or(0).saturating_sub(1);
                if !self.search.is_empty() {
                    self.next_match(1);
                } else {
                    self.cursor.row = 0;
                }
            }
        }
    }

    /// A key in a question: the key table's answer (Confirm or Cancel); any other key is taken
    /// and ignored while the question is open.
    pub fn on_confirm_key(&mut self, ev: &ratatui::crossterm::event::KeyEvent) -> bool {
        let Some(Popup::Confirm { what, .. }) = &self.popup else { return false };
        let what = what.clone();
        match super::keys::active().answer_for(ev) {
            Some(Action::Confirm) => {
                self.popup = None;
                match what {
                    Confirmable::Rebuild { date, late_days } => {
                        self.start(format!("rebuilding {date}"), Job::Rebuild { date, late_days, fail_after: None })
                    }
                    Confirmable::Rollback(s) => self.start(format!("rolling back to snapshot {s}"), Job::Rollback(s)),
                    Confirmable::Reset => self.start("resetting the lab", Job::Reset),
                    Confirmable::LandNext => self.start("landing the next upload and running v2", Job::LandNext),
                    Confirmable::LandCorrection => self.start("landing the next correction and running v2", Job::LandCorrection),
                    Confirmable::Reopen { date, decision } => self.start(format!("reopening {date}"), Job::Reopen(date, decision)),
                }
            }
            Some(Action::Cancel) => {
                self.popup = None;
                self.message = "cancelled; nothing changed".into();
            }
            _ => {}
        }
        true
    }

    pub fn update(&mut self, action: Action) {
        if self.scroll_popup(action) {
            return;
        }
        // Every popup opens from here, at its first line.
        self.cursor.popup_scroll = 0;
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
            Action::PageDown => self.move_row(self.cursor.drawn.page_rows as i64),
            Action::PageUp => self.move_row(-(self.cursor.drawn.page_rows as i64)),
            Action::Top => self.cursor.row = 0,
            Action::Bottom => self.cursor.row = self.current_table().map(|t| t.rows.len()).unwrap_or(0).saturating_sub(1),
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
            Action::ColumnsLeft => self.cursor.first_col = self.cursor.first_col.saturating_sub(1),
            Action::SortNext => self.sort_next_column(),
            Action::SortReverse => {
                let sort = self.cursor.sort.unwrap_or(Sort { column: 0, descending: false });
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
    fn scroll_popup(&mut self, action: Action) -> bool {
        if !matches!(self.popup, Some(Popup::Help | Popup::Error(_) | Popup::Detail { .. })) {
            return false;
        }
        let (shown, last) = self.cursor.drawn.popup_view;
        let scroll = &mut self.cursor.popup_scroll;
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
    fn ask_quit(&mut self) {
        if self.running.as_ref().is_some_and(|r| r.writes) {
            self.quit_after_write = true;
            self.message = "quitting once the running write ends (Esc cancels it: then nothing of it commits)".into();
        } else {
            self.quit = true;
        }
    }

    /// Esc with work running: asks the loop to interrupt it.
    fn cancel_running(&mut self) {
        if self.running.is_some() {
            self.cancel = true;
            self.message = "cancelling…".into();
        }
    }

    /// Starts the job `job` makes of the selected date, labelled, when a date is selected.
    fn on_selected_date(&mut self, job: impl FnOnce(NaiveDate) -> (String, Job)) {
        if let Some(d) = self.selected_date() {
            let (label, job) = job(d);
            self.start(label, job);
        }
    }

    /// The crash demo: a rebuild of the selected date that fails after its third statement.
    fn crash_demo(&mut self) {
        let late_days = self.view.as_ref().map(|v| v.check.status.late_days).unwrap_or(crate::rules::DEFAULT_LATE_DAYS);
        self.on_selected_date(|d| {
            (format!("rebuilding {d} with a crash after statement 3"), Job::Rebuild { date: d, late_days, fail_after: Some(3) })
        });
    }

    /// The next country of the date as the Baskets filter, then none.
    fn next_country_filter(&mut self) {
        if self.screen == Screen::Trend {
            // The trend shows one country at a time: the next one, round to the first.
            let Some(snap) = &self.snapshot else { return };
            let names: Vec<&String> = snap.trend.series.iter().map(|s| &s.country).collect();
            let shown = super::screens::trend::series(self).map(|s| &s.country);
            let at = names.iter().position(|c| Some(*c) == shown).unwrap_or(0);
            self.country_filter = names.get((at + 1) % names.len().max(1)).map(|c| (*c).clone());
            self.cursor.row = 0;
            return;
        }
        let countries: Vec<String> =
            self.view.as_ref().map(|v| v.check.countries.iter().map(|c| c.country.clone()).collect()).unwrap_or_default();
        self.country_filter = match &self.country_filter {
            None => countries.first().cloned(),
            Some(c) => countries.iter().skip_while(|x| *x != c).nth(1).cloned(),
        };
        self.cursor.row = 0;
    }

    fn scroll_columns_right(&mut self) {
        if self.cursor.first_col < self.cursor.drawn.col_room {
            self.cursor.first_col += 1;
        } else {
            self.message = "the last column is in view".into();
        }
    }

    /// Sorts by the next column (after the last, the report's own order again).
    fn sort_next_column(&mut self) {
        let columns = self.current_table().map(|t| t.columns.len()).unwrap_or(0);
        let next = match self.cursor.sort {
            None => Some(0),
            Some(s) => Some(s.column + 1).filter(|c| *c < columns),
        };
        self.set_sort(next.map(|column| Sort { column, descending: false }));
    }

    /// U: asks before it lands the world's next upload.
    fn ask_land_next(&mut self) {
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
    fn ask_land_correction(&mut self) {
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
    fn ask_rollback(&mut self) {
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
    fn ask_reset(&mut self) {
        self.popup = Some(Popup::Confirm {
            what: Confirmable::Reset,
            text: question("Reset the lab?\n\nThe raw zone, bronze, silver, gold and every snapshot are deleted.", "reset"),
        })
    }

    /// Moves to the next (or, `step` -1, previous) row of the table on screen that holds the
    /// search text, wrapping around; says so when none does.
    fn next_match(&mut self, step: i64) {
        let q = self.search.to_lowercase();
        if q.is_empty() {
            self.message = "no search yet: / searches".into();
            return;
        }
        let Some(t) = self.current_table() else { return };
        let order = row_order(&t, self.cursor.sort);
        let n = t.rows.len() as i64;
        let hit = (1..=n)
            .map(|k| (self.cursor.row as i64 + step * k).rem_euclid(n.max(1)) as usize)
            .find(|&i| t.rows[order[i]].cells.iter().any(|c| c.display().to_lowercase().contains(&q)));
        match hit {
            Some(i) => {
                self.cursor.row = i;
                self.message = format!("match for '{}' on row {} of {n}", crate::sanitize::for_terminal(&self.search), i + 1);
            }
            None => self.message = format!("no row here holds '{}'", crate::sanitize::for_terminal(&self.search)),
        }
    }

    fn set_screen(&mut self, s: Screen) {
        self.screen = s;
        self.cursor.row = 0;
        // A status line speaks of the screen it was said on.
        self.message.clear();
        // Another screen has other columns.
        self.cursor.sort = None;
        self.cursor.first_col = 0;
    }

    fn move_row(&mut self, delta: i64) {
        let n = self.current_table().map(|t| t.rows.len()).unwrap_or(0) as i64;
        if n > 0 {
            self.cursor.row = (self.cursor.row as i64 + delta).clamp(0, n - 1) as usize;
        }
    }

    fn basket_id_at_row(&self) -> Option<String> {
        self.home().basket_at(self, self.source_row())
    }

    fn copy_basket_id(&mut self) {
        use base64::Engine;
        if let Some(id) = self.basket_id_at_row() {
            let b64 = base64::engine::general_purpose::STANDARD.encode(id.as_bytes());
            self.terminal_writes.push(format!("\x1b]52;c;{b64}\x07"));
            self.message = format!("copied {} to the clipboard (OSC 52)", crate::sanitize::for_terminal(&id));
        }
    }

    fn drill(&mut self) {
        self.popup = self.home().drill(self, self.source_row());
    }

    /// An audit row opened before its date's reports arrived is drawn again with them (its
    /// entities come from the date's view). While a popup is open the cursor does not move, so
    /// the row is the one opened.
    fn refresh_drill(&mut self) {
        if self.screen == Screen::Audit
            && matches!(self.popup, Some(Popup::Detail { .. }))
            && let Some(p) = self.home().drill(self, self.source_row())
        {
            self.popup = Some(p);
        }
    }

    /// Writes the table on screen as it is shown (the search filter and the sort included) to a
    /// new file in the working directory: `recount-SCREEN-DATE.csv`, then `…-2.csv`, never over
    /// an earlier export.
    fn export(&mut self, format: Format) {
        let (Some(d), Some(table)) = (self.selected_date(), self.current_table()) else { return };
        let order = row_order(&table, self.cursor.sort);
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
