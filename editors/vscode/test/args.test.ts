import { describe, it } from "node:test";
import * as assert from "node:assert/strict";
import {
  checkGraphResult,
  errorMessage,
  expandPath,
  formatRunResult,
  initializationOptions,
  lensCommand,
  parseInputSpecs,
  revealTarget,
  runClassArgs,
  runGraphArgs,
  serverCommand,
  showGraphArgs,
  specsFromSettings,
} from "../src/args";

describe("server command", () => {
  it("defaults to staticfx from PATH with `lsp`", () => {
    assert.deepEqual(serverCommand({}, "/home/u"), { command: "staticfx", args: ["lsp"] });
    assert.deepEqual(serverCommand({ path: "  " }, "/home/u"), { command: "staticfx", args: ["lsp"] });
  });
  it("uses staticfx.path, expanding ~ and ${workspaceFolder}, and appends staticfx.args", () => {
    assert.deepEqual(serverCommand({ path: "~/bin/staticfx", args: ["--log", "x y"] }, "/home/u"), {
      command: "/home/u/bin/staticfx",
      args: ["lsp", "--log", "x y"],
    });
    assert.equal(expandPath("${workspaceFolder}/target/debug/staticfx", "/h", "/ws"), "/ws/target/debug/staticfx");
    assert.equal(expandPath("~user/x", "/h"), "~user/x");
  });
  it("rejects non-string args instead of dropping them", () => {
    assert.throws(() => serverCommand({ args: ["--a", 3] }, "/h"), /list of strings/);
  });
  it("forwards only exampleInputs, python and inlayHints.shapes as initialization options", () => {
    assert.deepEqual(initializationOptions({ path: "x", exampleInputs: { M: { x: [1, 2] } } }), {
      exampleInputs: { M: { x: [1, 2] } },
    });
    assert.deepEqual(initializationOptions({ exampleInputs: [1] }), {});
    assert.deepEqual(initializationOptions({ python: " .venv " }), { python: ".venv" });
    // The empty default means "discover": nothing is sent.
    assert.deepEqual(initializationOptions({ python: "" }), {});
    assert.deepEqual(initializationOptions({ python: 3 }), {});
    assert.deepEqual(initializationOptions({ inlayHintShapes: false }), { inlayHints: { shapes: false } });
    assert.deepEqual(initializationOptions({ inlayHintShapes: true }), { inlayHints: { shapes: true } });
    assert.deepEqual(initializationOptions({ inlayHintShapes: "no" }), {});
  });
});

describe("code lens commands", () => {
  const target = { uri: "file:///m.py", class: "Net" };
  it("maps the server's graph and run commands to the extension's, keeping the class", () => {
    assert.deepEqual(lensCommand("staticfx.showGraph", [target]), { command: "staticfx.openGraph", arguments: [target] });
    assert.deepEqual(lensCommand("staticfx.runGraph", [{ ...target, extra: 1 }]), {
      command: "staticfx.runOnSampleInputs",
      arguments: [target],
    });
    const range = { start: { line: 3, character: 11 }, end: { line: 3, character: 22 } };
    assert.deepEqual(lensCommand("staticfx.revealLocation", [{ uri: target.uri, range }]), {
      command: "staticfx.revealLocation",
      arguments: [{ uri: target.uri, range }],
    });
    // Without a class, nothing to map: left as the server sent it.
    assert.deepEqual(lensCommand("staticfx.showGraph", [{ uri: "file:///m.py" }]), {
      command: "staticfx.showGraph",
      arguments: [{ uri: "file:///m.py" }],
    });
  });
  it("reads reveal arguments and run arguments of a class", () => {
    const range = { start: { line: 3, character: 11 }, end: { line: 3, character: 22 } };
    assert.deepEqual(revealTarget({ uri: "file:///m.py", range }), { uri: "file:///m.py", range });
    assert.equal(revealTarget({ uri: "file:///m.py" }), undefined);
    assert.equal(revealTarget({ uri: "file:///m.py", range: { start: { line: 1 }, end: range.end } }), undefined);
    assert.deepEqual(runClassArgs(target, []), { uri: "file:///m.py", class: "Net" });
    assert.deepEqual(runClassArgs(target, ["x=1,4"]), { uri: "file:///m.py", class: "Net", inputs: ["x=1,4"] });
  });
});

