//! Edit → publishDiagnostics latency of `staticfx lsp` over stdio, as an editor sees it, beside
//! `ruff server` on the same file, the same keystrokes and the same layouts in the same run.
//!
//! cargo bench --bench lsp_latency -- [FILE] [--edits N] [--root DIR] [--debounce MS] [--hints]
//!
//! FILE defaults to the biggest transformers `modeling_*.py` under `$STATICFX_CORPUS/transformers`.
//! Each server is started with its default settings (staticfx's debounce only if `--debounce`
//! asks for one) and a space is typed and deleted, N keystrokes per site, at three sites: the
//! first statement of the first forward, of the forward in the middle of the file, and the end
//! of the first top-level import. A space changes no value (the server may cut the work off
//! there), so the same is done with a digit changed and changed back: the first number in the
//! first forward (or the next forward that has one), in the middle one, and at the top level.
//! Before each site the bench waits until the server has used no CPU for half a second (see
//! `settle`). Both servers do this twice:
//! - **in its package**: the file where it lies, the workspace root `--root` or else the folder
//!   above the file's top package (so `from ...modeling_utils import` resolves);
//! - **alone**: the file copied by itself into an empty folder, which is the workspace.
//!
//! The anchor is `ruff server` (`$STATICFX_RUFF`, else `ruff` on PATH); without it the ruff
//! column says so. staticfx then also types the keystroke once in every forward of the file (the
//! cost depends on how many classes inline the edited one).
//!
//! With `--hints`, each layout also runs a staticfx session that, as an editor with inlay hints
//! and code lenses on does, asks for the hints of the 80 lines around the edit and the code
//! lenses as each version's diagnostics arrive: its keystrokes beside the session without, and
//! the hints' and lenses' own latency from the diagnostics.
//!
//! Memory with every modeling file open is `benches/lsp_memory.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;
use support::lsp::{ruff_command, staticfx_command, Lsp};

fn largest_modeling_file(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).map(|n| n.starts_with("modeling_") && n.ends_with(".py")).unwrap_or(false)
                // modeling_utils.py is the largest but holds no forward to edit in.
                && std::fs::read_to_string(&p).map(|t| t.contains("def forward(")).unwrap_or(false)
            {
                let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                if best.as_ref().map(|(l, _)| len > *l).unwrap_or(true) {
                    best = Some((len, p));
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// Where a keystroke is typed.
struct Site {
    name: &'static str,
    line: usize,
    col: u32,
    /// None: a space typed at `col` (the end of the line) and deleted again. Some(d): the
    /// digit `d` at `col` changed to another and back, which changes what the code computes.
    digit: Option<char>,
}

/// Types `site`'s keystroke and undoes it, `edits` keystrokes in all, timing each until the
/// diagnostics of its version arrive. With `follow_up`, each version's diagnostics are followed
/// by what an editor with inlay hints and code lenses on asks next, timed from their arrival.
fn keystrokes(
    lsp: &mut Lsp,
    uri: &str,
    site: &Site,
    edits: usize,
    version: &mut i64,
    follow_up: Option<&mut FollowUps>,
) -> Vec<f64> {
    let mut samples = Vec::with_capacity(edits);
    let mut follow_up = follow_up;
    for i in 0..edits {
        *version += 1;
        let (end, text) = match site.digit {
            Some(d) if i % 2 == 0 => (site.col + 1, other_digit(d).to_string()),
            Some(d) => (site.col + 1, d.to_string()),
            None if i % 2 == 0 => (site.col, " ".to_string()),
            None => (site.col + 1, String::new()),
        };
        let change = json!({"range": {"start": {"line": site.line, "character": site.col}, "end": {"line": site.line, "character": end}}, "text": text});
        let t = Instant::now();
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": *version}, "contentChanges": [change]}),
        );
        lsp.diagnostics(*version);
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some(f) = follow_up.as_deref_mut() {
            f.after_diagnostics(lsp, uri, site.line);
        }
    }
    samples
}

/// The lines an editor shows around an edit, and so asks inlay hints for.
const VISIBLE_LINES: usize = 80;

/// The requests that follow each version's diagnostics with inlay hints and code lenses on,
/// and their latencies in ms.
#[derive(Default)]
struct FollowUps {
    hints: Vec<f64>,
    lenses: Vec<f64>,
    /// How many hints the visible ranges held, in all.
    hints_shown: usize,
}

impl FollowUps {
    /// `textDocument/inlayHint` for the `VISIBLE_LINES` around `line`, then
    /// `textDocument/codeLens`, each timed from its request (the first sent as the diagnostics
    /// arrived).
    fn after_diagnostics(&mut self, lsp: &mut Lsp, uri: &str, line: usize) {
        let first = line.saturating_sub(VISIBLE_LINES / 2);
        let range = json!({"start": {"line": first, "character": 0}, "end": {"line": first + VISIBLE_LINES, "character": 0}});
        let t = Instant::now();
        let hints = lsp.request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": range}),
        );
        self.hints.push(t.elapsed().as_secs_f64() * 1e3);
        self.hints_shown += hints["result"].as_array().map_or(0, Vec::len);
        let t = Instant::now();
        lsp.request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        );
        self.lenses.push(t.elapsed().as_secs_f64() * 1e3);
    }
}

