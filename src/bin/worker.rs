//! The browser app's Web Worker: big files are read and checked here, off the page's thread.
//! Built by Trunk (`data-type="worker"`) with the `web-worker` feature; wasm32 only.

#[cfg(target_arch = "wasm32")]
fn main() {
    gymscope::web::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gymscope-worker is the web app's worker: it is built by `scripts/trunk.sh build`");
}
