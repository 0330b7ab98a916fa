//! The explorer's state and what each action does to it. Drawing reads this state and nothing
//! else; work that touches the lab goes to the worker as a `Job`.

use super::keys::Action;
use super::screen::Screen;
pub(crate) use super::widgets::{Sort, row_order};
use super::worker::{DateView, Job, Reopening, Reply};
use crate::lake::v2::RebuildPreview;
use crate::reports::overview::LabOverview;
use crate::reports::table::{Format, Table};
use chrono::NaiveDate;
use cursor::Cursor;
use std::time::Instant;

mod actions;
mod cursor;
mod replies;

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
pub struct RunningJob {
    pub label: String,
    pub started: Instant,
    /// The running job writes to the lab.
    pub writes: bool,
    /// The running job is a (re)load of the navigator.
    pub loads: bool,
    /// DuckDB's estimate for the running statement, 0-100, when it has one.
    pub percent: Option<f64>,
}

impl RunningJob {
    fn new(label: impl Into<String>) -> RunningJob {
        RunningJob { label: label.into(), started: Instant::now(), percent: None, writes: false, loads: false }
    }
}

pub struct App {
    /// Who is at the explorer, as `$USER` says (None: a reopening asks for the name).
    pub user: Option<String>,
    /// What the explorer reads when it is not the lab (`warehouse DIR`), shown beside the tabs.
    pub store: String,
    pub screen: Screen,
    pub snapshot: Option<LabOverview>,
    pub view: Option<std::sync::Arc<DateView>>,
    /// Index into the navigator's dates.
    pub selected: usize,
    pub popup: Option<Popup>,
    pub running: Option<RunningJob>,
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
    pub head: Option<super::worker::DateCheck>,
    /// The date whose view follows its head: its load is no longer the running job (the user may
    /// act on the Overview meanwhile), so its view is taken in quietly when it comes.
    rest_pending: Option<NaiveDate>,
    /// Each screen's place in its table, by its position in tab order: read through the app's
    /// methods, which give the selected screen's.
    cursors: [Cursor; Screen::ALL.len()],
    /// The popup's first line shown.
    popup_scroll: u16,
    /// What the last frame measured (a page's rows, the columns' room, the popup's lines).
    drawn: super::widgets::FrameMeasures,
    /// Where `e` and `E` write (the working directory unless set).
    export_dir: Option<std::path::PathBuf>,
    /// The foreign gold the Audit screen shows (`tui --audit`): None when none was given.
    pub audit: Option<AuditState>,
    /// On a lab of a model other than retail: its model, by which the screens name things.
    pub model: Option<crate::model::Model>,
    /// Where each screen's home is.
    homes: Homes,
}

/// One screen's behaviour. `row` is always an index into the screen's table as the report
/// gives it (the app maps the cursor through the sort first).
pub trait ScreenBehaviour {
    /// The table the screen's rows move through; None until what it shows has loaded.
    fn table(&self, app: &App) -> Option<Table>;

    /// What Enter opens on a row: by default every cell of it, labelled.
    fn drill(&self, app: &App, row: usize) -> Option<Popup> {
        let t = self.table(app)?;
        let r = t.rows.get(row)?;
        let body = t.columns.iter().zip(&r.cells).map(|(c, x)| format!("{}: {}", c.label, x.display())).collect::<Vec<_>>().join("\n");
        Some(Popup::Detail { title: "row".into(), body })
    }

    /// The basket_id a row shows, for `y` (copy): None where rows are not baskets.
    fn basket_at(&self, _app: &App, _row: usize) -> Option<String> {
        None
    }

    /// The snapshot a row stands for, for `b` (roll back): None where rows are not snapshots.
    fn snapshot_at(&self, _app: &App, _row: usize) -> Option<i64> {
        None
    }

    /// Draws the screen into `area`, and says what its main table measured into `out`. None:
    /// nothing of it has loaded yet (the caller says so).
    fn draw(&self, f: &mut ratatui::Frame, app: &App, area: ratatui::layout::Rect, out: &mut super::widgets::FrameMeasures) -> Option<()>;
}