/// Waits until the server is idle, as it is when a user who stopped typing goes on: the open's
/// or the last site's second stage (the flagged retraces) has run, and the keystrokes are
/// timed against the complete analysis. Typed at once instead, each keystroke would find the
/// second stage still pending and cheaper to follow.
fn settle(lsp: &Lsp) {
    lsp.wait_idle(
        Duration::from_millis(500),
        Instant::now() + Duration::from_secs(300),
    );
}

fn other_digit(d: char) -> char {
    if d == '9' {
        '8'
    } else {
        (d as u8 + 1) as char
    }
}

/// The first digit in `lines[from..to]` that starts a number literal outside comments and
/// strings, as (line, UTF-16 column, digit).
fn first_number(lines: &[&str], from: usize, to: usize) -> Option<(usize, u32, char)> {
    (from..to.min(lines.len())).find_map(|i| {
        let line = lines[i];
        let mut prev = ' ';
        let mut quote = None;
        for (col, c) in line.char_indices() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '#' => return None,
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c.is_ascii_digit()
                    && !(prev.is_alphanumeric() || prev == '_' || prev == '.') =>
                {
                    return Some((i, line[..col].encode_utf16().count() as u32, c));
                }
                None => {}
            }
            prev = c;
        }
        None
    })
}

/// The line after the last of the function defined at `def`: the first code line indented no
/// deeper than its `def`.
fn end_of_function(lines: &[&str], def: usize) -> usize {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = indent(lines[def]);
    (def + 1..lines.len())
        .find(|&i| {
            let l = lines[i].trim();
            !l.is_empty() && !l.starts_with('#') && !l.starts_with(')') && indent(lines[i]) <= depth
        })
        .unwrap_or(lines.len())
}

/// (p50, p95) in ms.
fn quantiles(samples: &[f64]) -> (f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (percentile(&sorted, 0.5), percentile(&sorted, 0.95))
}

/// The folder above `file`'s top package: the root a user opens for a file in place.
fn package_root(file: &Path) -> PathBuf {
    let mut dir = file.parent().unwrap().to_path_buf();
    while dir.join("__init__.py").exists() && dir.parent().is_some() {
        dir = dir.parent().unwrap().to_path_buf();
    }
    dir
}

struct Session {
    open_ms: f64,
    /// With hints and lenses on: their latencies after each keystroke's diagnostics.
    follow_ups: Option<FollowUps>,
    diagnostics: usize,
    /// Latencies per site, in the order of the sites.
    sites: Vec<Vec<f64>>,
    every_forward: Vec<f64>,
}

