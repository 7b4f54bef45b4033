//! Per-class analysis gives a forward's unannotated, required argument what the file's own
//! callers pass it (`eval::trace::caller_kinds`): a pair of sizes is no tensor, so a branch on
//! it is no data-dependent branch, as Dynamo sees it when the model runs.

use std::path::Path;
use std::process::Command;

/// (row, code, classes) of each FX1xx finding of the fixture.
fn findings(name: &str) -> Vec<(u64, String, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/caller_kinds")
        .join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .args(["check", "--output-format", "json", "--no-cache"])
        .arg(&path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .filter(|m| m["code"].as_str().is_some_and(|c| c.starts_with("FX1")))
        .map(|m| {
            let classes = m["classes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            (
                m["location"]["row"].as_u64().unwrap(),
                m["code"].as_str().unwrap().to_string(),
                classes,
            )
        })
        .collect()
}

#[test]
fn arguments_take_the_kind_the_callers_agree_on() {
    let got = findings("sizes_from_callers.py");
    // `PatchMerge` is reached through `Stage`, itself traced before `Encoder` tells it its
    // `dims`: the branch on `height % 2` (line 12) is on sizes in every trace. `Gate` is
    // given a float by one call and a tensor by the other: its own trace keeps the tensor
    // guess, so it names itself beside `Encoder`, whose second call does break there.
    assert_eq!(
        got,
        vec![(
            28,
            "FX101".to_string(),
            vec!["Gate".to_string(), "Encoder".to_string()]
        )]
    );
}
