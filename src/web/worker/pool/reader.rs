//! A pool worker as the pool sees it: started from the app's worker bin, each reply handed to the
//! pool's `step`, with the ranges it holds.

use super::super::super::protocol::{decode, Failure, Reply, WORKER_URL};
use super::step;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

pub struct Reader {
    pub worker: Worker,
    pub ready: bool,
    pub in_flight: usize,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

pub fn unreachable(e: JsValue) -> Failure {
    Failure::from(format!("cannot reach a reading worker: {e:?}"))
}

pub fn spawn(index: usize) -> Result<Reader, Failure> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Classic);
    let worker = Worker::new_with_options(WORKER_URL, &options)
        .map_err(|e| Failure::from(format!("cannot start a reading worker: {e:?}")))?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let reply = decode::<Reply>(e.data()).unwrap_or_else(|e| Reply::Failed(e.into()));
        step(Some((index, reply)));
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    Ok(Reader {
        worker,
        ready: false,
        in_flight: 0,
        _on_message: on_message,
    })
}
