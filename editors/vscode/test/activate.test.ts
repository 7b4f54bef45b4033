// Activates the bundled extension (dist/extension.js, as packaged) in Node against a fake
// `vscode` module and the real `staticfx lsp`: the language client starts the server, syncs
// the open document, diagnostics arrive, and the commands work end to end.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import * as fake from "./fakeVscode";
import { bin, ext, repo, until } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require("node:module");

describe("the packaged extension, activated against a fake VS Code", { timeout: 120_000 }, () => {
  let extension: { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void> };
  let dir: string;
  let doc: fake.FakeDocument;
  let text: string;
  const lineOf = (needle: string) => text.split("\n").findIndex((l) => l.includes(needle));

  before(async () => {
    assert.ok(existsSync(bin), `no server binary at ${bin}`);
    assert.ok(existsSync(path.join(ext, "dist/extension.js")), "dist/extension.js not built");
    const vscode = new Proxy(fake as Record<string, unknown>, {
      get(t, p) {
        return p in t ? t[p as string] : fake.stub(`vscode.${String(p)}`);
      },
    });
    const load = Module._load;
    Module._load = function (request: string, ...rest: unknown[]) {
      return request === "vscode" ? vscode : load.call(this, request, ...rest);
    };
    dir = mkdtempSync(path.join(tmpdir(), "staticfx-activate-"));
    copyFileSync(path.join(repo, "tests/fixtures/lsp/simple_net.py"), path.join(dir, "simple_net.py"));
    text = readFileSync(path.join(dir, "simple_net.py"), "utf8");
    doc = fake.document(path.join(dir, "simple_net.py"), text);
    fake.workspace.textDocuments.push(doc);
    fake.settings["staticfx.path"] = bin;
    fake.settings["staticfx.exampleInputs"] = { SimpleNet: { x: [1, 784] } };
    extension = require(path.join(ext, "dist/extension.js"));
    await extension.activate({
      subscriptions: [],
      extensionUri: fake.Uri.file(ext),
      workspaceState: { get: (_k: string, d: unknown) => d, update: async () => undefined },
    });
  });

  after(async () => {
    await extension?.deactivate();
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("registers its commands and the server's, without clashes", () => {
    assert.deepEqual(fake.recorded.errors, []);
    const ids = [...fake.recorded.commands.keys()].sort();
    for (const id of ["staticfx.openGraph", "staticfx.openOptimizedGraph", "staticfx.runOnSampleInputs", "staticfx.restartServer"]) {
      assert.ok(ids.includes(id), `${id} not registered: ${ids}`);
    }
    // vscode-languageclient proxies the server's executeCommand ids.
    assert.ok(ids.includes("staticfx.showGraph") && ids.includes("staticfx.runGraph"), ids.join(" "));
  });

  it("shows the server's diagnostics with code and Dynamo link", async () => {
    const diags = await until("FX101 in VS Code's diagnostics", () =>
      fake.recorded.diagnostics.get(doc.uri.toString())?.some((d) => (d.code as { value?: string })?.value === "FX101")
        ? fake.recorded.diagnostics.get(doc.uri.toString())
        : undefined,
    );
    const brk = diags.find((d) => (d.code as { value: string }).value === "FX101")!;
    assert.equal(brk.range.start.line, lineOf("if h.sum() > 0:"));
    assert.match(String((brk.code as { target: unknown }).target), /gb0170\.html$/);
  });

  it("Show FX Graph opens a webview, sends the DOT after `ready`, and reveals a clicked line", async () => {
    fake.window.activeTextEditor = { document: doc, selection: { active: new fake.Position(lineOf("h = F.relu(h)"), 8) }, viewColumn: 1 };
    await fake.commands.executeCommand("staticfx.openGraph");
    assert.deepEqual(fake.recorded.errors, []);
    assert.equal(fake.recorded.panels.length, 1);
    const panel = fake.recorded.panels[0];
    assert.equal(panel.title, "SimpleNet.forward");
    assert.equal(panel.options.enableScripts, true);
    assert.match(panel.webview.html, /Content-Security-Policy/);
    assert.ok(!panel.webview.html.includes("digraph"), "DOT must not be in the HTML");
    assert.deepEqual(panel.posted, [], "nothing is posted before the webview is ready");
    panel.fromWebview({ type: "ready" });
    const msg = await until("the graph message", () => panel.posted[0] as { type: string; dot: string; title: string });
    assert.equal(msg.type, "graph");
    assert.match(msg.dot, /^digraph "SimpleNet\.forward"/);
    assert.ok(msg.dot.includes("[1, 128]"), "shapes from staticfx.exampleInputs");
    panel.fromWebview({ type: "reveal", line: lineOf("if h.sum() > 0:") + 1 });
    const shown = await until("the source line", () => fake.recorded.shown[0]);
    assert.deepEqual(shown, { uri: doc.uri.toString(), line: lineOf("if h.sum() > 0:") });
    // Again: the panel is reused and the graph posted at once.
    await fake.commands.executeCommand("staticfx.openGraph");
    assert.equal(fake.recorded.panels.length, 1);
    assert.equal(panel.posted.length, 2);
  });

  it("shows the shapes as inlay hints, resolving their tooltip when asked", async () => {
    const provider = await until("an inlay hints provider", () => fake.recorded.providers.get("inlayHint"));
    const token = new fake.CancellationTokenSource().token;
    const all = new fake.Range(0, 0, doc.lineCount, 0);
    const hints = (await provider.provideInlayHints(doc, all, token)) as fake.InlayHint[];
    const line = lineOf("h = self.fc1(x)");
    const fc1 = hints.find((h) => h.position.line === line);
    assert.ok(fc1, JSON.stringify(hints));
    assert.equal(fc1.label, "# [1, 128]");
    assert.equal(fc1.position.character, text.split("\n")[line].length);
    assert.equal(fc1.tooltip, undefined, "resolved lazily");
    const resolved = (await provider.resolveInlayHint(fc1, token)) as fake.InlayHint;
    assert.match((resolved.tooltip as fake.MarkdownString).value, /`fc1`/);
    // Only the range asked for.
    const one = (await provider.provideInlayHints(doc, new fake.Range(line, 0, line + 1, 0), token)) as fake.InlayHint[];
    assert.deepEqual(
      one.map((h) => h.label),
      ["# [1, 128]"],
    );
  });

  it("puts a code lens on forward whose commands reveal the first break and show the graph", async () => {
    const provider = await until("a code lens provider", () => fake.recorded.providers.get("codeLens"));
    const token = new fake.CancellationTokenSource().token;
    const lenses = (await provider.provideCodeLenses(doc, token)) as fake.CodeLens[];
    const onForward = lenses.filter((l) => l.range.start.line === lineOf("def forward(self, x):"));
    assert.deepEqual(
      onForward.map((l) => [l.command?.title, l.command?.command]),
      [
        ["2 graphs · 1 break (FX101)", "staticfx.revealLocation"],
        ["show graph", "staticfx.openGraph"],
      ],
    );
    fake.recorded.shown.length = 0;
    await fake.commands.executeCommand(onForward[0].command!.command, ...(onForward[0].command!.arguments ?? []));
    assert.deepEqual(fake.recorded.shown, [{ uri: doc.uri.toString(), line: lineOf("if h.sum() > 0:") }]);
    // The graph panel (open since the test above) gets the lens's class's graph; no cursor needed.
    const editor = fake.window.activeTextEditor;
    fake.window.activeTextEditor = undefined;
    const panel = fake.recorded.panels[0];
    const posted = panel.posted.length;
    await fake.commands.executeCommand(onForward[1].command!.command, ...(onForward[1].command!.arguments ?? []));
    assert.deepEqual(fake.recorded.errors, []);
    const msg = await until("the graph message", () => panel.posted[posted] as { dot: string });
    assert.match(msg.dot, /^digraph "SimpleNet\.forward"/);
    fake.window.activeTextEditor = editor;
  });

  it("Show Optimized Graph shows the server's refusal or an optimized graph, never a mislabelled one", async () => {
    const before = fake.recorded.panels.length;
    await fake.commands.executeCommand("staticfx.openOptimizedGraph");
    if (fake.recorded.panels.length === before) {
      assert.equal(fake.recorded.errors.length, 1, JSON.stringify(fake.recorded.errors));
      assert.match(fake.recorded.errors[0], /^StaticFX Show Optimized Graph: \S/);
      fake.recorded.errors.length = 0;
    } else {
      assert.match(fake.recorded.panels.at(-1)!.title, /\(optimized\)$/);
    }
  });

  it("Run Graph on Sample Inputs shows the summary or the server's error", async () => {
    const typed: unknown[] = [];
    (fake.window as Record<string, unknown>).showInputBox = async (o: unknown) => {
      typed.push(o);
      return "x=1,784";
    };
    await fake.commands.executeCommand("staticfx.runOnSampleInputs");
    assert.equal(typed.length, 1);
    const shown = [...fake.recorded.errors, ...fake.recorded.infos];
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.match(shown[0], /^StaticFX( Run Graph)?: \S/);
    fake.recorded.errors.length = 0;
    fake.recorded.infos.length = 0;
  });

  it("a changed staticfx.exampleInputs reaches the running server", async () => {
    fake.changeSettings({ "staticfx.exampleInputs": { SimpleNet: { x: [3, 784] } } });
    const panel = fake.recorded.panels[0];
    let last = "";
    for (let i = 0; i < 100 && !last.includes("[3, 128]"); i++) {
      await fake.commands.executeCommand("staticfx.openGraph");
      last = (panel.posted.at(-1) as { dot: string }).dot;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(last.includes("[3, 128]"), `the graph still has the old shapes: ${last}`);
    assert.deepEqual(fake.recorded.errors, []);
  });

  it("Restart Server brings up a new server with the same commands", async () => {
    await fake.commands.executeCommand("staticfx.restartServer");
    assert.deepEqual(fake.recorded.errors, []);
    assert.ok(fake.recorded.commands.has("staticfx.showGraph"), "server commands re-registered after restart");
    await fake.commands.executeCommand("staticfx.openGraph");
    assert.deepEqual(fake.recorded.errors, []);
  });
});
