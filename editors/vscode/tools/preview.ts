// Renders the graph webview outside VS Code: asks the real `staticfx lsp` for a class's graph,
// writes the webview's own HTML (same CSP, same bundle) plus a stand-in for VS Code's
// `acquireVsCodeApi` that delivers the graph by postMessage, and screenshots it with headless
// Chromium. Also checks the page rendered an SVG under the CSP and, for a graph with breaks,
// that clicking a break node reveals its line.
//   node out/preview.js FILE.py CLASS OUT.png [exampleInputs-json]
// Env: STATICFX_PREVIEW_ROOT, the workspace (default: FILE's folder; a library's modeling file
// needs the folder holding its package); STATICFX_PREVIEW_SIZE, the window as WIDTH,HEIGHT;
// STATICFX_PREVIEW_SCALE, the device pixel ratio (2: a large graph fitted to the window keeps
// legible nodes in the picture).
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import {
  createProtocolConnection,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  InitializedNotification,
  InitializeRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import { checkGraphResult } from "../src/args";
import { graphHtml, makeNonce } from "../src/webviewHtml";

async function main(): Promise<void> {
  const [file, cls, out, inputs] = process.argv.slice(2);
  if (!file || !cls || !out) {
    throw new Error("usage: preview.js FILE.py CLASS OUT.png [exampleInputs-json]");
  }
  const ext = path.resolve(__dirname, "..");
  const bin = process.env.STATICFX_BIN ?? path.resolve(ext, "../../target/debug/staticfx");
  const proc = spawn(bin, ["lsp"], { stdio: ["pipe", "pipe", "inherit"] });
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  conn.onRequest("workspace/configuration", (p: { items: unknown[] }) => p.items.map(() => null));
  conn.listen();
  const abs = path.resolve(file);
  const uri = pathToFileURL(abs).toString();
  await conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(process.env.STATICFX_PREVIEW_ROOT ?? path.dirname(abs)).toString(),
    capabilities: {},
    initializationOptions: { debounceMs: 0, exampleInputs: inputs ? JSON.parse(inputs) : {} },
  });
  await conn.sendNotification(InitializedNotification.type, {});
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: readFileSync(abs, "utf8") },
  });
  const graph = checkGraphResult(
    await conn.sendRequest(ExecuteCommandRequest.type, { command: "staticfx.showGraph", arguments: [{ uri, class: cls }] }),
    false,
  );
  conn.dispose();
  proc.kill();

  const dir = path.resolve(ext, "out/preview");
  mkdirSync(dir, { recursive: true });
  copyFileSync(path.join(ext, "dist/webview.js"), path.join(dir, "webview.js"));
  const nonce = makeNonce((n) => new Uint8Array(randomBytes(n)));
  const msg = JSON.stringify({ type: "graph", title: graph.name, dot: graph.dot }).replace(/</g, "\\u003c");
  // VS Code's side of the conversation, and its light theme's colours.
  const host = `<style nonce="${nonce}">:root { --vscode-editor-background: #ffffff; --vscode-editor-foreground: #3b3b3b;
  --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px; --vscode-panel-border: #e5e5e5; }</style>
<script nonce="${nonce}">
  window.acquireVsCodeApi = () => ({ postMessage(m) {
    document.documentElement.dataset.lastMessage = JSON.stringify(m);
    if (m.type === "ready") window.postMessage(${msg}, "*");
  } });
</script>
`;
  // For the check only: once the graph is drawn, click the graph-break node like a user.
  const click = `<script nonce="${nonce}">
  new MutationObserver((_, obs) => {
    const shape = document.querySelector("#canvas g.node.fx-break path, #canvas g.node.fx-break polygon");
    if (!shape) return;
    obs.disconnect();
    const at = { bubbles: true, clientX: 5, clientY: 5, pointerId: 1 };
    shape.dispatchEvent(new PointerEvent("pointerdown", at));
    shape.dispatchEvent(new PointerEvent("pointerup", at));
  }).observe(document.documentElement, { childList: true, subtree: true });
</script>
`;
  const page = (name: string, extra: string) => {
    const html = graphHtml({ cspSource: "file:", scriptUri: "webview.js", nonce }).replace(
      `<script nonce="${nonce}" src="webview.js">`,
      `${host}${extra}<script nonce="${nonce}" src="webview.js">`,
    );
    writeFileSync(path.join(dir, name), html);
    return pathToFileURL(path.join(dir, name)).toString();
  };
  const chromium = process.env.CHROMIUM ?? "chromium";
  const common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=15000", `--window-size=${process.env.STATICFX_PREVIEW_SIZE ?? "1100,760"}`,
    `--force-device-scale-factor=${process.env.STATICFX_PREVIEW_SCALE ?? "1"}`];
  const dom = spawnSync(chromium, [...common, "--dump-dom", page("check.html", click)], { encoding: "utf8" });
  if (dom.status !== 0) {
    throw new Error(`chromium failed: ${dom.stderr}`);
  }
  const hasBreaks = /fx-break\b/.test(graph.dot);
  if (!dom.stdout.includes("<svg") || (hasBreaks && !/class="node fx-break\b/.test(dom.stdout))) {
    throw new Error(`the webview rendered no graph${hasBreaks ? " with break nodes" : ""}:\n${dom.stdout.slice(0, 3000)}\n${dom.stderr}`);
  }
  if (/Content Security Policy/i.test(dom.stderr)) {
    throw new Error(`CSP violation:\n${dom.stderr}`);
  }
  let revealed = "";
  if (hasBreaks) {
    // The click on the break node asked the extension to reveal the line of the `if`.
    const breakLine = readFileSync(abs, "utf8").split("\n").findIndex((l) => /^\s*if .*:/.test(l)) + 1;
    const last = /data-last-message="([^"]*)"/.exec(dom.stdout)?.[1].replace(/&quot;/g, '"');
    if (last !== JSON.stringify({ type: "reveal", line: breakLine })) {
      throw new Error(`clicking the break node sent ${last}, expected a reveal of line ${breakLine}`);
    }
    revealed = `; clicking the break node reveals line ${breakLine}`;
  }
  const shot = spawnSync(chromium, [...common, `--screenshot=${path.resolve(out)}`, page("index.html", "")], { encoding: "utf8" });
  if (shot.status !== 0) {
    throw new Error(`chromium screenshot failed: ${shot.stderr}`);
  }
  console.log(`${graph.name}: ${out} (rendered under the CSP${revealed})`);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
