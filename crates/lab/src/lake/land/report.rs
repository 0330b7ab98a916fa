//! What a landing did: each file, each partition, and the report the CLI and the explorer show.

use super::*;

/// What a landing found a file of the world to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Its path had not landed: version 1.
    New,
    /// Its path had landed with other bytes: this is the path's next version, now current.
    Corrected,
    /// Its path had landed with other bytes holding the same rows (compressed again): the next
    /// version, current, changing no date.
    Redelivered,
    /// The same bytes as the current version: nothing to land.
    Unchanged,
    /// Landed earlier, but no longer in the world: reported, and kept in the lab.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileLanded {
    /// The file's name in its partition.
    pub name: String,
    pub status: FileStatus,
    /// The version current after the landing (for a missing file, the lab's current version).
    pub version: i32,
    /// A correction whose bytes are an earlier version's: (that version, the version it
    /// replaces). Landing the original file again after a vendor's correction reverts it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverts: Option<(i32, i32)>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionLanded {
    pub upload_date: NaiveDate,
    /// Files landed by this call: new paths and corrections.
    pub files_landed: usize,
    /// Files whose bytes were landed already (unchanged).
    pub files_already_landed: usize,
    pub events: u64,
    pub quarantined: u64,
    /// False when the world has no such partition yet: nothing arrived, nothing is recorded.
    pub exists: bool,
    /// Every file of the partition, in the world or in the lab, with what the landing found.
    pub files: Vec<FileLanded>,
    /// Files of the partition that the source description's glob does not take (writer markers
    /// aside): listed, never landed, never silently passed over.
    pub not_taken: Vec<String>,
    /// The upload is dated after today (UTC): a partition named for a day that has not come,
    /// landed as it is and said.
    pub dated_in_future: bool,
}

impl PartitionLanded {
    /// The corrections this landing made current.
    pub fn corrected(&self) -> impl Iterator<Item = &FileLanded> {
        self.files.iter().filter(|f| f.status == FileStatus::Corrected)
    }

    /// The partition's lines of a landing's report: what landed, and every file said of it.
    pub(super) fn render(&self) -> String {
        if !self.exists {
            return format!("upload {}: the world has no such partition; nothing landed\n", self.upload_date);
        }
        let mut s = String::new();
        let extra = if self.files_already_landed > 0 { format!(", {} already landed", self.files_already_landed) } else { String::new() };
        let q = if self.quarantined > 0 { format!(", {} quarantined", self.quarantined) } else { String::new() };
        let files =
            if self.files_landed == 0 && self.files_already_landed == 0 { " (an empty partition)".to_string() } else { String::new() };
        let corrected: Vec<String> =
            self.corrected().map(|f| format!("{} v{}", crate::sanitize::for_terminal(&f.name), f.version)).collect();
        let corrected = if corrected.is_empty() { String::new() } else { format!(", corrected: {}", corrected.join(", ")) };
        let again: Vec<String> = self
            .files
            .iter()
            .filter(|f| f.status == FileStatus::Redelivered)
            .map(|f| format!("{} v{}", crate::sanitize::for_terminal(&f.name), f.version))
            .collect();
        let corrected = if again.is_empty() { corrected } else { format!("{corrected}, re-delivered (same rows): {}", again.join(", ")) };
        s.push_str(&format!(
            "landed upload {}: {} file(s), {} events{q}{corrected}{extra}{files}\n",
            self.upload_date,
            self.files_landed,
            crate::money::format_count(self.events as i64)
        ));
        if self.dated_in_future {
            s.push_str(&format!("  {}\n", dated_in_future(self.upload_date)));
        }
        for f in self.files.iter() {
            if let Some(reverts) = f.reverts {
                s.push_str(&format!("  {}\n", reverting(&f.name, f.version, reverts)));
            }
        }
        for f in self.files.iter().filter(|f| f.status == FileStatus::Missing) {
            s.push_str(&format!(
                "  {} (landed as v{}) is no longer in the world: the lab keeps it and still counts it\n",
                crate::sanitize::for_terminal(&f.name),
                f.version
            ));
        }
        if !self.not_taken.is_empty() {
            let names: Vec<String> = self.not_taken.iter().map(|n| crate::sanitize::for_terminal(n).into_owned()).collect();
            s.push_str(&format!("  not landed, the source's file pattern does not take them: {}\n", names.join(", ")));
        }
        s
    }
}

