// Drives the real `staticfx lsp` over stdio through vscode-languageserver-protocol (the
// library vscode-languageclient is built on), sending what the extension sends.
import { ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import {
  createProtocolConnection,
  Diagnostic,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  InitializedNotification,
  InitializeRequest,
  ProtocolConnection,
  PublishDiagnosticsNotification,
  PublishDiagnosticsParams,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import { instance } from "@viz-js/viz";
import { checkGraphResult, errorMessage, runGraphArgs, serverCommand, showGraphArgs } from "../src/args";
import { breakRole, lineOfClasses } from "../src/webview/logic";

const repo = path.resolve(__dirname, "../../../..");
const bin = process.env.STATICFX_BIN ?? path.join(repo, "target/debug/staticfx");
const fixture = path.join(repo, "tests/fixtures/lsp/simple_net.py");

function lineOf(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `fixture lacks ${needle}`);
  return i;
}

describe("staticfx lsp over vscode-languageserver-protocol", { timeout: 120_000 }, () => {
  let proc: ChildProcess;
  let conn: ProtocolConnection;
  let dir: string;
  let uri: string;
  let text: string;
  let stderr = "";
  const diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  const waiters: (() => void)[] = [];

  function waitFor<T>(what: string, probe: () => T | undefined, ms = 60_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${stderr}`)), ms);
      const check = (): boolean => {
        const v = probe();
        if (v !== undefined) {
          clearTimeout(timer);
          resolve(v);
          return true;
        }
        return false;
      };
      if (!check()) {
        waiters.push(function again() {
          if (!check()) {
            waiters.push(again);
          }
        });
      }
    });
  }

  before(async () => {
    assert.ok(existsSync(bin), `no server binary at ${bin} (cargo build first, or set STATICFX_BIN)`);
    dir = mkdtempSync(path.join(tmpdir(), "staticfx-vscode-"));
    copyFileSync(fixture, path.join(dir, "simple_net.py"));
    text = readFileSync(path.join(dir, "simple_net.py"), "utf8");
    uri = pathToFileURL(path.join(dir, "simple_net.py")).toString();
    // Exactly what the extension starts for `staticfx.path` = the binary.
    const cmd = serverCommand({ path: bin, args: [] }, "/nonexistent-home");
    proc = spawn(cmd.command, cmd.args, { stdio: ["pipe", "pipe", "pipe"], cwd: dir });
    proc.stderr!.on("data", (d) => (stderr += d.toString()));
    conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
      diagnostics.set(p.uri, [...(diagnostics.get(p.uri) ?? []), p]);
      waiters.splice(0).forEach((w) => w());
    });
    // The server pulls settings after `initialized`; answer like VS Code with no settings.
    conn.onRequest("workspace/configuration", (p: { items: unknown[] }) => p.items.map(() => null));
    conn.listen();
    const init = await conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(dir).toString(),
      workspaceFolders: [{ uri: pathToFileURL(dir).toString(), name: "w" }],
      capabilities: {
        workspace: { configuration: true },
        textDocument: { publishDiagnostics: { codeDescriptionSupport: true, relatedInformation: true } },
        general: { positionEncodings: ["utf-16"] },
      },
      initializationOptions: { debounceMs: 0, exampleInputs: { SimpleNet: { x: [1, 784] } } },
    });
    assert.ok(init.capabilities.executeCommandProvider?.commands.includes("staticfx.showGraph"));
    assert.ok(init.capabilities.executeCommandProvider?.commands.includes("staticfx.runGraph"));
    // vscode-languageclient registers the server's commands as VS Code commands: the
    // extension's own ids must not collide with them, or the client fails to start.
    const contributed = JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8")).contributes.commands.map(
      (c: { command: string }) => c.command,
    );
    const clash = contributed.filter((c: string) => init.capabilities.executeCommandProvider!.commands.includes(c));
    assert.deepEqual(clash, [], "extension command ids registered by the server too");
    await conn.sendNotification(InitializedNotification.type, {});
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "python", version: 1, text },
    });
  });

  after(() => {
    conn?.dispose();
    proc?.kill();
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("publishes the graph break with its code and Dynamo's page", async () => {
    const breakLine = lineOf(text, "if h.sum() > 0:");
    const found = await waitFor<Diagnostic>("an FX101 diagnostic", () =>
      diagnostics
        .get(uri)
        ?.at(-1)
        ?.diagnostics.find((d) => d.code === "FX101"),
    );
    assert.equal(found.source, "staticfx");
    assert.equal(found.range.start.line, breakLine, JSON.stringify(found));
    assert.match(found.codeDescription?.href ?? "", /^https:\/\/.*\/gb0170\.html$/, JSON.stringify(found));
    const all = diagnostics.get(uri)!.at(-1)!.diagnostics;
    const limit = all.find((d) => d.code === "FX902");
    assert.ok(limit, `no FX902 for the undefined call: ${JSON.stringify(all)}`);
    assert.equal(limit.range.start.line, lineOf(text, "not_defined_anywhere(y)"));
  });

  it("showGraph for the class under the cursor returns DOT that viz renders, breaks and lines marked", async () => {
    const cursor = { line: lineOf(text, "h = F.relu(h)"), character: 8 };
    const raw = await conn.sendRequest(ExecuteCommandRequest.type, {
      command: "staticfx.showGraph",
      arguments: [showGraphArgs(uri, cursor, false)],
    });
    const graph = checkGraphResult(raw, false);
    assert.equal(graph.name, "SimpleNet.forward");
    assert.ok(graph.dot.includes("[1, 128]"), "DOT lacks the concrete shape from exampleInputs");

    const viz = await instance();
    const svg = viz.renderString(graph.dot, { format: "svg" });
    assert.match(svg, /<svg[\s>]/);
    // The node that decides the branch (`h.sum() > 0`) carries fx-break and its line.
    // Graphviz writes `-` as `&#45;` in attributes; the webview's DOM sees the decoded value.
    const decode = (s: string) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
    const classes = [...svg.matchAll(/<g id="[^"]*" class="node([^"]*)"/g)].map((m) => decode(m[1]));
    assert.ok(classes.length >= 6, `too few nodes: ${classes.length}`);
    const causes = classes.filter((c) => breakRole(c) === "cause");
    assert.ok(causes.length >= 1, `no graph-break node in ${classes.join(" | ")}`);
    assert.ok(
      causes.some((c) => lineOfClasses(c) === lineOf(text, "if h.sum() > 0:") + 1),
      `no break node on the if line: ${causes.join(" | ")}`,
    );
    const fc1Line = lineOf(text, "h = self.fc1(x)") + 1;
    assert.ok(classes.some((c) => lineOfClasses(c) === fc1Line), `no node on line ${fc1Line}`);
    assert.ok(classes.some((c) => breakRole(c) === "branch"), "no node in the broken branch");
  });

  it("Show Optimized Graph: the server answers with the pass pipeline's graph", async () => {
    const cursor = { line: lineOf(text, "h = F.relu(h)"), character: 8 };
    const raw = await conn.sendRequest(ExecuteCommandRequest.type, {
      command: "staticfx.showGraph",
      arguments: [showGraphArgs(uri, cursor, true)],
    });
    const graph = checkGraphResult(raw, true);
    assert.equal(graph.optimized, true);
    assert.match(graph.dot, /staticfx\.fused\.linear_act/);
    const viz = await instance();
    assert.match(viz.renderString(graph.dot, { format: "svg" }), /<svg/);
  });

  it("an optimized graph the server did not optimize is an error, not a mislabelled graph", () => {
    assert.throws(
      () => checkGraphResult({ name: "M.forward", dot: "digraph \"M\" {}", optimized: false }, true),
      /does not produce optimized graphs/,
    );
  });

  it("runGraph: a graph with a break is the server's error, shown as one clean line", async () => {
    const cursor = { line: lineOf(text, "h = F.relu(h)"), character: 8 };
    await assert.rejects(
      conn.sendRequest(ExecuteCommandRequest.type, {
        command: "staticfx.runGraph",
        arguments: [runGraphArgs(uri, cursor, ["x=1,784"], 0)],
      }),
      (e: unknown) => {
        assert.ok(e instanceof ResponseError, String(e));
        assert.match(e.message, /data-dependent/);
        const shown = errorMessage("Run Graph", e);
        assert.match(shown, /^StaticFX Run Graph: \S/);
        assert.ok(!shown.includes("\n"));
        assert.ok(shown.includes(e.message.replace(/^staticfx\.runGraph:\s*/, "").split("\n")[0]), shown);
        return true;
      },
    );
  });

  it("a class that is not there is the server's error, shown cleanly", async () => {
    await assert.rejects(
      conn.sendRequest(ExecuteCommandRequest.type, {
        command: "staticfx.showGraph",
        arguments: [showGraphArgs(uri, { line: 0, character: 0 }, false)],
      }),
      (e: unknown) => {
        assert.equal(errorMessage("Show FX Graph", e), "StaticFX Show FX Graph: no class at that position");
        return true;
      },
    );
  });
});
