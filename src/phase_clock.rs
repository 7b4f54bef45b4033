//! Where a cold analysis spends its time, by phase: parsing, evaluating imported modules,
//! constructing the classes' module trees, tracing their forwards, the flagged retraces, and
//! the graph-break annotation, and the rest of checking a file. `benches/check_phases.rs`
//! prints the table.
//!
//! Each phase counts exclusive wall time: a module imported in the middle of a trace (a lazy
//! import forced by an attribute read) counts as imports, not as tracing. The clock is off
//! unless [`start`] turned it on, and then costs two `Instant::now()` per phase entered.
//! `staticfx check` turns it on when `STATICFX_PHASE_CLOCK` is set, and prints the times on
//! stderr at the end.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// tree-sitter parsing of the entry file and every file it imports.
    Parse,
    /// Executing imported modules' top levels (their class and function definitions).
    Imports,
    /// Per-class analysis: building each class's instance from its default config.
    Construction,
    /// The default trace of each class's forward (with its symbolic-shape retraces).
    Tracing,
    /// The retraces under other flags (`output_attentions`, gradient checkpointing, ...).
    FlaggedRetraces,
    /// Graph-break rules over the traced graphs.
    Annotation,
    /// The rest of checking a file: reading it and its settings, the check cache, turning
    /// findings into diagnostics and messages.
    Other,
}

impl Phase {
    pub const ALL: [Phase; 7] = [
        Phase::Parse,
        Phase::Imports,
        Phase::Construction,
        Phase::Tracing,
        Phase::FlaggedRetraces,
        Phase::Annotation,
        Phase::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Parse => "parse",
            Phase::Imports => "imports",
            Phase::Construction => "construction",
            Phase::Tracing => "tracing",
            Phase::FlaggedRetraces => "flagged retraces",
            Phase::Annotation => "annotation",
            Phase::Other => "other",
        }
    }
}

/// Exclusive time per phase, indexed like [`Phase::ALL`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimes(pub [Duration; Phase::ALL.len()]);

impl PhaseTimes {
    pub fn get(&self, phase: Phase) -> Duration {
        self.0[phase as usize]
    }

    pub fn total(&self) -> Duration {
        self.0.iter().sum()
    }

    /// One line per phase, `name seconds share`, as `staticfx check` prints them and
    /// `benches/check_phases.rs` reads them back.
    pub fn report(&self) -> String {
        let total = self.total().as_secs_f64().max(f64::MIN_POSITIVE);
        Phase::ALL
            .iter()
            .map(|&p| {
                let s = self.get(p).as_secs_f64();
                format!(
                    "phase {:<16} {s:>9.3} s {:>5.1}%\n",
                    p.name(),
                    100.0 * s / total
                )
            })
            .collect()
    }

    /// Reads back what [`PhaseTimes::report`] wrote, ignoring other lines.
    pub fn parse_report(text: &str) -> Option<PhaseTimes> {
        let mut times = PhaseTimes::default();
        let mut seen = 0;
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("phase ") else {
                continue;
            };
            let Some(i) = Phase::ALL.iter().position(|p| rest.starts_with(p.name())) else {
                continue;
            };
            let secs: f64 = rest[Phase::ALL[i].name().len()..]
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            times.0[i] = Duration::from_secs_f64(secs);
            seen += 1;
        }
        (seen == Phase::ALL.len()).then_some(times)
    }
}

static RUNNING: AtomicBool = AtomicBool::new(false);
/// What threads' clocks handed in when their outermost phase ended.
static COLLECTED: Mutex<PhaseTimes> = Mutex::new(PhaseTimes([Duration::ZERO; Phase::ALL.len()]));

#[derive(Default)]
struct ThreadClock {
    /// The phases entered and not left, innermost last.
    open: Vec<Phase>,
    /// When the innermost open phase last started counting.
    since: Option<Instant>,
    times: PhaseTimes,
    /// Everything this thread handed in, for the tests (other tests' threads hand in too).
    #[cfg(test)]
    handed_in: PhaseTimes,
}

thread_local! {
    static CLOCK: RefCell<ThreadClock> = RefCell::new(ThreadClock::default());
}

