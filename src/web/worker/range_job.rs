//! A pool worker's job (`pool`): one byte range of a run's file read for the profile and health
//! (`joint_read::ranges::read_range`), each part posted as postcard bytes as soon as it is read,
//! so the recording worker records while this one reads on.

use super::super::protocol::{Failure, Reply};
use super::io::{memory_bytes, post, SyncFile, SLICE};
use crate::joint_read::ranges::read_range;
use crate::jsonl::DEFAULT_MAX_LINE_BYTES;
use crate::profile::ranges::ByteRange;
use web_sys::File;

pub fn run(file: &File, range: ByteRange, index: u32) {
    let read = SyncFile::open(file).and_then(|reader| {
        read_range(
            range,
            reader.size(),
            DEFAULT_MAX_LINE_BYTES,
            SLICE as u64,
            |start, end| reader.read_range(start, end),
            |part| {
                let bytes = js_sys::Uint8Array::from(part.to_bytes().as_slice());
                post(&Reply::RangePart {
                    index,
                    bytes,
                    memory: memory_bytes(),
                });
                Ok(())
            },
        )
    });
    if let Err(e) = read {
        post(&Reply::Failed(Failure::from(format!(
            "reading '{}': {e}",
            file.name()
        ))));
    }
}
