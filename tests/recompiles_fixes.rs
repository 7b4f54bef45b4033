//! The FX201 buffer fix (issue 39 item 2) held to what torch.compile did with it: every program
//! of the recompile corpus that `scripts/recompiles/check_fixes.py` recorded as fixed is fixed
//! again here, to the same kind of edit, and none it recorded as unfixed is; and every
//! recorded fixed program ran its identical calls with no recompile, outputs equal to the
//! original's eager outputs and the same count (tests/expected/recompiles/fixes-torch2.15.json,
//! labelled with real torch; no torch needed here).

use std::path::Path;

use serde_json::Value;
use staticfx::cli::fix::{fix_text, Filter};
use staticfx::ide::stack::on_large_stack;

#[test]
fn buffer_fixes_are_the_ones_torch_ran_without_recompiles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recorded: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/expected/recompiles/fixes-torch2.15.json"))
            .unwrap(),
    )
    .unwrap();
    let programs: std::collections::HashMap<String, Value> =
        std::fs::read_to_string(root.join("tests/fixtures/recompiles/programs.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (v["id"].as_str().unwrap().to_string(), v)
            })
            .collect();
    let mut fixed = 0;
    let mut wrong = vec![];
    for r in &recorded {
        let id = r["id"].as_str().unwrap();
        if r["fixed"] == true {
            fixed += 1;
            // what torch did with the fix
            let compiles: Vec<u64> = r["compiles"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            assert!(
                r["outputs_equal"] == true
                    && r["state_equal"] == true
                    && compiles.first().is_some()
                    && compiles.first() == compiles.last(),
                "{id}: the fix changed the outputs or recompiles: {r}"
            );
        }
        let source = programs[id]["source"].as_str().unwrap().to_string();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.py");
        std::fs::write(&path, &source).unwrap();
        let filter = Filter {
            select: vec!["FX201".into()],
            ignore: vec![],
        };
        let text = source.clone();
        let out = on_large_stack("fix", move || fix_text(&path, &text, None, &filter, true))
            .unwrap()
            .unwrap();
        let changed = out.text != source;
        let buffered = out.text.contains("self.register_buffer(");
        if changed != (r["fixed"] == true) || (changed && !buffered) {
            wrong.push(format!("{id} ({}): fixed now {changed}", r["case"]));
        }
    }
    assert!(fixed > 0, "the recording holds no fixed program");
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    eprintln!("{fixed} fixed programs, all without a recompile, as recorded");
}