describe("showGraph arguments and answers", () => {
  it("sends {uri, position} and optimize only when asked", () => {
    const pos = { line: 3, character: 7, extra: 1 } as { line: number; character: number };
    assert.deepEqual(showGraphArgs("file:///m.py", pos, false), {
      uri: "file:///m.py",
      position: { line: 3, character: 7 },
    });
    assert.deepEqual(showGraphArgs("file:///m.py", pos, true), {
      uri: "file:///m.py",
      position: { line: 3, character: 7 },
      optimized: true,
    });
  });
  it("accepts a digraph and refuses anything else", () => {
    assert.equal(checkGraphResult({ name: "M.forward", dot: "digraph \"M\" {}" }, false).name, "M.forward");
    assert.throws(() => checkGraphResult(null, false), /no graph/);
    assert.throws(() => checkGraphResult({ name: "M", dot: "<script>" }, false), /no DOT/);
    assert.throws(() => checkGraphResult({ name: "M", dot: "graph {}" }, false), /no DOT/);
  });
  it("an optimized request answered without `optimized: true` is an error", () => {
    assert.throws(() => checkGraphResult({ name: "M", dot: "digraph {}" }, true), /does not produce optimized/);
    assert.equal(checkGraphResult({ name: "M", dot: "digraph {}", optimized: true }, true).optimized, true);
  });
});

describe("run inputs", () => {
  it("parses NAME=SHAPE[:DTYPE] separated by spaces or semicolons", () => {
    assert.deepEqual(parseInputSpecs(" x=1,3,224,224  ids=2x16:int64; flag=:bool "), [
      "x=1,3,224,224",
      "ids=2x16:int64",
      "flag=:bool",
    ]);
    assert.deepEqual(parseInputSpecs("   "), []);
  });
  it("rejects malformed specs with the offending text", () => {
    assert.throws(() => parseInputSpecs("x=1,,3"), /bad input `x=1,,3`/);
    assert.throws(() => parseInputSpecs("1x=3"), /bad input/);
    assert.throws(() => parseInputSpecs("x"), /bad input `x`/);
  });
  it("derives specs from the exampleInputs setting", () => {
    const s = { M: { x: [1, 784], ids: "2x16:i64", m: { shape: [2, 3], dtype: "bool" } } };
    assert.deepEqual(specsFromSettings(s, "M"), ["x=1,784", "ids=2x16:i64", "m=2,3:bool"]);
    assert.deepEqual(specsFromSettings(s, "Other"), []);
  });
  it("builds runGraph arguments per the command's contract", () => {
    assert.deepEqual(runGraphArgs("file:///m.py", { line: 1, character: 2 }, ["x=1,784"], 7), {
      uri: "file:///m.py",
      position: { line: 1, character: 2 },
      inputs: ["x=1,784"],
      seed: 7,
    });
    assert.deepEqual(runGraphArgs("u", { line: 0, character: 0 }, []), { uri: "u", position: { line: 0, character: 0 } });
  });
  it("formats the summary and outputs, and refuses an answer without a summary", () => {
    assert.equal(
      formatRunResult({ summary: "ran 7 nodes in 2 ms\n", outputs: ["f32[1, 10]", { shape: [2] }] }),
      'ran 7 nodes in 2 ms\n\nOutputs:\n  [0] f32[1, 10]\n  [1] {"shape":[2]}',
    );
    assert.throws(() => formatRunResult({ outputs: [] }), /no summary/);
  });
});

describe("error messages", () => {
  it("shows the server's message once, on one line", () => {
    const e = Object.assign(new Error("staticfx.runGraph: the executor is not available yet\n  at foo"), { code: -32001 });
    assert.equal(errorMessage("Run Graph", e), "StaticFX Run Graph: the executor is not available yet");
    assert.equal(
      errorMessage("Show FX Graph", new Error("Request workspace/executeCommand failed with message: no class at that position")),
      "StaticFX Show FX Graph: no class at that position",
    );
    assert.equal(errorMessage("Run Graph", undefined), "StaticFX Run Graph: unknown error");
    assert.equal(errorMessage("Run Graph", new Error("")), "StaticFX Run Graph: failed");
  });
});
