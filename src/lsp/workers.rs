//! Long-lived analysis threads with large stacks. The evaluator recurses as deep as the
//! model's source nests, so analysis cannot run on the runtime's small-stack threads; a fresh
//! thread per keystroke paid for faulting in its stack again every time.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

const THREADS: usize = 2;
const STACK: usize = 256 << 20;

struct Pool {
    jobs: Mutex<Sender<Job>>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..THREADS {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("staticfx-analysis-{i}"))
                .stack_size(STACK)
                .spawn(move || work(&rx))
                .expect("start an analysis thread");
        }
        Pool {
            jobs: Mutex::new(tx),
        }
    })
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Runs `f` on an analysis thread; a panic in `f` comes back as its message and the thread
/// lives on for the next job.
pub async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into())
        });
        let _ = tx.send(r);
    });
    pool()
        .jobs
        .lock()
        .map_err(|_| "analysis threads unavailable".to_string())?
        .send(job)
        .map_err(|_| "analysis threads stopped".to_string())?;
    rx.await
        .unwrap_or_else(|_| Err("analysis thread died".into()))
}