struct Run<'a> {
    file: &'a Path,
    root: &'a Path,
    text: &'a str,
    sites: &'a [Site],
    edits: usize,
    initialization: Value,
}

impl Run<'_> {
    /// One server's session; with `hints_on`, each version's diagnostics are followed by the
    /// inlay hints of the visible range and the code lenses.
    fn session(&self, command: Command, every_forward: &[Site], hints_on: bool) -> Session {
        let mut lsp = Lsp::start(command);
        let uri = support::lsp::file_uri(self.file);
        lsp.initialize(self.root, self.initialization.clone());
        let t = Instant::now();
        lsp.open(&uri, self.text);
        let diagnostics = lsp.diagnostics(1);
        let open_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut version = 1;
        let mut follow_ups = hints_on.then(FollowUps::default);
        let sites = self
            .sites
            .iter()
            .map(|site| {
                settle(&lsp);
                keystrokes(
                    &mut lsp,
                    &uri,
                    site,
                    self.edits,
                    &mut version,
                    follow_ups.as_mut(),
                )
            })
            .collect();
        settle(&lsp);
        let every_forward = every_forward
            .iter()
            .flat_map(|site| keystrokes(&mut lsp, &uri, site, 2, &mut version, follow_ups.as_mut()))
            .collect();
        lsp.stop();
        Session {
            open_ms,
            follow_ups,
            diagnostics,
            sites,
            every_forward,
        }
    }
}

