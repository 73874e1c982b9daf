//! The native allocator (mimalloc, the binary's `#[global_allocator]`) and its one setting.
//!
//! Why: mimalloc gives freed pages back to the OS after a short delay, and the next batch's
//! buffers then fault them in again, zeroed by the kernel: `clear_page_erms` was 10% of
//! `gymscope profile`'s CPU time (perf), and system time fell from 0.52–0.63 s to 0.26–0.28 s
//! on the 746 MB agentic bench run with purging off, at the same peak RSS (a command's memory
//! is bounded by its rollouts, and the process ends).

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (the -sys crate names only some).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps freed pages for reuse; call before the work starts (the binary's `main` does).
pub fn keep_freed_pages() {
    // SAFETY: setting an option is a plain store in mimalloc's option table; -1 means "never".
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, -1) };
}

#[cfg(test)]
mod tests {
    use libmimalloc_sys::{mi_option_get, mi_option_use_numa_nodes};

    #[test]
    fn the_option_is_mimallocs_purge_delay() {
        // SAFETY: reading and setting options are plain loads and stores.
        unsafe {
            // mimalloc 3's purge delay defaults to 1000 ms (options.c), and the next option is
            // the one the -sys crate names 16.
            assert_eq!(mi_option_get(super::PURGE_DELAY), 1000);
            assert_eq!(mi_option_use_numa_nodes, super::PURGE_DELAY + 1);
            super::keep_freed_pages();
            assert_eq!(mi_option_get(super::PURGE_DELAY), -1);
        }
    }
}
