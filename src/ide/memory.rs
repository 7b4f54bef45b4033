//! Handing freed memory back to the system. The binary allocates with mimalloc, which keeps
//! the pages a thread freed for that thread's next allocations and returns them to the kernel
//! only after a delay, as it next runs. The language server drops a whole analysis library (an
//! evaluated package: hundreds of megabytes) at once and may then sit idle, so resident memory
//! would stay at its peak; after such a drop it asks mimalloc to return what is free now.

/// Returns the calling thread's free pages, and the process's abandoned ones, to the kernel.
/// A no-op for memory of another allocator (tests link the system allocator).
pub fn return_freed() {
    // SAFETY: `mi_collect` only walks mimalloc's own heaps; it takes no pointers.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// Indices into the bundled mimalloc's `mi_option_t` (version 3; the sys crate's constants
/// are version 2's). A test checks each by its default.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const PAGE_FULL_RETAIN: libmimalloc_sys::mi_option_t = 36;

/// Tunes mimalloc for a process that holds its memory for hours and frees most of what each
/// analysis made: freed pages go back to the kernel at once, not a second later and only when
/// the thread next allocates, and no emptied pages are retained per size class (each thread
/// kept some of every size class it ever used). With every transformers modeling file
/// open (`benches/lsp_memory.rs`) idle memory was 373 MB without this and 264–365 MB (median
/// 347) over six runs with it; the peak went from 503 to 435–469 MB.
pub fn return_freed_promptly() {
    // SAFETY: setting an option takes no pointers; mimalloc reads these two at each use.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
        libmimalloc_sys::mi_option_set(PAGE_FULL_RETAIN, 0);
    }
}

/// Tunes mimalloc for a batch run (`check`, `graph`, `run`): freed pages are kept for the
/// next allocations until the process exits, never handed back to the kernel. Handing them
/// back after mimalloc's delay made each later use of them fault in a zeroed (often 2 MB
/// huge) page again: over 19 transformers modeling files, `check --no-cache` took 23,660 and
/// 15,000 page faults and 8.2 / 7.8 CPU-seconds with the default, 693 and 6.8 / 6.9 s with
/// this, at the same peak memory (freed pages are reused, not added to).
pub fn hold_freed_pages() {
    // SAFETY: setting an option takes no pointers; mimalloc reads it at each purge.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, -1);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_option_indices_are_the_bundled_mimallocs() {
        if std::env::vars().any(|(k, _)| k.starts_with("MIMALLOC_")) {
            eprintln!("skipped: MIMALLOC_ variables set the options' values");
            return;
        }
        // SAFETY: reading an option takes no pointers.
        let (purge_delay, page_full_retain) = unsafe {
            (
                libmimalloc_sys::mi_option_get(super::PURGE_DELAY),
                libmimalloc_sys::mi_option_get(super::PAGE_FULL_RETAIN),
            )
        };
        assert_eq!((purge_delay, page_full_retain), (1000, 2));
    }
}
