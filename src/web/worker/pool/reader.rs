//! A pool worker as the pool sees it: started from the app's worker bin, each reply handed to the
//! pool's `step`, with the ranges it holds.

use super::super::super::protocol::{decode, Failure, Reply};
use super::step;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

pub struct Reader {
    pub worker: Worker,
    pub ready: bool,
    pub in_flight: usize,
    /// It has taken the current read's setup.
    pub set_up: bool,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(JsValue)>,
}

pub fn unreachable(e: JsValue) -> Failure {
    Failure::from(format!("cannot reach a reading worker: {e:?}"))
}

pub fn spawn(index: usize) -> Result<Reader, Failure> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Classic);
    let worker = Worker::new_with_options(&crate::web::embed::worker_url(), &options)
        .map_err(|e| Failure::from(format!("cannot start a reading worker: {e:?}")))?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let reply = decode::<Reply>(e.data()).unwrap_or_else(|e| Reply::Failed(e.into()));
        step(Some((index, reply)));
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // A worker that cannot load or traps never replies: its error fails the job, not a hang.
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        // An `ErrorEvent`; its message read as a property (no web-sys feature for one field).
        let why = js_sys::Reflect::get(&e, &"message".into()).ok();
        let why = why.and_then(|m| m.as_string()).unwrap_or_default();
        let message = format!("a reading worker stopped: {why}");
        step(Some((index, Reply::Failed(Failure::from(message)))));
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Ok(Reader {
        worker,
        ready: false,
        in_flight: 0,
        set_up: false,
        _on_message: on_message,
        _on_error: on_error,
    })
}
