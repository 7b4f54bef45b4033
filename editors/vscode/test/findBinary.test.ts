import { describe, it, after } from "node:test";
import * as assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { findServerBinary, interpreterScriptDirs, isExecutableFile, notFoundMessage } from "../src/findBinary";

const root = mkdtempSync(path.join(tmpdir(), "staticfx-find-"));
after(() => rmSync(root, { recursive: true, force: true }));

function executable(file: string, mode = 0o755): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, "#!/bin/sh\n");
  chmodSync(file, mode);
  return file;
}

const venv = path.join(root, "venv");
const venvBin = executable(path.join(venv, "bin", "staticfx"));
executable(path.join(venv, "bin", "python"));
const onPath = executable(path.join(root, "usr", "bin", "staticfx"));
executable(path.join(root, "noexec", "staticfx"), 0o644);

describe("finding the staticfx binary", () => {
  it("uses staticfx.path first, as given", () => {
    assert.deepEqual(
      findServerBinary({ configured: " /opt/sfx ", interpreter: path.join(venv, "bin", "python"), pathEnv: path.dirname(onPath) }),
      { path: "/opt/sfx", source: "staticfx.path" },
    );
  });
  it("then the selected interpreter's environment", () => {
    assert.deepEqual(findServerBinary({ interpreter: path.join(venv, "bin", "python"), pathEnv: path.dirname(onPath) }), {
      path: venvBin,
      source: "the selected Python environment",
    });
  });
  it("then PATH, skipping empty entries and files that are not executable", () => {
    const pathEnv = ["", path.join(root, "noexec"), path.join(root, "missing"), path.dirname(onPath)].join(":");
    assert.deepEqual(findServerBinary({ interpreter: path.join(root, "elsewhere", "python3"), pathEnv }), {
      path: onPath,
      source: "PATH",
    });
    assert.equal(isExecutableFile(path.join(root, "noexec", "staticfx"), "linux"), false);
  });
  it("finds nothing when nothing is there", () => {
    assert.equal(findServerBinary({ interpreter: undefined, pathEnv: path.join(root, "noexec") }), undefined);
    assert.equal(findServerBinary({ pathEnv: "" }), undefined);
  });
  it("knows Windows layouts: Scripts\\ and .exe, `;` in PATH", () => {
    assert.deepEqual(interpreterScriptDirs("C:\\Py311\\python.exe", "win32"), ["C:\\Py311", "C:\\Py311\\Scripts"]);
    const present = new Set(["C:\\Py311\\Scripts\\staticfx.exe", "D:\\tools\\staticfx.exe"]);
    const isExecutable = (f: string) => present.has(f);
    assert.deepEqual(findServerBinary({ interpreter: "C:\\Py311\\python.exe", platform: "win32", isExecutable, pathEnv: "" }), {
      path: "C:\\Py311\\Scripts\\staticfx.exe",
      source: "the selected Python environment",
    });
    assert.deepEqual(findServerBinary({ platform: "win32", isExecutable, pathEnv: "C:\\x;D:\\tools" }), {
      path: "D:\\tools\\staticfx.exe",
      source: "PATH",
    });
  });
  it("says how to install when nothing is found", () => {
    const m = notFoundMessage("/home/u/.venv/bin/python");
    assert.match(m, /\/home\/u\/\.venv\/bin\/python/);
    assert.match(m, /pip install staticfx/);
    assert.match(m, /staticfx\.path/);
    assert.match(notFoundMessage(undefined), /no Python interpreter is selected/);
  });
});
