#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use staticfx::cli::{Cli, Command};

fn main() -> std::process::ExitCode {
    // Syntax trees are most of what the language server holds: allocated by glibc beside
    // mimalloc, they kept a glibc arena per thread that frees from other threads fragmented,
    // and pages freed there were never reused for the rest.
    // SAFETY: before any other tree-sitter call, once; mimalloc's four functions are one
    // family, never return null for a non-zero size but when out of memory, and align as
    // malloc does.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
    let cli = Cli::parse();
    match cli.command {
        // The server runs its own runtime and gives analysis its own large-stack threads.
        Command::Lsp => {
            disable_transparent_huge_pages();
            staticfx::lsp::run_stdio()
        }
        _ => {
            staticfx::ide::hold_freed_pages();
            staticfx::cli::main(cli)
        }
    }
}

/// With transparent huge pages set to `always`, as many distributions ship them, a page
/// fault in memory the allocator had handed back to the kernel zeroes 2 MB. After a pause,
/// the next keystroke's allocations paid that, up to 15 ms of a 5 ms analysis. The server
/// gains nothing from huge pages; `run` keeps them for the executor's large products.
#[cfg(target_os = "linux")]
fn disable_transparent_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE reads no pointers; it sets a flag of this process only.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(not(target_os = "linux"))]
fn disable_transparent_huge_pages() {}
