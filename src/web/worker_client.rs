//! The page's side of the worker. One worker is started with the page, so its code is fetched
//! while the page loads and later jobs make no request at all. It runs one job at a time;
//! `cancel` (or a new job while one runs) terminates it and starts a fresh one.

use super::protocol;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// Trunk's loader for the worker bin (`data-loader-shim`), next to index.html.
const WORKER_URL: &str = "./gymscope-worker_loader.js";

type Callback = Box<dyn FnMut(JsValue)>;

#[derive(Default)]
struct State {
    ready: bool,
    busy: bool,
    /// A request waiting for the worker's `ready`.
    pending: Option<JsValue>,
    /// Receives the current job's messages.
    callback: Option<Callback>,
    /// Told when the worker becomes ready (for the page's status and its tests).
    on_ready: Option<Rc<dyn Fn(bool)>>,
}

#[derive(Clone)]
pub struct BackgroundWorker {
    worker: Rc<RefCell<Option<Worker>>>,
    state: Rc<RefCell<State>>,
    _handler: Rc<Closure<dyn FnMut(MessageEvent)>>,
}

impl BackgroundWorker {
    pub fn start(on_ready: impl Fn(bool) + 'static) -> Result<BackgroundWorker, String> {
        let state = Rc::new(RefCell::new(State {
            on_ready: Some(Rc::new(on_ready)),
            ..State::default()
        }));
        let worker: Rc<RefCell<Option<Worker>>> = Rc::new(RefCell::new(None));
        let (st, w) = (state.clone(), worker.clone());
        let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let data = e.data();
            let kind = protocol::text(&data, "kind");
            if kind == "ready" {
                let (pending, on_ready) = {
                    let mut s = st.borrow_mut();
                    s.ready = true;
                    (s.pending.take(), s.on_ready.clone())
                };
                if let Some(f) = on_ready {
                    f(true);
                }
                if let (Some(request), Some(worker)) = (pending, w.borrow().as_ref()) {
                    let _ = worker.post_message(&request);
                }
                return;
            }
            let done = kind != "progress";
            let callback = st.borrow_mut().callback.take();
            if let Some(mut f) = callback {
                f(data);
                let mut s = st.borrow_mut();
                if done {
                    s.busy = false;
                } else if s.callback.is_none() {
                    s.callback = Some(f);
                }
            }
        });
        let this = BackgroundWorker {
            worker,
            state,
            _handler: Rc::new(handler),
        };
        this.spawn()?;
        Ok(this)
    }

    fn spawn(&self) -> Result<(), String> {
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Classic);
        let worker = Worker::new_with_options(WORKER_URL, &options)
            .map_err(|e| format!("cannot start the worker: {e:?}"))?;
        worker.set_onmessage(Some(self._handler.as_ref().as_ref().unchecked_ref()));
        *self.worker.borrow_mut() = Some(worker);
        let on_ready = {
            let mut s = self.state.borrow_mut();
            s.ready = false;
            s.busy = false;
            s.on_ready.clone()
        };
        if let Some(f) = on_ready {
            f(false);
        }
        Ok(())
    }

    /// Sends `request`; `on_message` gets its progress and its final message.
    pub fn request(
        &self,
        request: JsValue,
        on_message: impl FnMut(JsValue) + 'static,
    ) -> Result<(), String> {
        if self.state.borrow().busy {
            self.cancel()?;
        }
        let ready = {
            let mut s = self.state.borrow_mut();
            s.busy = true;
            s.callback = Some(Box::new(on_message));
            if !s.ready {
                s.pending = Some(request.clone());
            }
            s.ready
        };
        if ready {
            if let Some(worker) = self.worker.borrow().as_ref() {
                worker
                    .post_message(&request)
                    .map_err(|e| format!("{e:?}"))?;
            }
        }
        Ok(())
    }

    /// Stops the running job by terminating the worker, and starts a fresh one.
    pub fn cancel(&self) -> Result<(), String> {
        if let Some(worker) = self.worker.borrow_mut().take() {
            worker.terminate();
        }
        {
            let mut s = self.state.borrow_mut();
            s.callback = None;
            s.pending = None;
        }
        self.spawn()
    }
}
