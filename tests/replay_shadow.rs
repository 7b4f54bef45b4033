//! The replay shadow check (`eval::trace::replay`, issue 40 item 1): a repeated module call is
//! compared with the re-rooted copy of its class's first call. The check must find the
//! repeats a replay could copy, refuse the ones whose nodes differ, and never change a graph.

use std::path::{Path, PathBuf};

use staticfx::analysis::{analyze_file, GraphOptions};
use staticfx::eval::trace::replay::{with_shadow, Tally};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/replay")
        .join(name)
}

/// Every graph of the file, node by node in program order (name, opcode, target, arguments,
/// meta, origin, region), and every finding: what a replay must leave as it is.
fn graphs(path: &Path) -> Vec<String> {
    let analysis = analyze_file(path, &GraphOptions::default()).expect("the file analyses");
    let mut out = vec![];
    for g in &analysis.graphs {
        out.push(format!(
            "graph {} error {:?}",
            g.name,
            g.error.as_ref().map(|e| &e.message)
        ));
        for &id in &g.graph.order {
            out.push(format!("{:?}", g.graph.node(id)));
        }
        out.push(format!("flagged {:?}", g.flagged_breaks));
    }
    out
}

fn shadowed(path: &Path) -> (Vec<String>, Vec<Tally>) {
    with_shadow(|| graphs(path))
}

#[test]
fn the_check_changes_no_graph() {
    let path = fixture("blocks.py");
    let plain = graphs(&path);
    let (watched, tallies) = shadowed(&path);
    assert!(!tallies.is_empty(), "the check ran");
    assert_eq!(plain, watched);
}

/// The tally of the last trace of `class` (a trace that learnt an input's rank from its first
/// layer runs again with it).
fn tally_of(tallies: &[Tally], class: &str) -> Tally {
    let t = tallies.iter().rev().find(|t| t.class == class);
    t.expect("a trace of the class").clone()
}

#[test]
fn equal_blocks_on_equal_inputs_repeat_exactly() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    let t = tally_of(&tallies, "SameBlocks");
    assert_eq!((t.calls, t.repeats, t.exact), (4, 3, 3), "{}", t.line());
    assert!(t.differ.is_empty(), "{}", t.line());
    assert_eq!(t.exact_writing_outside, 0, "{}", t.line());
    // each copy would have to note `h = ...` again for the editor's hints (this file is the
    // traced class's), and nothing else
    assert_eq!(t.state_kinds, [0, 0, 3, 0], "{}", t.line());
    // a block's nodes: norm, fc, mul, add; three of the four blocks could be copied
    assert_eq!(t.replayable_nodes, 3 * 4, "{}", t.line());
    assert_eq!(
        t.nodes,
        2 + 4 * 4,
        "placeholder, output and four blocks: {}",
        t.line()
    );
}

#[test]
fn a_block_whose_nodes_differ_is_no_repeat_to_copy() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    // same class and input, another `scale`: the `mul` takes another constant
    let t = tally_of(&tallies, "ScaledBlocks");
    assert_eq!((t.calls, t.repeats, t.exact), (3, 2, 0), "{}", t.line());
    assert_eq!(
        t.differ,
        vec![("Block: args CallFunction".to_string(), 2)],
        "{}",
        t.line()
    );
    assert_eq!(t.replayable_nodes, 0);
    // same class on inputs of another width: a new signature, not a repeat
    let t = tally_of(&tallies, "WideningBlocks");
    assert_eq!((t.calls, t.repeats), (2, 0), "{}", t.line());
}

#[test]
fn a_repeat_that_sets_state_it_did_not_make_is_counted() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    // `self.calls += 1`: the nodes repeat exactly, but a copy would not count the call
    let t = tally_of(&tallies, "CountingBlocks");
    assert_eq!((t.repeats, t.exact), (2, 2), "{}", t.line());
    assert_eq!(t.exact_writing_outside, 2, "{}", t.line());
}

/// Per-class analysis of real transformers files: the check changes nothing and reports what
/// a replay could copy (printed with `--nocapture`).
#[test]
fn transformers_files_keep_their_graphs_under_the_check() {
    let Some(root) = std::env::var_os("STATICFX_TRANSFORMERS_ROOT") else {
        eprintln!("skipped: STATICFX_TRANSFORMERS_ROOT is not set");
        return;
    };
    let models = PathBuf::from(root).join("transformers/models");
    for name in ["llama", "bert"] {
        let path = models.join(name).join(format!("modeling_{name}.py"));
        let plain = graphs(&path);
        let (watched, tallies) = shadowed(&path);
        assert_eq!(plain, watched, "{name}");
        for t in &tallies {
            eprintln!("{name}: {}", t.line());
        }
    }
}