/// Turns the clock on for every thread and zeroes what it collected.
pub fn start() {
    *COLLECTED.lock().unwrap_or_else(|e| e.into_inner()) = PhaseTimes::default();
    RUNNING.store(true, Ordering::Relaxed);
}

/// Turns the clock off and returns the time collected since [`start`], summed over threads.
/// A phase still open on some thread is not included.
pub fn stop() -> PhaseTimes {
    RUNNING.store(false, Ordering::Relaxed);
    *COLLECTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts the time until the returned value is dropped as `phase`, pausing the phase it
/// interrupts.
#[must_use = "the phase ends when this is dropped"]
pub fn enter(phase: Phase) -> Entered {
    if !RUNNING.load(Ordering::Relaxed) {
        return Entered { counting: false };
    }
    CLOCK.with(|c| {
        let mut c = c.borrow_mut();
        let now = Instant::now();
        if let (Some(&outer), Some(since)) = (c.open.last(), c.since) {
            c.times.0[outer as usize] += now - since;
        }
        c.open.push(phase);
        c.since = Some(now);
    });
    Entered { counting: true }
}

pub struct Entered {
    counting: bool,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if !self.counting {
            return;
        }
        CLOCK.with(|c| {
            let mut c = c.borrow_mut();
            let now = Instant::now();
            if let (Some(inner), Some(since)) = (c.open.pop(), c.since) {
                c.times.0[inner as usize] += now - since;
            }
            c.since = Some(now);
            if c.open.is_empty() {
                let times = std::mem::take(&mut c.times);
                #[cfg(test)]
                for (sum, t) in c.handed_in.0.iter_mut().zip(times.0) {
                    *sum += t;
                }
                let mut all = COLLECTED.lock().unwrap_or_else(|e| e.into_inner());
                for (sum, t) in all.0.iter_mut().zip(times.0) {
                    *sum += t;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {}
    }

    fn handed_in_by_this_thread() -> PhaseTimes {
        CLOCK.with(|c| c.borrow().handed_in)
    }

    #[test]
    fn nested_phases_count_exclusive_time() {
        // Other tests' threads may hand in time while the clock runs: read this thread's.
        start();
        let before = handed_in_by_this_thread();
        let whole = Instant::now();
        {
            let _tracing = enter(Phase::Tracing);
            busy(Duration::from_millis(20));
            {
                let _imports = enter(Phase::Imports);
                busy(Duration::from_millis(30));
            }
            busy(Duration::from_millis(10));
        }
        let whole_ms = whole.elapsed().as_secs_f64() * 1e3;
        let all = stop();
        let after = handed_in_by_this_thread();
        let ms = |p: Phase| (after.get(p) - before.get(p)).as_secs_f64() * 1e3;
        let times = (before, after, whole_ms);
        // Each phase has at least its own busy time, and the nested one is not counted twice:
        // together they fit in the block's wall time, however loaded the machine is.
        assert!(ms(Phase::Imports) >= 30.0, "{times:?}");
        assert!(ms(Phase::Tracing) >= 30.0, "{times:?}");
        assert!(
            ms(Phase::Imports) + ms(Phase::Tracing) <= whole_ms + 0.5,
            "{times:?}"
        );
        assert_eq!(ms(Phase::Parse), 0.0);
        assert!(all.get(Phase::Imports) >= after.get(Phase::Imports) - before.get(Phase::Imports));
        // Off: nothing is counted.
        {
            let _parse = enter(Phase::Parse);
            busy(Duration::from_millis(5));
        }
        assert_eq!(handed_in_by_this_thread(), after);
    }

    #[test]
    fn a_report_reads_back() {
        let mut times = PhaseTimes::default();
        times.0[Phase::FlaggedRetraces as usize] = Duration::from_millis(1250);
        times.0[Phase::Other as usize] = Duration::from_millis(750);
        let text = times.report();
        assert!(text.contains("flagged retraces"), "{text}");
        assert!(text.contains("62.5%"), "{text}");
        assert_eq!(
            PhaseTimes::parse_report(&format!("noise\n{text}")),
            Some(times)
        );
        assert_eq!(PhaseTimes::parse_report("phase parse 1.0 s"), None);
    }
}