/// Where the app finds a screen's home.
pub type Homes = fn(Screen) -> &'static dyn ScreenBehaviour;

/// Where an audit's wrong rows fall (`AuditReport::where_wrong`): its table, the sentence naming
/// the most concentrated place, and the count of wrong rows with the dates they are on.
#[derive(Debug, Clone)]
pub struct Placed {
    pub table: Option<Table>,
    pub note: Option<String>,
    pub dates: String,
}

impl Placed {
    pub fn of(report: &super::worker::Audited) -> Placed {
        let place = report.where_wrong();
        Placed { table: place.table(), note: place.note().map(|n| n.text), dates: wrong_dates(report) }
    }
}

/// The audit's wrong rows over every date, and the dates they are on.
fn wrong_dates(report: &super::worker::Audited) -> String {
    let dates: Vec<chrono::NaiveDate> = report.counts().dates.iter().copied().collect();
    match dates.as_slice() {
        [] => "no wrong row on any date".to_string(),
        [d] => format!("{} wrong in all, on {d}", report.wrong()),
        [first, .., last] => {
            let day = |d: &chrono::NaiveDate| d.format("%m-%d").to_string();
            format!("{} wrong in all, on {} dates, {} to {}", report.wrong(), dates.len(), day(first), day(last))
        }
    }
}

/// The Audit screen's foreign gold: waiting for its first audit, audited, or unreadable.
#[derive(Debug, Clone)]
pub enum AuditState {
    /// Asked for (its source), not audited yet.
    Pending(String),
    /// Audited, with where its wrong rows fall, placed once when it arrives (not every frame).
    Done(Box<super::worker::Audited>, Box<Placed>),
    /// Why it could not be audited (a missing column, an unreadable file).
    Failed(String),
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
    /// The app, with the screens' homes (`screens` gives them: `App::new`).
    pub fn with_homes(theme: super::theme::Theme, mouse: bool, homes: Homes) -> App {
        App {
            homes,
            screen: Screen::Overview,
            snapshot: None,
            view: None,
            selected: 0,
            popup: None,
            running: Some(RunningJob { loads: true, ..RunningJob::new("opening the lab") }),
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
            cursors: [Cursor::default(); Screen::ALL.len()],
            popup_scroll: 0,
            drawn: Default::default(),
            export_dir: None,
            store: String::new(),
            user: crate::lake::reopen::Decision::known_by(),
            audit: None,
            model: None,
        }
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
        self.running = Some(RunningJob { writes: job.writes(), ..RunningJob::new(label) });
        self.outbox.push(job);
    }

    /// Another date's view: the navigator stays as it is.
    fn load_date(&mut self, d: NaiveDate) {
        self.view = None;
        self.head = None;
        self.running = Some(RunningJob::new(format!("loading {d}")));
        self.outbox.push(Job::LoadDate(d));
    }

    fn load(&mut self, d: Option<NaiveDate>) {
        self.running = Some(RunningJob { loads: true, ..RunningJob::new("loading") });
        self.outbox.push(Job::Load(d));
    }

