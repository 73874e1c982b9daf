//! The native allocator (mimalloc, the binary's `#[global_allocator]`) and the two memory
//! settings every command runs with ([`configure`]).
//!
//! Why: faulting fresh memory in is what costs here, not allocating. A command's memory is
//! bounded by its rollouts and the process ends, so pages are kept rather than given back.
//! - Purging off: mimalloc gives freed pages back to the OS after a short delay, and the next
//!   batch's buffers then fault them in again, zeroed by the kernel: `clear_page_erms` was 10% of
//!   `gymscope profile`'s CPU time (perf), and system time fell from 0.52–0.63 s to 0.26–0.28 s
//!   on the 746 MB agentic bench run with purging off, at the same peak RSS.
//! - No transparent huge pages: mimalloc asks for them on its arenas, and each first touch of a
//!   2 MiB page is zeroed whole; on a VM that is the slowest fault there is. On the same run
//!   (6 alternating runs each, 2-core VM) system time fell from 0.34–0.73 s to 0.28–0.38 s, wall
//!   time from 1.23–1.46 s to 1.12–1.41 s, and peak RSS from 125–153 MB to 118–130 MB.

#![allow(unsafe_code)] // mimalloc's and the kernel's C options (SAFETY at each call)

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (the -sys crate names only some).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps freed pages for reuse and uses small pages; call before the work starts (the binary's
/// `main` does).
pub fn configure() {
    // SAFETY: setting an option is a plain store in mimalloc's option table; -1 means "never".
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, -1) };
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag of this process; a
    // kernel without it returns an error, which leaves things as they were.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use libmimalloc_sys::{mi_option_get, mi_option_use_numa_nodes};

    #[test]
    fn purging_and_huge_pages_are_off() {
        // SAFETY: reading and setting options are plain loads and stores; PR_GET_THP_DISABLE
        // only reads a flag.
        unsafe {
            // mimalloc 3's purge delay defaults to 1000 ms (options.c), and the next option is
            // the one the -sys crate names 16.
            assert_eq!(mi_option_get(super::PURGE_DELAY), 1000);
            assert_eq!(mi_option_use_numa_nodes, super::PURGE_DELAY + 1);
            super::configure();
            assert_eq!(mi_option_get(super::PURGE_DELAY), -1);
            assert_eq!(libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0), 1);
        }
    }
}
