// The packaged extension finding its server without `staticfx.path`: through the Python
// extension's API, in the environment of the selected interpreter (a venv whose bin/ holds
// staticfx, as `pip install staticfx` leaves it), and one notification when none is found.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as assert from "node:assert/strict";
import * as fake from "./fakeVscode";
import { bin, ext, repo, until } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require("node:module");

describe("finding the server binary in the selected Python environment", { timeout: 120_000 }, () => {
  let extension: { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void> };
  let dir: string;
  let doc: fake.FakeDocument;
  const savedPath = process.env.PATH;
  const context = () => ({
    subscriptions: [],
    extensionUri: fake.Uri.file(ext),
    workspaceState: { get: (_k: string, d: unknown) => d, update: async () => undefined },
  });
  let activeInterpreter = "";
  const asked: string[] = [];

  before(() => {
    assert.ok(existsSync(bin), `no server binary at ${bin}`);
    const vscode = new Proxy(fake as Record<string, unknown>, {
      get(t, p) {
        return p in t ? t[p as string] : fake.stub(`vscode.${String(p)}`);
      },
    });
    const load = Module._load;
    Module._load = function (request: string, ...rest: unknown[]) {
      return request === "vscode" ? vscode : load.call(this, request, ...rest);
    };
    dir = mkdtempSync(path.join(tmpdir(), "staticfx-binary-"));
    // A venv as pip leaves it: bin/python and bin/staticfx side by side.
    mkdirSync(path.join(dir, "venv", "bin"), { recursive: true });
    symlinkSync(bin, path.join(dir, "venv", "bin", "staticfx"));
    writeFileSync(path.join(dir, "venv", "bin", "python"), "");
    copyFileSync(path.join(repo, "tests/fixtures/lsp/simple_net.py"), path.join(dir, "simple_net.py"));
    doc = fake.document(path.join(dir, "simple_net.py"), readFileSync(path.join(dir, "simple_net.py"), "utf8"));
    fake.workspace.textDocuments.push(doc);
    // The Python extension's environments API, answering with the venv's interpreter.
    const api = {
      environments: {
        getActiveEnvironmentPath: () => {
          asked.push("getActiveEnvironmentPath");
          return { id: activeInterpreter, path: activeInterpreter };
        },
        resolveEnvironment: async (env: { path: string }) => ({ executable: { uri: fake.Uri.file(env.path) } }),
        onDidChangeActiveEnvironmentPath: new fake.EventEmitter<unknown>().event,
      },
    };
    fake.installedExtensions.set("ms-python.python", {
      id: "ms-python.python",
      isActive: false,
      exports: api,
      activate: async () => api,
    });
    // No staticfx on PATH, and no staticfx.path.
    process.env.PATH = path.join(dir, "empty");
    delete fake.settings["staticfx.path"];
    extension = require(path.join(ext, "dist/extension.js"));
  });

  after(async () => {
    process.env.PATH = savedPath;
    await extension?.deactivate();
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts the staticfx of the selected interpreter and gets diagnostics", async () => {
    activeInterpreter = path.join(dir, "venv", "bin", "python");
    await extension.activate(context());
    assert.deepEqual(fake.recorded.errors, []);
    assert.ok(asked.length > 0, "the Python extension's API was asked");
    await until("FX101 from the venv's server", () =>
      fake.recorded.diagnostics.get(doc.uri.toString())?.some((d) => (d.code as { value?: string })?.value === "FX101"),
    );
  });

  it("with no staticfx anywhere, shows one notification that says how to install", async () => {
    await extension.deactivate();
    fake.recorded.diagnostics.clear();
    fake.recorded.commands.clear();
    activeInterpreter = path.join(dir, "other-env", "bin", "python");
    await extension.activate(context());
    assert.equal(fake.recorded.errors.length, 1, JSON.stringify(fake.recorded.errors));
    assert.match(fake.recorded.errors[0], /no staticfx binary found/);
    assert.match(fake.recorded.errors[0], /other-env/);
    assert.match(fake.recorded.errors[0], /pip install staticfx/);
    // The extension's own commands are still there, so Restart Server can retry.
    assert.ok(fake.recorded.commands.has("staticfx.restartServer"));
  });
});