    /// The selected screen's home.
    pub(crate) fn behaviour(&self) -> &'static dyn ScreenBehaviour {
        (self.homes)(self.screen)
    }

    /// The Trend screen's country: the filter's, else the first of the trend.
    pub(crate) fn trend_series(&self) -> Option<&crate::reports::trend::TrendSeries> {
        let trend = &self.snapshot.as_ref()?.trend;
        let picked = self.country_filter.as_ref().and_then(|c| trend.series.iter().find(|s| &s.label == c));
        picked.or(trend.series.first())
    }

    /// What names the trend's parts (retail: `country`), None when the lab's model has none.
    pub(crate) fn trend_part_name(&self) -> Option<&str> {
        self.snapshot.as_ref()?.trend.part_name.as_deref()
    }

    /// The selected date's view, once it has loaded.
    fn view_shown(&self) -> Option<&DateView> {
        self.view.as_deref().filter(|v| Some(v.check.business_date()) == self.selected_date())
    }
    pub(crate) fn explain(&self) -> Option<&crate::reports::explain::ExplainReport> {
        self.view_shown().map(|v| &v.explain)
    }
    pub(crate) fn late(&self) -> Option<&crate::reports::listings::LateReport> {
        self.view_shown().map(|v| &v.late)
    }
    pub(crate) fn baskets(&self) -> Option<&crate::reports::baskets::BasketsReport> {
        self.view_shown().map(|v| &v.baskets)
    }
    pub(crate) fn promises(&self) -> Option<&crate::reports::promises::PromisesReport> {
        self.view_shown().map(|v| &v.promises)
    }
    /// The selected date's history: retail's, or a model lab's.
    pub(crate) fn history(&self) -> Option<&super::worker::DateHistory> {
        self.view_shown().map(|v| &v.history)
    }

    /// The audit, once it has run.
    pub(crate) fn audit_report(&self) -> Option<&super::worker::Audited> {
        match &self.audit {
            Some(AuditState::Done(report, _)) => Some(report),
            _ => None,
        }
    }

    /// On the Audit screen, whether every foreign row of `d` matches (None: not audited, or
    /// another screen).
    pub(crate) fn audit_verdict(&self, d: NaiveDate) -> Option<bool> {
        let report = self.audit_report().filter(|_| self.screen == Screen::Audit)?;
        Some(!report.counts().dates.contains(&d))
    }

    /// The check the Overview shows: the view's, or the one sent ahead of it.
    pub(crate) fn date_check(&self) -> Option<&super::worker::DateCheck> {
        self.view.as_ref().map(|v| &v.check).or(self.head.as_ref()).filter(|c| Some(c.business_date()) == self.selected_date())
    }

    /// The table the current screen's rows move through.
    pub fn current_table(&self) -> Option<Table> {
        self.behaviour().table(self)
    }

    /// An entity shown under the country filter (the part of the date its attributes name:
    /// retail's country) and the search (its key or a value of its grain).
    pub(crate) fn basket_visible(&self, b: &crate::reports::baskets::ResentBasket) -> bool {
        let part = |c: &String| self.baskets().is_some_and(|r| &crate::reports::model::part_of(&r.model, &b.attributes) == c);
        let country_ok = self.country_filter.as_ref().is_none_or(part);
        let q = self.search.to_lowercase();
        country_ok && (q.is_empty() || std::iter::once(&b.key).chain(&b.grain).any(|v| v.to_lowercase().contains(&q)))
    }

    fn move_date(&mut self, delta: i64) {
        let Some(snap) = &self.snapshot else { return };
        if snap.dates.is_empty() {
            return;
        }
        let next = (self.selected as i64 + delta).clamp(0, snap.dates.len() as i64 - 1) as usize;
        if next != self.selected {
            self.selected = next;
            self.rows_to_top();
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
            Ok(i) => self.select_index(i),
            Err(why) => self.message = why,
        }
    }

    /// The first date with a wrong row of the audit, once it is done.
    pub(crate) fn first_wrong_date(&self) -> Option<NaiveDate> {
        let report = self.audit_report()?;
        report.counts().dates.first().copied()
    }

    /// Selects date `d` in the navigator, when it lists it, and loads its view.
    pub(crate) fn select_date(&mut self, d: NaiveDate) {
        if let Some(i) = self.snapshot.as_ref().and_then(|s| s.dates.iter().position(|x| x.business_date == d)) {
            self.select_index(i);
        }
    }

    fn select_index(&mut self, i: usize) {
        self.selected = i;
        self.rows_to_top();
        if let Some(d) = self.selected_date() {
            self.load_date(d);
        }
    }

    /// The snapshot the selected row stands for (History's rows), from the report itself.
    fn selected_snapshot(&self) -> Option<i64> {
        self.behaviour().snapshot_at(self, self.source_row())
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
                self.cur_mut().row = self.current_table().map(|t| t.rows.len()).unwrap_or(0).saturating_sub(1);
                if !self.search.is_empty() {
                    self.next_match(1);
                } else {
                    self.cur_mut().row = 0;
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
}
