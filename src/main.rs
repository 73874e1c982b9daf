//! One binary, two faces: the `gymscope` command line natively, the browser app on wasm32.

/// The native allocator: see the `mimalloc` line in Cargo.toml and `native::allocator` for the
/// measured reasons.
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    gymscope::native::allocator::configure();
    // Before any handler is installed: an inherited ignored SIGINT stays ignored.
    gymscope::native::signals::sigint_ignored_at_start();
    gymscope::cli::run()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    gymscope::web::start();
}