/// What a landing says of upload `d` when it is dated after today (UTC), on every lab.
pub fn dated_in_future(d: NaiveDate) -> String {
    format!(
        "upload {d} is dated after today ({} UTC): its partition is named for a day that has not come; check the writer's clock",
        Utc::now().date_naive()
    )
}

/// Whether upload `d` is dated after today (UTC).
pub fn is_in_future(d: NaiveDate) -> bool {
    d > Utc::now().date_naive()
}

/// What a landing says of file `name`'s version `version` when its bytes are version `to`'s,
/// so that it withdraws version `replaced`, on every lab.
pub fn reverting(name: &str, version: i32, (to, replaced): (i32, i32)) -> String {
    format!(
        "{} v{version}: has the bytes of v{to}, so it reverts v{replaced} (a correction withdrawn; land v{replaced}'s file again to restore it)",
        crate::sanitize::for_terminal(name)
    )
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LandReport {
    pub partitions: Vec<PartitionLanded>,
    pub stores_added: usize,
    /// Store corrections: landed stores whose row stores.csv now gives otherwise.
    pub stores_changed: Vec<raw::StoreChange>,
    /// Stores stores.csv adds whose lines had been quarantined as an unknown store: read again.
    pub stores_readmitted: Vec<String>,
    /// Landed stores stores.csv no longer lists: kept, with their row as landed.
    pub stores_removed: Vec<String>,
    /// File versions re-derived from their own bytes for the store corrections, and their events.
    pub rederived_files: usize,
    pub rederived_events: u64,
    pub events: u64,
    pub quarantined: u64,
    /// Uploads held back because one of their files could not be read whole.
    pub held: Vec<HeldUpload>,
    /// Wall time per phase in milliseconds, for RECOUNT_PROFILE (not part of any record).
    #[serde(skip)]
    pub phases: Vec<(String, f64)>,
}

impl LandReport {
    /// Whether an upload asked for has no partition in the world: nothing of it could land.
    pub fn asked_for_what_is_not_there(&self) -> bool {
        self.partitions.iter().any(|p| !p.exists)
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        for p in &self.partitions {
            s.push_str(&p.render());
        }
        for h in &self.held {
            s.push_str(&format!(
                "upload {} HELD BACK: {}: {}; nothing of it landed (fix the file and land {} again)\n",
                h.upload_date,
                crate::sanitize::for_terminal(&h.file),
                crate::sanitize::for_terminal(&h.reason),
                h.upload_date
            ));
        }
        if self.stores_added > 0 {
            s.push_str(&format!("stores: {} added\n", self.stores_added));
        }
        for c in &self.stores_changed {
            s.push_str(&format!("store correction: {}\n", c.describe()));
        }
        for id in &self.stores_readmitted {
            s.push_str(&format!(
                "store {} added: its lines quarantined as an unknown store are read again\n",
                crate::sanitize::for_terminal(id)
            ));
        }
        if !self.stores_changed.is_empty() || !self.stores_readmitted.is_empty() {
            s.push_str(&format!(
                "  {} file version(s) re-derived from their own bytes ({} events); the next v2 run rebuilds the dates they move\n",
                self.rederived_files,
                crate::money::format_count(self.rederived_events as i64)
            ));
        }
        for id in &self.stores_removed {
            s.push_str(&format!(
                "store {} is no longer in stores.csv: the lab keeps it as landed, and still counts its sales\n",
                crate::sanitize::for_terminal(id)
            ));
        }
        if self.quarantined > 0 {
            s.push_str("quarantined lines are listed by `recount quarantine`\n");
        }
        s
    }
}
