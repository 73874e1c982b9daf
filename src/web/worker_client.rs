//! The page's side of the worker: one Worker per job, so Cancel is `terminate()` and a new job
//! never sees messages of an old one.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// Trunk's loader for the worker bin (`data-loader-shim`), next to index.html.
const WORKER_URL: &str = "./gymscope-worker_loader.js";

pub struct WorkerJob {
    worker: Worker,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

impl WorkerJob {
    /// Starts a worker, sends it `request`, and calls `on_message` with each message it posts.
    pub fn start(request: &JsValue, mut on_message: impl FnMut(JsValue) + 'static) -> Result<WorkerJob, String> {
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Classic);
        let worker = Worker::new_with_options(WORKER_URL, &options).map_err(|e| format!("cannot start the worker: {e:?}"))?;
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| on_message(e.data()));
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.post_message(request).map_err(|e| format!("{e:?}"))?;
        Ok(WorkerJob { worker, _on_message: on_message })
    }
}

impl Drop for WorkerJob {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}
