//! The profile alone read in the app's pool (the comparison's runs): each batch parsed by a
//! pool worker ([`super::parse_batch`]), the rows recorded in file order by the builder through
//! `read::in_order`.

use crate::read::jsonl::LineTooLong;
use crate::read::RowKind;

/// The profile alone read in the pool's ranges (`read::in_order`; the comparison's runs): each
/// batch parsed by a pool worker, the rows recorded in file order by the builder.
impl crate::read::job::Job for super::ProfileBuilder {
    type Part = super::ParsedBatch;
    type Error = crate::error::ProfileError;

    fn record(&mut self, mut parsed: super::ParsedBatch, before: u64) -> Result<(), Self::Error> {
        parsed.renumber(before);
        super::ProfileBuilder::record(self, parsed)
    }

    fn too_long(&mut self, kind: RowKind, t: LineTooLong) -> Result<(), Self::Error> {
        Err(self.line_too_long(kind, t))
    }

    fn read_failed(&mut self, kind: RowKind, cause: String) -> Self::Error {
        let file = self.file_of(kind);
        crate::error::ProfileError::io(file, std::io::Error::other(cause))
    }
}
