//! A line's fields as the two readers give them (`fast_line` and `slow_line`), before the
//! contract's checks (`event`): the one shape both readers must fill alike.

use std::borrow::Cow;

/// A line's fields as read, before the contract's checks: by the fast reader (`fast_line`) or the
/// careful one (`slow_line`), which must read the same line alike.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Line<'a> {
    pub(super) event_id: Option<Cow<'a, str>>,
    pub(super) basket_id: Option<Cow<'a, str>>,
    pub(super) store_id: Option<Cow<'a, str>>,
    pub(super) till_id: Option<Cow<'a, str>>,
    pub(super) event_ts: Option<Cow<'a, str>>,
    pub(super) uploaded_at: Option<Cow<'a, str>>,
    pub(super) currency: Option<Cow<'a, str>>,
    pub(super) tenders: Option<Vec<Tender<'a>>>,
}

#[derive(Default, Debug, PartialEq)]
pub(super) struct Tender<'a> {
    #[allow(dead_code)] // informational: checked to be a string when given
    pub(super) method: Option<Cow<'a, str>>,
    pub(super) amount_minor: Option<serde_json::Number>,
}
