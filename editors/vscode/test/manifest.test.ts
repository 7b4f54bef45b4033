// The manifest agrees with the code and with the client library VS Code will load.
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import * as assert from "node:assert/strict";

const root = path.resolve(__dirname, "../..");
const json = (p: string) => JSON.parse(readFileSync(path.join(root, p), "utf8"));
const pkg = json("package.json");

describe("package.json", () => {
  it("contributes exactly the commands the extension registers", () => {
    const source = readFileSync(path.join(root, "src/extension.ts"), "utf8");
    const registered = [...source.matchAll(/registerCommand\("([^"]+)"/g)].map((m) => m[1]).sort();
    const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(registered, contributed);
    assert.deepEqual(contributed, [
      "staticfx.openGraph",
      "staticfx.openOptimizedGraph",
      "staticfx.restartServer",
      "staticfx.revealLocation",
      "staticfx.runOnSampleInputs",
    ]);
    for (const c of pkg.contributes.commands) {
      assert.equal(c.category, "StaticFX");
    }
    const menus = Object.values(pkg.contributes.menus).flat() as { command: string }[];
    assert.ok(menus.length > 0);
    for (const m of menus) {
      assert.ok(contributed.includes(m.command), `menu entry for unknown command ${m.command}`);
    }
  });
  it("declares the settings the extension reads, trace named after the client id", () => {
    const props = Object.keys(pkg.contributes.configuration.properties).sort();
    assert.deepEqual(props, [
      "staticfx.args",
      "staticfx.exampleInputs",
      "staticfx.inlayHints.shapes",
      "staticfx.path",
      "staticfx.python",
      "staticfx.trace.server",
    ]);
    const source = readFileSync(path.join(root, "src/extension.ts"), "utf8");
    assert.match(source, /new LanguageClient\("staticfx",/);
    assert.deepEqual(pkg.contributes.configuration.properties["staticfx.trace.server"].enum, ["off", "messages", "verbose"]);
  });
  it("targets the VS Code version the language client requires, with matching typings", () => {
    const client = json("node_modules/vscode-languageclient/package.json");
    assert.equal(pkg.engines.vscode, client.engines.vscode);
    const types = json("node_modules/@types/vscode/package.json").version as string;
    const [, major, minor] = /^\^(\d+)\.(\d+)\./.exec(pkg.engines.vscode)!;
    assert.ok(types.startsWith(`${major}.${minor}.`), `@types/vscode ${types} vs engines ${pkg.engines.vscode}`);
  });
  it("activates for Python and bundles to dist/extension.js", () => {
    assert.deepEqual(pkg.activationEvents, ["onLanguage:python"]);
    assert.equal(pkg.main, "./dist/extension.js");
  });
});
