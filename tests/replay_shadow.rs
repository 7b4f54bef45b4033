//! Trace a repeated block once (`eval::trace::replay`, issue 40 item 1). The shadow check
//! compares each repeated module call with the re-rooted copy of its class's first call: it
//! must find the repeats a replay could copy, refuse the ones whose nodes differ, keep apart
//! the calls whose modules differ where forward reads them, and never change a graph. Replay
//! itself must give every graph, finding, binding and guard a full trace gives.

use std::path::{Path, PathBuf};

use staticfx::analysis::{analyze_file, GraphOptions};
use staticfx::eval::trace::replay::{with_mode, with_replay, with_shadow, Tally};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/replay")
        .join(name)
}

/// Every graph of the file, node by node in program order (name, opcode, target, arguments,
/// meta, origin, region), with its regions, events, findings, bindings and guards, and the
/// file's diagnostics: what a replay must leave as it is.
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
        out.push(format!("regions {:?}", g.regions));
        out.push(format!("events {:?}", g.events));
        out.push(format!("breaks {:?}", g.breaks));
        out.push(format!("flagged {:?}", g.flagged_breaks));
        out.push(format!("bindings {:?}", g.bindings));
        out.push(format!("guard changes {:?}", g.guard_changes));
        out.push(format!("argument guards {:?}", g.argument_guards));
    }
    for d in &analysis.diagnostics {
        out.push(format!("{d:?}"));
    }
    out
}

fn plain(path: &Path) -> Vec<String> {
    with_mode(None, || graphs(path)).0
}

fn shadowed(path: &Path) -> (Vec<String>, Vec<Tally>) {
    with_shadow(|| graphs(path))
}

/// The tally of the last trace of `class` (a trace that learnt an input's rank from its first
/// layer runs again with it).
fn tally_of(tallies: &[Tally], class: &str) -> Tally {
    let t = tallies.iter().rev().find(|t| t.class == class);
    t.expect("a trace of the class").clone()
}

/// No copy the shadow predicted differs from the full trace.
fn assert_no_misprediction(tallies: &[Tally], what: &str) {
    for t in tallies {
        assert!(
            t.mispredicted.is_empty(),
            "{what}: {} {}",
            t.class,
            t.line()
        );
    }
}

#[test]
fn the_check_changes_no_graph() {
    let path = fixture("blocks.py");
    let (watched, tallies) = shadowed(&path);
    assert!(!tallies.is_empty(), "the check ran");
    assert_eq!(plain(&path), watched);
    assert_no_misprediction(&tallies, "blocks.py");
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
    assert_eq!(t.copies, 3, "{}", t.line());
    assert_eq!(
        t.nodes,
        2 + 4 * 4,
        "placeholder, output and four blocks: {}",
        t.line()
    );
}

#[test]
fn a_block_that_reads_another_value_is_kept_apart() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    // same class and input, another `scale`, which forward reads: the `mul` takes another
    // constant, so no block is a repeat of another
    let t = tally_of(&tallies, "ScaledBlocks");
    assert_eq!(
        (t.calls, t.repeats, t.keyed_apart),
        (3, 0, 2),
        "{}",
        t.line()
    );
    assert_eq!(t.replayable_nodes, 0);
    // same class on inputs of another width: a new signature, not a repeat
    let t = tally_of(&tallies, "WideningBlocks");
    assert_eq!((t.calls, t.repeats), (2, 0), "{}", t.line());
}

#[test]
fn dense_and_moe_layers_of_one_class_do_not_match() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    let t = tally_of(&tallies, "MixedLayers");
    // layers 0 and 1 dense, 2 to 4 MoE: each kind repeats within itself (the layer, and the
    // MoE's own Mlp-free body), never across
    assert!(t.differ.is_empty(), "{}", t.line());
    assert_eq!(
        t.keyed_apart,
        1,
        "layer 2 is the first MoE layer: {}",
        t.line()
    );
    // layer 1 repeats layer 0, layers 3 and 4 repeat layer 2, and so do the Mlp and Moe
    // calls inside them (the shadow runs every call)
    assert_eq!(t.copies, 6, "{}", t.line());
    let (_, tallies) = with_replay(|| graphs(&fixture("blocks.py")));
    let t = tally_of(&tallies, "MixedLayers");
    // a copied layer copies what it calls with it
    assert_eq!((t.copies, t.copied_nodes), (3, 2 + 4 + 4), "{}", t.line());
}

