//! The comparison report (work in progress).
use super::conversations::PairConversations;
use super::Comparison;
use crate::report::ReportMeta;

pub fn render(_c: &Comparison, _meta: &ReportMeta, _conversations: &[PairConversations]) -> String {
    String::new()
}
