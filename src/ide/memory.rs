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