#[test]
fn an_attribute_forward_does_not_read_does_not_keep_layers_apart() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    let t = tally_of(&tallies, "UnreadIndex");
    assert_eq!(
        (t.repeats, t.copies, t.keyed_apart),
        (3, 3, 0),
        "{}",
        t.line()
    );
    // read, `layer_idx` keeps every layer apart: the key holds the value read, not what
    // forward made of it
    let t = tally_of(&tallies, "ReadIndex");
    assert_eq!(
        (t.repeats, t.copies, t.keyed_apart),
        (0, 0, 3),
        "{}",
        t.line()
    );
}

#[test]
fn a_repeat_that_writes_state_it_did_not_make_is_not_copied() {
    let (_, tallies) = shadowed(&fixture("blocks.py"));
    // `self.calls += 1`: the call writes its own module, which it did not make
    let t = tally_of(&tallies, "CountingBlocks");
    assert_eq!(t.copies, 0, "{}", t.line());
    assert!(
        t.dirty
            .iter()
            .any(|(why, _)| why.contains("writes outside: an attribute")),
        "{}",
        t.line()
    );
    // `SEEN.append(1)`: a list mutation, which carries no age
    let t = tally_of(&tallies, "LoggingBlocks");
    assert_eq!(t.copies, 0, "{}", t.line());
    assert_eq!(t.container_writes, 3, "{}", t.line());
}

#[test]
fn replay_gives_the_full_trace() {
    let path = fixture("blocks.py");
    let (replayed, tallies) = with_replay(|| graphs(&path));
    assert_eq!(plain(&path), replayed);
    let t = tally_of(&tallies, "SameBlocks");
    assert_eq!((t.copies, t.copied_nodes), (3, 3 * 4), "{}", t.line());
    // tensor attribute nodes nothing uses are copied unplaced, so the later `x.shape` of the
    // root places a node of the same id and name as in a full trace
    let t = tally_of(&tallies, "ShapeBlocks");
    assert_eq!(t.copies, 2, "{}", t.line());
    // a message that holds a node's name (`Proxy(getattr_1)`) would keep the first block's
    let t = tally_of(&tallies, "AssertingBlocks");
    assert_eq!(t.copies, 0, "{}", t.line());
    assert_eq!(
        t.dirty,
        vec![("AssertingBlock: node name in a string".to_string(), 3)]
    );
    // the first block installs the guard on `flag`, which a copy would not: the second is
    // traced in full and kept in its place, and the third copies it
    let t = tally_of(&tallies, "TupleBlocks");
    assert_eq!(t.copies, 1, "{}", t.line());
}

/// Real transformers files, each in per-class analysis (with its flagged retraces): replay
/// gives every graph a full trace gives, and the shadow predicts no copy that differs. The
/// tallies are printed with `--nocapture`.
#[test]
fn transformers_files_replay_to_their_full_traces() {
    let Some(root) = std::env::var_os("STATICFX_TRANSFORMERS_ROOT") else {
        eprintln!("skipped: STATICFX_TRANSFORMERS_ROOT is not set");
        return;
    };
    let models = PathBuf::from(root).join("transformers/models");
    for name in ["llama", "qwen2_moe", "deepseek_v3", "bert", "t5", "vit"] {
        let path = models.join(name).join(format!("modeling_{name}.py"));
        let full = plain(&path);
        let (watched, shadow) = shadowed(&path);
        assert_eq!(full, watched, "{name}: the shadow changed a graph");
        assert_no_misprediction(&shadow, name);
        let (replayed, tallies) = with_replay(|| graphs(&path));
        let mut graph = "";
        for (a, b) in full.iter().zip(&replayed) {
            if a.starts_with("graph ") {
                graph = a;
            }
            assert_eq!(a, b, "{name}: replay differs in {graph}");
        }
        assert_eq!(full.len(), replayed.len(), "{name}");
        let copies: usize = tallies.iter().map(|t| t.copies).sum();
        eprintln!("{name}: {copies} copies");
        for t in &shadow {
            eprintln!("{name}: {} {}", t.class, t.line());
        }
    }
}
