//! One binary, two faces: the `gymscope` command line natively, the browser app on wasm32.

/// The native allocator: see the `mimalloc` line in Cargo.toml for the measured reason.
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    gymscope::cli::run()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    gymscope::web::start();
}
