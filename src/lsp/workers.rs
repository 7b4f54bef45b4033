//! Long-lived analysis threads with large stacks. The evaluator recurses as deep as the
//! model's source nests, so analysis cannot run on the runtime's small-stack threads; a fresh
//! thread per keystroke paid for faulting in its stack again every time.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::ide::AnalysisHost;

/// A job gets its thread's host, which keeps the sessions of the documents sent there.
type Job = Box<dyn FnOnce(&mut AnalysisHost) + Send>;

const THREADS: usize = 2;

/// How long a document's session (and a library no session needs) is kept without use
/// before a thread with nothing to do drops it. `STATICFX_SESSION_IDLE_MS` sets it (tests).
fn idle_after() -> Duration {
    let ms = std::env::var("STATICFX_SESSION_IDLE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5 * 60 * 1000);
    Duration::from_millis(ms)
}

/// How long a thread's queue stays empty before its host drops the sessions of documents
/// only opened that another document opened after them made old
/// (`AnalysisHost::trim_only_opened`): after the burst of a package's files opened at once,
/// not between two of its jobs; and the trees its latest analyses did not read
/// (`AnalysisHost::release_unused_trees`): after a burst of keystrokes, not between two.
const TRIM_AFTER: Duration = Duration::from_millis(300);

/// How many documents' sessions each thread's host keeps (`ide::host::KEPT_SESSIONS` by
/// default). `STATICFX_KEPT_SESSIONS` sets it (tests, the memory bench).
fn session_cap() -> usize {
    std::env::var("STATICFX_KEPT_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(crate::ide::host::KEPT_SESSIONS)
}

/// One queue per thread: a document's analyses always go to the same thread, which keeps
/// that document's incremental session (in the thread's `ide::AnalysisHost`).
struct Pool {
    queues: Vec<Mutex<Sender<Job>>>,
    next: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let opened_order = crate::ide::host::OpenedOrder::default();
        let queues = (0..THREADS)
            .map(|i| {
                let order = opened_order.clone();
                let (tx, rx) = channel::<Job>();
                let idle = idle_after();
                let cap = session_cap();
                crate::ide::stack::thread(&format!("staticfx-analysis-{i}"))
                    .spawn(move || {
                        let mut host =
                            AnalysisHost::with_session_cap(cap).in_opened_order(order.clone());
                        // Whether the queue has stayed empty since the host was last trimmed.
                        let mut trimmed = true;
                        loop {
                            let wait = if trimmed { idle } else { TRIM_AFTER.min(idle) };
                            match rx.recv_timeout(wait) {
                                Ok(job) => {
                                    let newest = order.newest();
                                    job(&mut host);
                                    trimmed = false;
                                    if order.newest() != newest {
                                        wake_the_others(i);
                                    }
                                }
                                Err(RecvTimeoutError::Timeout) if !trimmed => {
                                    host.trim_only_opened();
                                    host.release_unused_trees();
                                    trimmed = true;
                                }
                                Err(RecvTimeoutError::Timeout) => host.evict_idle(idle),
                                Err(RecvTimeoutError::Disconnected) => break,
                            }
                        }
                    })
                    .expect("start an analysis thread");
                Mutex::new(tx)
            })
            .collect();
        Pool {
            queues,
            next: AtomicUsize::new(0),
        }
    })
}

/// Queues a job that does nothing on every thread but `thread`, which has just started a
/// session of a document only opened: a thread already idle, whose own such session the new
/// one makes old, then trims it once its queue is empty again (it trimmed before and would
/// otherwise wait for the idle eviction).
fn wake_the_others(thread: usize) {
    for (t, queue) in pool().queues.iter().enumerate() {
        if t != thread {
            if let Ok(queue) = queue.lock() {
                let _ = queue.send(Box::new(|_: &mut AnalysisHost| {}));
            }
        }
    }
}

/// The analysis thread the jobs keyed by `key` run on ([`run_keyed`]).
pub fn thread_of(key: &impl Hash) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish() as usize % THREADS
}

/// Runs `f` on an analysis thread; a panic in `f` comes back as its message and the thread
/// lives on for the next job.
pub async fn run<T: Send + 'static>(
    f: impl FnOnce(&mut AnalysisHost) -> T + Send + 'static,
) -> Result<T, String> {
    let t = pool().next.fetch_add(1, Ordering::Relaxed);
    run_on(t, f).await
}

/// Like `run`, on the thread `key` picks: jobs with equal keys run on the same thread.
pub async fn run_keyed<T: Send + 'static>(
    key: &impl Hash,
    f: impl FnOnce(&mut AnalysisHost) -> T + Send + 'static,
) -> Result<T, String> {
    run_on(thread_of(key), f).await
}

/// Runs `f` on every analysis thread, after the jobs queued there; the panics left out.
pub async fn on_every_thread<T: Send + 'static>(
    f: impl Fn(&mut AnalysisHost) -> T + Send + Clone + 'static,
) -> Vec<T> {
    let mut out = Vec::with_capacity(THREADS);
    for t in 0..THREADS {
        if let Ok(v) = run_on(t, f.clone()).await {
            out.push(v);
        }
    }
    out
}

async fn run_on<T: Send + 'static>(
    thread: usize,
    f: impl FnOnce(&mut AnalysisHost) -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move |host| {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(host)))
            .map_err(|p| crate::ide::stack::panic_message(p.as_ref()));
        let _ = tx.send(r);
    });
    let queues = &pool().queues;
    queues[thread % queues.len()]
        .lock()
        .map_err(|_| "analysis threads unavailable".to_string())?
        .send(job)
        .map_err(|_| "analysis threads stopped".to_string())?;
    rx.await
        .unwrap_or_else(|_| Err("analysis thread died".into()))
}
