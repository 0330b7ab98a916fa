//! What the explorer does with each of the worker's replies.

use super::*;

impl App {
    /// Handles the worker's answer: each kind of reply in one place. A date's check ahead of its
    /// view, the view that follows it, and news of another process's write do not answer the
    /// running job; every other reply does (`on_answer`).
    pub fn on_reply(&mut self, reply: Reply) {
        match reply {
            Reply::DateHead(check) => self.on_head(*check),
            Reply::DateLoaded(view) if self.rest_pending == Some(view.check.business_date()) => self.on_rest(view),
            Reply::Paused(text) => self.message = text,
            Reply::Audited(audited) => {
                self.audit = Some(match audited {
                    Ok(report) => {
                        let placed = Box::new(super::Placed::of(&report));
                        AuditState::Done(report, placed)
                    }
                    Err(why) => AuditState::Failed(why),
                });
                // The audit opens on the first date with a wrong row: where the reader starts.
                if let Some(d) = self.first_wrong_date() {
                    self.select_date(d);
                }
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
    pub(super) fn on_head(&mut self, check: crate::tui::worker::DateCheck) {
        if Some(check.business_date()) == self.selected_date() && self.running.as_ref().is_some_and(|r| !r.writes) {
            self.rest_pending = Some(check.business_date());
            self.head = Some(check);
            self.running = None;
            self.clamp_row();
        }
    }

    /// The rest of a view whose check came ahead: taken in quietly, if its date is still shown.
    pub(super) fn on_rest(&mut self, view: std::sync::Arc<DateView>) {
        self.rest_pending = None;
        if Some(view.check.business_date()) == self.selected_date() {
            self.head = None;
            self.view = Some(view);
            self.clamp_row();
            self.refresh_drill();
        }
    }

    /// A reply to the running job.
    pub(super) fn on_answer(&mut self, reply: Reply) {
        let finished = self.running.take();
        if self.quit_after_write && finished.as_ref().is_some_and(|r| r.writes) {
            // The user asked to quit while this write ran: it has ended (committed or not).
            self.quit = true;
        }
        match reply {
            Reply::ModelLoaded(load) => {
                let crate::tui::worker::ModelLoad { overview, model, view } = *load;
                self.model = Some(model);
                self.on_answer(Reply::Loaded(Box::new(overview), view));
            }
            Reply::Loaded(snap, view) => {
                self.load_failures = 0;
                // The first load opens on the audit's first wrong date when the audit came first.
                let first = if self.snapshot.is_none() { self.first_wrong_date() } else { None };
                let want = first.or_else(|| view.as_ref().map(|v| v.check.business_date())).or_else(|| self.selected_date());
                self.selected =
                    want.and_then(|w| snap.dates.iter().position(|d| d.business_date == w)).unwrap_or(snap.dates.len().saturating_sub(1));
                // The morning's line, until something else is said.
                if self.message.is_empty() {
                    self.message = snap.banner.clone();
                }
                self.snapshot = Some(*snap);
                self.view = view;
                self.clamp_row();
            }
            Reply::DateLoaded(view) => {
                self.load_failures = 0;
                // A view for a date the user has already left is dropped.
                if Some(view.check.business_date()) == self.selected_date() {
                    self.head = None;
                    self.view = Some(view);
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
    pub(super) fn on_failed(&mut self, text: String, was_load: bool) {
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
}
