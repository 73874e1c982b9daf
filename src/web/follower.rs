//! Requests from a control that moves (a slider), over the page's worker.

use crate::web::protocol::{Reply, Request};
use crate::web::worker_client::{SharedWorker, WorkerHandle};
use std::rc::Rc;

/// Requests that follow a control as it moves (a slider): sent when the worker is idle, else
/// kept (only the last) until this follower's job is done, so a move never terminates a job
/// mid-way (which would cost the worker the run or selection it holds). A job of another
/// component that cancelled this one's leaves nothing stuck: the next move finds the worker idle.
#[derive(Clone, Copy)]
pub struct Follower {
    worker: SharedWorker,
    queued: leptos::prelude::StoredValue<Option<Request>, leptos::prelude::LocalStorage>,
    on_reply: leptos::prelude::StoredValue<Rc<dyn Fn(Reply)>, leptos::prelude::LocalStorage>,
}

impl Follower {
    pub fn new(worker: SharedWorker, on_reply: impl Fn(Reply) + 'static) -> Follower {
        use leptos::prelude::*;
        let on_reply: Rc<dyn Fn(Reply)> = Rc::new(on_reply);
        Follower {
            worker,
            queued: StoredValue::new_local(None),
            on_reply: StoredValue::new_local(on_reply),
        }
    }

    pub fn send(self, request: Request) {
        use leptos::prelude::*;
        if self.worker.with_value(WorkerHandle::is_busy) {
            self.queued.set_value(Some(request));
            return;
        }
        // Anything kept is older than this request.
        self.queued.set_value(None);
        let f = self.on_reply.get_value();
        self.worker.with_value(|w| {
            w.request(&request, move |reply| {
                let done = !matches!(reply, Reply::Progress(_));
                f(reply);
                // Once this reply's handler has marked the worker idle.
                if done {
                    if let Some(next) = self.queued.try_update_value(Option::take).flatten() {
                        leptos::task::spawn_local(async move { self.send(next) });
                    }
                }
            });
        });
    }
}
