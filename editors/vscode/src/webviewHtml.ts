// The graph webview's HTML. It is static: no graph data is ever interpolated into it (the DOT
// arrives later by postMessage), only the nonce and the script's webview URI, both checked.

export interface HtmlParams {
  /** `webview.cspSource`: the origin webview resources are served from. */
  cspSource: string;
  /** `webview.asWebviewUri(dist/webview.js)`. */
  scriptUri: string;
  nonce: string;
}

const NONCE = /^[A-Za-z0-9]{16,}$/;

/** A fresh nonce: 32 characters from a cryptographically random source. */
export function makeNonce(randomBytes: (n: number) => Uint8Array): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  // 62 symbols: reject bytes >= 248 so every symbol is equally likely.
  let out = "";
  while (out.length < 32) {
    for (const b of randomBytes(48)) {
      if (b < 248 && out.length < 32) {
        out += alphabet[b % 62];
      }
    }
  }
  return out;
}

/** The Content-Security-Policy: nothing but our nonced script, its WebAssembly, and styles. */
export function contentSecurityPolicy(p: Pick<HtmlParams, "cspSource" | "nonce">): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${p.nonce}' 'wasm-unsafe-eval'`,
    `style-src ${p.cspSource} 'nonce-${p.nonce}'`,
    `img-src ${p.cspSource} data:`,
    `font-src ${p.cspSource}`,
  ].join("; ");
}

function attr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function graphHtml(p: HtmlParams): string {
  if (!NONCE.test(p.nonce)) {
    throw new Error("nonce must be at least 16 alphanumeric characters");
  }
  if (/[\s;'"]/.test(p.cspSource)) {
    throw new Error(`unexpected cspSource ${JSON.stringify(p.cspSource)}`);
  }
  const csp = contentSecurityPolicy(p);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>StaticFX graph</title>
<style nonce="${p.nonce}">
  html, body { height: 100%; margin: 0; padding: 0; overflow: hidden; }
  body {
    display: flex; flex-direction: column;
    background: var(--vscode-editor-background, #fff);
    color: var(--vscode-editor-foreground, #222);
    font-family: var(--vscode-font-family, sans-serif); font-size: var(--vscode-font-size, 13px);
  }
  header { display: flex; align-items: center; gap: 6px; padding: 4px 8px;
    border-bottom: 1px solid var(--vscode-panel-border, #ddd); }
  #title { font-weight: 600; margin-right: auto; }
  button { background: var(--vscode-button-secondaryBackground, #eee);
    color: var(--vscode-button-secondaryForeground, #222); border: none; border-radius: 2px;
    padding: 2px 8px; cursor: pointer; min-width: 28px; }
  button:hover { background: var(--vscode-button-secondaryHoverBackground, #ddd); }
  #status { padding: 2px 8px; font-size: 90%; opacity: 0.85; }
  #status.breaks { color: var(--vscode-editorWarning-foreground, #b35900); opacity: 1; }
  #status.error { color: var(--vscode-errorForeground, #c00); opacity: 1; }
  #viewport { position: relative; flex: 1; overflow: hidden; cursor: grab; touch-action: none;
    background: #fff; }
  #viewport:active { cursor: grabbing; }
  #canvas { position: absolute; left: 0; top: 0; transform-origin: 0 0; }
  #canvas svg { display: block; }
  g.node.fx-clickable { cursor: pointer; }
  /* Graphviz nests a node's shape in <g><a> when it has a tooltip: descendant selectors. */
  g.node.fx-clickable:hover polygon, g.node.fx-clickable:hover path { stroke: #2b6cb0; stroke-width: 2px; }
  g.node.fx-break polygon, g.node.fx-break path { stroke: #c53030; stroke-width: 3px; }
  g.node.fx-break-branch polygon, g.node.fx-break-branch path { stroke: #dd6b20; stroke-width: 2px; stroke-dasharray: 5 3; }
  g.node.fx-selected polygon, g.node.fx-selected path { stroke: #2b6cb0; stroke-width: 3px; }
  .legend { display: inline-flex; align-items: center; gap: 4px; font-size: 90%; }
  .swatch { width: 10px; height: 10px; display: inline-block; border-radius: 2px; }
  .swatch.cause { background: #f4a6a6; outline: 2px solid #c53030; }
  .swatch.branch { background: #fbd38d; outline: 2px dashed #dd6b20; }
</style>
</head>
<body>
<header>
  <span id="title">Loading graph…</span>
  <span class="legend"><span class="swatch cause"></span>graph break</span>
  <span class="legend"><span class="swatch branch"></span>broken branch</span>
  <button id="zoom-out" title="Zoom out">−</button>
  <button id="zoom-in" title="Zoom in">+</button>
  <button id="zoom-1" title="Actual size">1:1</button>
  <button id="zoom-fit" title="Fit to window">Fit</button>
</header>
<div id="status"></div>
<div id="viewport"><div id="canvas"></div></div>
<script nonce="${p.nonce}" src="${attr(p.scriptUri)}"></script>
</body>
</html>
`;
}
