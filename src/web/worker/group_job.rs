//! The worker's "Group by" read: each task's value of a field of the materialized rows
//! (`inspect::grouping`), the inputs file read once with progress; a row that is not JSON with
//! a task index fails naming the file and line.

use super::super::protocol::{Failure, Reply};
use super::query_job::lines;
use crate::inspect::grouping::FieldReader;
use web_sys::File;

pub fn run(inputs: &File, field: &str, tasks: &[f64]) -> Result<Reply, Failure> {
    let mut reader = FieldReader::new(field);
    let size = inputs.size() as u64;
    lines(inputs, Some((0, size)), |line| reader.line(line))?;
    let tasks: Vec<i64> = tasks.iter().map(|&t| t as i64).collect();
    Ok(Reply::Grouped(Box::new(reader.finish(field, &tasks))))
}