/// The keystrokes of the session with inlay hints and code lenses on beside the one without
/// (and the anchor's), and the latency of the hints and lenses after each version's diagnostics.
fn print_hints_on(sites: &[Site], off: &Session, on: &Session, ruff: Option<&Session>) {
    let follow = on.follow_ups.as_ref().expect("a session with hints on");
    println!();
    println!(
        "staticfx with inlay hints ({VISIBLE_LINES} visible lines around the edit) and code lenses \
         asked for after each version's diagnostics:"
    );
    println!("| site | p95 hints off | p95 hints on | on / off | ruff server p95 |");
    println!("|---|---|---|---|---|");
    for (i, site) in sites.iter().enumerate() {
        let (_, p95_off) = quantiles(&off.sites[i]);
        let (_, p95_on) = quantiles(&on.sites[i]);
        let anchor = ruff.map_or(String::new(), |r| {
            format!("{:.1} ms", quantiles(&r.sites[i]).1)
        });
        println!(
            "| {} | {p95_off:.1} ms | {p95_on:.1} ms | {:.2}× | {anchor} |",
            site.name,
            p95_on / p95_off
        );
    }
    let all = |s: &Session| s.sites.concat();
    let (_, all_off) = quantiles(&all(off));
    let (_, all_on) = quantiles(&all(on));
    println!(
        "every site's keystrokes: p95 {all_off:.1} ms hints off, {all_on:.1} ms hints on ({:+.1}%)",
        (all_on / all_off - 1.0) * 100.0
    );
    let (h50, h95) = quantiles(&follow.hints);
    let (l50, l95) = quantiles(&follow.lenses);
    println!(
        "after the diagnostics: inlay hints p50 {h50:.1} ms, p95 {h95:.1} ms ({} requests, {:.1} \
         hints per range); code lenses p50 {l50:.1} ms, p95 {l95:.1} ms",
        follow.hints.len(),
        follow.hints_shown as f64 / follow.hints.len().max(1) as f64
    );
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut file = None;
    let mut edits = 20usize;
    let mut root = None;
    // The server's default unless `--debounce` asks for one.
    let mut debounce: Option<u64> = None;
    // Also a staticfx session with inlay hints and code lenses asked for after each version.
    let mut hints = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--edits" => edits = args.next().unwrap().parse().unwrap(),
            "--root" => root = args.next().map(PathBuf::from),
            "--debounce" => debounce = Some(args.next().unwrap().parse().unwrap()),
            "--hints" => hints = true,
            _ => file = Some(PathBuf::from(a)),
        }
    }
    let corpus = std::env::var_os("STATICFX_CORPUS").map(PathBuf::from);
    let Some(file) = file.or_else(|| {
        corpus
            .as_deref()
            .and_then(|c| largest_modeling_file(&c.join("transformers")))
    }) else {
        // `cargo test --all-targets` runs this binary too, on machines without the corpus.
        println!(
            "lsp_latency: skipped, no file given and STATICFX_CORPUS (the directory holding the \
             transformers package) is not set or holds no modeling file"
        );
        return;
    };
    let file = std::fs::canonicalize(&file).unwrap();
    let in_package_root = root.unwrap_or_else(|| package_root(&file));
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let forwards: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("def forward("))
        .map(|(i, _)| i)
        .collect();
    let first_statement = |def: usize| {
        (def + 1..lines.len()).find(|&i| {
            let l = lines[i].trim();
            !l.is_empty()
                && !l.starts_with('#')
                && !l.starts_with(')')
                && !l.ends_with(':')
                && !l.ends_with(',')
                && !l.starts_with('"')
                && !l.ends_with('(')
                && lines[i].starts_with("        ")
        })
    };
    let end_of = |line: usize| lines[line].encode_utf16().count() as u32;
    let at = |name, line| Site {
        name,
        line,
        col: end_of(line),
        digit: None,
    };
    let Some(first_body) = forwards.first().and_then(|&d| first_statement(d)) else {
        println!(
            "lsp_latency: skipped, {} has no forward with a statement to edit",
            file.display()
        );
        return;
    };
    let middle_body = first_statement(forwards[forwards.len() / 2]).unwrap_or(first_body);
    let Some(import) = lines
        .iter()
        .position(|l| l.starts_with("import ") || l.starts_with("from "))
    else {
        println!(
            "lsp_latency: skipped, {} has no top-level import to edit",
            file.display()
        );
        return;
    };
    let mut sites = vec![
        at("first forward's body", first_body),
        at("middle forward's body", middle_body),
        at("top-level import", import),
    ];
    // The same places, with a keystroke that changes a value: a digit of a number in the
    // forward (the one after it when it has none) and the first number at the top level.
    let digit_site = |name, found: Option<(usize, u32, char)>| {
        found.map(|(line, col, d)| Site {
            name,
            line,
            col,
            digit: Some(d),
        })
    };
    let forward_number = |def: usize| {
        let mut d = def;
        loop {
            let end = end_of_function(&lines, d);
            if let Some(found) = first_number(&lines, d + 1, end) {
                return Some(found);
            }
            d = *forwards.iter().find(|&&f| f > d)?;
        }
    };
    let top_level_number = (0..lines.len())
        .filter(|&i| {
            let l = lines[i];
            !l.starts_with([' ', '\t', '#', '"', '\'', ')', ']', '}']) && !l.is_empty()
        })
        .find_map(|i| first_number(&lines, i, i + 1));
    sites.extend(digit_site(
        "first forward's body, a digit",
        forward_number(forwards[0]),
    ));
    sites.extend(digit_site(
        "middle forward's body, a digit",
        forward_number(forwards[forwards.len() / 2]),
    ));
    sites.extend(digit_site("top level, a digit", top_level_number));
    let every_forward: Vec<Site> = forwards
        .iter()
        .filter_map(|&d| first_statement(d))
        .map(|b| at("a forward", b))
        .collect();

    let alone_dir =
        std::env::temp_dir().join(format!("staticfx-lsp-latency-{}", std::process::id()));
    std::fs::create_dir_all(&alone_dir).unwrap();
    let alone_file = alone_dir.join(file.file_name().unwrap());
    std::fs::write(&alone_file, &text).unwrap();
    let layouts = [
        ("in its package", file.as_path(), in_package_root.as_path()),
        (
            "alone in a folder",
            alone_file.as_path(),
            alone_dir.as_path(),
        ),
    ];
    let initialization = match debounce {
        Some(ms) => json!({"debounceMs": ms}),
        None => json!({}),
    };
    let ruff_available = ruff_command().is_some();

    println!(
        "file: {} ({} lines, {} bytes)",
        file.display(),
        lines.len(),
        text.len()
    );
    for site in &sites {
        let what = match site.digit {
            Some(d) => format!("{d} → {} and back", other_digit(d)),
            None => "a space typed and deleted".into(),
        };
        println!(
            "site {:<32} line {:>5}: {what}: {}",
            site.name,
            site.line + 1,
            lines[site.line].trim()
        );
    }
    println!(
        "{edits} keystrokes per site; staticfx debounce: {}",
        debounce.map_or("server default".to_string(), |ms| format!("{ms} ms"))
    );
    if !ruff_available {
        println!(
            "ruff server: not found (set STATICFX_RUFF or put ruff on PATH); no anchor column"
        );
    }
    for (k, (layout, file, root)) in layouts.iter().enumerate() {
        let run = Run {
            file,
            root,
            text: &text,
            sites: &sites,
            edits,
            initialization: initialization.clone(),
        };
        let ours = run.session(
            staticfx_command(),
            if k == 0 { &every_forward } else { &[] },
            false,
        );
        let with_hints = hints.then(|| {
            run.session(
                staticfx_command(),
                if k == 0 { &every_forward } else { &[] },
                true,
            )
        });
        let ruff = ruff_command().map(|c| run.session(c, &[], false));
        println!();
        println!("## {layout} (workspace root {})", root.display());
        println!(
            "open → first diagnostics: staticfx {:.1} ms ({} diagnostics){}",
            ours.open_ms,
            ours.diagnostics,
            ruff.as_ref().map_or(String::new(), |r| format!(
                ", ruff server {:.1} ms ({} diagnostics)",
                r.open_ms, r.diagnostics
            ))
        );
        println!(
            "| site | staticfx p50 | staticfx p95 | ruff server p50 | ruff server p95 | p95 ratio |"
        );
        println!("|---|---|---|---|---|---|");
        for (i, site) in sites.iter().enumerate() {
            let (p50, p95) = quantiles(&ours.sites[i]);
            let anchor = ruff.as_ref().map(|r| quantiles(&r.sites[i]));
            match anchor {
                Some((r50, r95)) => println!(
                    "| {} | {p50:.1} ms | {p95:.1} ms | {r50:.1} ms | {r95:.1} ms | {:.2}× |",
                    site.name,
                    p95 / r95
                ),
                None => println!("| {} | {p50:.1} ms | {p95:.1} ms | | | |", site.name),
            }
        }
        if !ours.every_forward.is_empty() {
            let (p50, p95) = quantiles(&ours.every_forward);
            println!(
                "staticfx, the same keystroke in each of the {} forwards: p50 {p50:.1} ms, p95 {p95:.1} ms",
                every_forward.len()
            );
            // Two keystrokes per forward: a forward's time is its slower one.
            let mut slowest: Vec<(f64, usize)> = ours
                .every_forward
                .chunks(2)
                .zip(&every_forward)
                .map(|(pair, site)| (pair.iter().copied().fold(0.0, f64::max), site.line + 1))
                .collect();
            slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
            let listed: Vec<String> = slowest
                .iter()
                .take(5)
                .map(|(ms, line)| format!("line {line} {ms:.1} ms"))
                .collect();
            println!("staticfx, the slowest forwards: {}", listed.join(", "));
        }
        if let Some(on) = &with_hints {
            print_hints_on(&sites, &ours, on, ruff.as_ref());
        }
    }
    let _ = std::fs::remove_dir_all(&alone_dir);
}
