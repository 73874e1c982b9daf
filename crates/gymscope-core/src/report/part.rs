//! A section's version in a report made with a query (the matches' or the run's), shared by
//! the page (`html`) and its health section (`health`).

/// Which version of a section this is, when the report was made with a query: the matches'
/// (shown, its ids suffixed `-query`) or the run's (hidden); the script swaps them when the
/// filter box no longer holds the query (`data-of`).
#[derive(Clone, Copy)]
pub(super) enum Part<'a> {
    /// No query: the run's, alone.
    Only,
    /// The matches', named in words (`the 42 matching rollouts`).
    Query(&'a str),
    Run,
}

impl Part<'_> {
    /// The section's attributes: its id, and which version it is.
    pub(super) fn attrs(self, id: &str) -> String {
        match self {
            Part::Only => format!("id=\"{id}\""),
            Part::Query(_) => format!("id=\"{id}-query\" data-of=\"query\""),
            Part::Run => format!("id=\"{id}\" data-of=\"run\" hidden"),
        }
    }
    /// An id inside the section (unique on the page).
    pub(super) fn id(self, id: &str) -> String {
        match self {
            Part::Query(_) => format!("{id}-query"),
            _ => id.to_string(),
        }
    }
    /// A heading, of the matches when this is their version.
    pub(super) fn heading(self, of_run: &str) -> String {
        match self {
            Part::Query(matching) => format!("{of_run} of {matching}"),
            _ => of_run.to_string(),
        }
    }
}
