//! One binary, two faces: the `gymscope` command line natively, the browser app on wasm32.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    gymscope::cli::run()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    gymscope::web::start();
}
