//! The worker's pivot validation: the file streamed through the core validator, the fixed copy
//! (if asked for) kept as JS byte arrays outside wasm memory and joined into a Blob.

use super::super::protocol::{Failure, Reply};
use super::io::{feed, post_progress, BlobWriter};
use crate::chunks::Flow;
use crate::inspect::pivot::PivotView;
use crate::pivot::{PivotOptions, PivotValidator};
use web_sys::File;

pub fn run(file: &File, options: PivotOptions) -> Result<Reply, Failure> {
    let fix = options.fix;
    let total = file.size() as u64;
    let mut validator = PivotValidator::new(file.name(), options);
    let mut fixed = BlobWriter::new();
    feed::<Failure>(file, |chunk, done| {
        let go_on = validator.push(chunk);
        if fix {
            std::io::Write::write_all(&mut fixed, &validator.take_fixed())
                .map_err(|e| Failure::from(e.to_string()))?;
        }
        post_progress(done, total, validator.lines_read());
        Ok(if go_on { Flow::Continue } else { Flow::Stop })
    })?;
    let (report, rest) = validator.finish();
    let fixed = if fix {
        std::io::Write::write_all(&mut fixed, &rest).map_err(|e| Failure::from(e.to_string()))?;
        Some(fixed.finish("application/jsonl")?)
    } else {
        None
    };
    Ok(Reply::PivotChecked {
        view: Box::new(PivotView::new(&report)),
        fixed,
    })
}
