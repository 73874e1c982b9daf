//! The page's side of the worker. One worker is started with the page, so its code is fetched
//! while the page loads and later jobs make no request at all. It runs one job at a time; a new
//! job while one runs, or [`BackgroundWorker::cancel`], terminates it and starts a fresh one
//! (terminating a busy worker is the only way to stop a synchronous job; gloo's worker crate
//! has no such thing, so this is web-sys).

use crate::web::protocol::{decode, encode, Failure, Reply, Request};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

type OnReply = Box<dyn FnMut(Reply)>;

thread_local! {
    /// When the worker's last message arrived (ms since the epoch), before it was decoded: the
    /// browser benchmark tells the reply's decoding from its transit (`pages::profile::job`).
    static ARRIVED_AT: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// When the worker's last message arrived, before it was decoded.
pub fn last_arrival() -> f64 {
    ARRIVED_AT.with(std::cell::Cell::get)
}

#[derive(Default)]
struct State {
    ready: bool,
    busy: bool,
    /// A request waiting for the worker's `Ready`.
    pending: Option<JsValue>,
    /// Receives the current job's replies.
    on_reply: Option<OnReply>,
    /// Told when the worker becomes ready (for the page's status and its tests).
    on_ready: Option<Rc<dyn Fn(bool)>>,
    /// The job's result is shown and only its files are being written: a new request waits
    /// behind them in the worker instead of terminating it.
    files_pending: bool,
    /// The job whose files a new request waits behind: their reply is its.
    finishing: Option<OnReply>,
}

#[derive(Clone)]
pub struct BackgroundWorker {
    worker: Rc<RefCell<Option<Worker>>>,
    state: Rc<RefCell<State>>,
    handler: Rc<Closure<dyn FnMut(MessageEvent)>>,
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
            ARRIVED_AT.with(|a| a.set(js_sys::Date::now()));
            let reply = decode::<Reply>(e.data()).unwrap_or_else(|e| Reply::Failed(e.into()));
            if let Reply::Ready = reply {
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
            let progress = matches!(reply, Reply::Progress(_));
            let files_follow = matches!(&reply, Reply::Profiled(p) if p.files_follow);
            let done = !progress && !files_follow;
            let finishing = if progress {
                None
            } else {
                st.borrow_mut().finishing.take()
            };
            if let Some(mut f) = finishing {
                f(reply); // the earlier job's files; the request behind them runs now
                return;
            }
            let callback = st.borrow_mut().on_reply.take();
            if let Some(mut f) = callback {
                f(reply);
                let mut s = st.borrow_mut();
                s.files_pending = files_follow;
                if done {
                    s.busy = false;
                } else if s.on_reply.is_none() {
                    s.on_reply = Some(f);
                }
            }
        });
        let this = BackgroundWorker {
            worker,
            state,
            handler: Rc::new(handler),
        };
        this.spawn()?;
        Ok(this)
    }

    fn spawn(&self) -> Result<(), String> {
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Classic);
        let worker = Worker::new_with_options(&crate::web::embed::worker_url(), &options)
            .map_err(|e| format!("cannot start the worker: {e:?}"))?;
        worker.set_onmessage(Some(self.handler.as_ref().as_ref().unchecked_ref()));
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

    /// Sends `request`; `on_reply` gets its progress and then its result or failure.
    pub fn request(&self, request: &Request, on_reply: impl FnMut(Reply) + 'static) {
        let mut on_reply: OnReply = Box::new(on_reply);
        if let Err(e) = self.send(request) {
            on_reply(Reply::Failed(Failure::from(e)));
            return;
        }
        self.state.borrow_mut().on_reply = Some(on_reply);
    }

    fn send(&self, request: &Request) -> Result<(), String> {
        let (busy, files_pending) = {
            let s = self.state.borrow();
            (s.busy, s.files_pending)
        };
        if busy && files_pending {
            let mut s = self.state.borrow_mut();
            s.finishing = s.on_reply.take();
            s.files_pending = false;
        } else if busy {
            self.cancel()?;
        }
        let message = encode(request)?;
        let ready = {
            let mut s = self.state.borrow_mut();
            s.busy = true;
            if !s.ready {
                s.pending = Some(message.clone());
            }
            s.ready
        };
        if ready {
            if let Some(worker) = self.worker.borrow().as_ref() {
                worker
                    .post_message(&message)
                    .map_err(|e| format!("{e:?}"))?;
            }
        }
        Ok(())
    }

    /// Whether a job runs that a new request would terminate (not one writing its files).
    pub fn is_busy(&self) -> bool {
        let s = self.state.borrow();
        s.busy && !s.files_pending
    }

    /// Stops the running job by terminating the worker, and starts a fresh one.
    pub fn cancel(&self) -> Result<(), String> {
        if let Some(worker) = self.worker.borrow_mut().take() {
            worker.terminate();
        }
        {
            let mut s = self.state.borrow_mut();
            s.on_reply = None;
            s.pending = None;
            s.finishing = None;
            s.files_pending = false;
        }
        self.spawn()
    }
}

/// A page's worker handle: started with the page, shared by its components; a worker that
/// could not start answers every request with that failure.
#[derive(Clone)]
pub struct WorkerHandle(Rc<Result<BackgroundWorker, String>>);

impl WorkerHandle {
    pub fn start(on_ready: impl Fn(bool) + 'static) -> WorkerHandle {
        WorkerHandle(Rc::new(BackgroundWorker::start(on_ready)))
    }

    pub fn request(&self, request: &Request, mut on_reply: impl FnMut(Reply) + 'static) {
        match self.0.as_ref() {
            Ok(w) => w.request(request, on_reply),
            Err(e) => on_reply(Reply::Failed(Failure::from(e.clone()))),
        }
    }

    pub fn is_busy(&self) -> bool {
        self.0
            .as_ref()
            .as_ref()
            .is_ok_and(BackgroundWorker::is_busy)
    }

    pub fn cancel(&self) {
        if let Ok(w) = self.0.as_ref() {
            let _ = w.cancel();
        }
    }
}

/// The worker as components hold it (a `Copy` handle to the page's one worker).
pub type SharedWorker = leptos::prelude::StoredValue<WorkerHandle, leptos::prelude::LocalStorage>;

/// Starts a page's worker, with a hidden `data-worker-state` element the tests wait on.
pub fn start_page_worker() -> (SharedWorker, leptos::prelude::RwSignal<bool>) {
    use leptos::prelude::*;
    let ready = RwSignal::new(false);
    let worker = StoredValue::new_local(WorkerHandle::start(move |r| ready.set(r)));
    (worker, ready)
}
