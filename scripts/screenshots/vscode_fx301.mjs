// Screenshots an FX301 in real VS Code: code-server (VS Code in the browser, with its Node
// extension host) runs the packaged extension, which starts `staticfx lsp`; headless Chromium,
// driven by playwright-core, opens the file, waits for the squiggle and hovers it.
//   node vscode_fx301.mjs WORKSPACE_DIR FILE_NAME OUT.png   (FILE_NAME: a file at the top of WORKSPACE_DIR)
// Environment (all required except CHROMIUM and PLAYWRIGHT_CORE):
//   CODE_SERVER      the code-server executable (npm package `code-server`, bin/code-server)
//   STATICFX_VSIX    the packaged extension (editors/vscode: npm run package)
//   STATICFX_BIN     the staticfx binary the extension starts (setting `staticfx.path`)
//   PLAYWRIGHT_CORE  the playwright-core package directory (default: resolved from here)
//   CHROMIUM         the Chromium executable (default: `chromium` on PATH)
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [source, name, out] = [path.resolve(process.argv[2] ?? ""), process.argv[3], path.resolve(process.argv[4] ?? "")];
if (process.argv.length !== 5) {
  throw new Error("usage: node vscode_fx301.mjs WORKSPACE_DIR FILE_NAME OUT.png");
}
const need = (key) => {
  const v = process.env[key];
  if (!v) throw new Error(`set ${key}`);
  return v;
};
const codeServer = need("CODE_SERVER");
const vsix = need("STATICFX_VSIX");
const staticfx = path.resolve(need("STATICFX_BIN"));
const chromiumPath = process.env.CHROMIUM || which("chromium");
const pw = process.env.PLAYWRIGHT_CORE
  ? await import(pathToFileURL(path.join(process.env.PLAYWRIGHT_CORE, "index.mjs")).href)
  : await import("playwright-core");
const { chromium } = pw.default ?? pw;

function which(cmd) {
  const r = spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} not found; set CHROMIUM`);
  return r.stdout.trim();
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const t0 = Date.now();
const log = (msg) => console.log(`[vscode_fx301 ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
const work = mkdtempSync(path.join(tmpdir(), "staticfx-code-server-"));
const userData = path.join(work, "user-data");
const extensions = path.join(work, "extensions");
// A copy of the workspace, under its own name, so the server's cache stays out of the checkout.
const workspace = path.join(work, "ws", path.basename(source));
cpSync(source, workspace, { recursive: true, filter: (p) => !p.includes(".staticfx-cache") });
mkdirSync(path.join(userData, "User"), { recursive: true });
// Nothing but the editor: no welcome page, trust prompt, tips, telemetry, minimap or chat.
const settings = {
  "staticfx.path": staticfx,
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.colorTheme": "Default Dark Modern",
  "workbench.layoutControl.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "window.commandCenter": false,
  "chat.commandCenter.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.ignoreRecommendations": true,
  "extensions.autoCheckUpdates": false,
  "editor.minimap.enabled": false,
  "editor.fontSize": 14,
  "editor.hover.delay": 100,
  "editor.hover.sticky": true,
  "editor.hover.above": false,
  "git.enabled": false,
  "git.openRepositoryInParentFolders": "never",
  "breadcrumbs.enabled": false,
  "files.exclude": { "**/__pycache__": true, "**/.staticfx-cache": true },
};
writeFileSync(path.join(userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
const common = ["--user-data-dir", userData, "--extensions-dir", extensions];
// code-server writes its config.yaml and logs under XDG dirs: keep them in the throwaway dir.
const serverEnv = { ...process.env, XDG_DATA_HOME: path.join(work, "xdg-data"), XDG_CONFIG_HOME: path.join(work, "xdg-config") };

const install = spawnSync(codeServer, [...common, "--install-extension", path.resolve(vsix)], {
  encoding: "utf8",
  env: serverEnv,
});
if (install.status !== 0) {
  throw new Error(`code-server --install-extension failed:\n${install.stdout}${install.stderr}`);
}
log("extension installed");

const port = await freePort();
const server = spawn(
  codeServer,
  [
    ...common,
    "--bind-addr",
    `127.0.0.1:${port}`,
    "--auth",
    "none",
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    "--ignore-last-opened",
    workspace,
  ],
  { stdio: ["ignore", "pipe", "pipe"], env: serverEnv },
);
let serverLog = "";
server.stdout.on("data", (d) => (serverLog += d));
server.stderr.on("data", (d) => (serverLog += d));

let browser;
try {
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    if (i > 120 || server.exitCode !== null) throw new Error(`code-server did not start:\n${serverLog}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  log(`code-server up on port ${port}`);

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // Chromium keeps crash reports under XDG_CONFIG_HOME whatever its --user-data-dir.
    env: serverEnv,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 700 }, deviceScaleFactor: 1 });
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench .explorer-folders-view", { timeout: 60000 });
  log("workbench loaded");

  // Open the file from the explorer (Quick Open would need the file index first).
  const row = page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${name}"]`).first();
  await row.waitFor({ timeout: 30000 });
  await row.click();
  await page.waitForSelector(`.monaco-editor[data-uri$="${name}"] .view-lines`, { timeout: 30000 });
  log(`opened ${name}`);

  const squiggle = page.locator(".monaco-editor .squiggly-error").first();
  await squiggle.waitFor({ timeout: 90000 });
  log("diagnostic shown");
  // Let the other decorations (hints, squiggles) settle, then hover the error's middle.
  await page.waitForTimeout(1500);
  await page.mouse.move(5, 5);
  const box = await squiggle.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 5 });
  const hover = page.locator(".monaco-hover:not(.hidden)").filter({ hasText: "FX301" }).first();
  await hover.waitFor({ timeout: 20000 });
  await page.waitForTimeout(800);
  log("hover shown");

  mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  log(`wrote ${out}`);
} finally {
  await browser?.close();
  server.kill("SIGTERM");
  await new Promise((r) => (server.exitCode !== null ? r() : server.once("exit", r)));
  rmSync(work, { recursive: true, force: true });
}
