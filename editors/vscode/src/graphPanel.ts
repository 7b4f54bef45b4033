import * as crypto from "crypto";
import * as vscode from "vscode";
import { GraphResult } from "./args";
import { parseFromWebview, ShowGraphMessage } from "./webview/logic";
import { graphHtml, makeNonce } from "./webviewHtml";

/** One webview beside the editor per kind (FX graph, optimized graph), reused across calls. */
class GraphPanel {
  readonly panel: vscode.WebviewPanel;
  private source: vscode.Uri | undefined;
  private sourceColumn: vscode.ViewColumn | undefined;
  private pending: ShowGraphMessage | undefined;
  private ready = false;

  constructor(extensionUri: vscode.Uri, title: string, onDispose: () => void) {
    const dist = vscode.Uri.joinPath(extensionUri, "dist");
    this.panel = vscode.window.createWebviewPanel(
      "staticfx.graph",
      title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [dist], retainContextWhenHidden: true },
    );
    const webview = this.panel.webview;
    webview.html = graphHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      nonce: makeNonce((n) => new Uint8Array(crypto.randomBytes(n))),
    });
    webview.onDidReceiveMessage((data) => this.onMessage(data));
    this.panel.onDidDispose(onDispose);
  }

  show(graph: GraphResult, source: vscode.Uri, column: vscode.ViewColumn | undefined): void {
    this.source = source;
    this.sourceColumn = column;
    this.panel.title = graph.optimized ? `${graph.name} (optimized)` : graph.name;
    const msg: ShowGraphMessage = { type: "graph", title: this.panel.title, dot: graph.dot };
    if (this.ready) {
      void this.panel.webview.postMessage(msg);
    } else {
      this.pending = msg;
    }
    this.panel.reveal(vscode.ViewColumn.Beside, true);
  }

  private async onMessage(data: unknown): Promise<void> {
    const msg = parseFromWebview(data);
    if (!msg) {
      return;
    }
    if (msg.type === "ready") {
      this.ready = true;
      if (this.pending) {
        void this.panel.webview.postMessage(this.pending);
        this.pending = undefined;
      }
    } else if (msg.type === "reveal" && this.source) {
      const doc = await vscode.workspace.openTextDocument(this.source);
      const line = Math.min(msg.line - 1, doc.lineCount - 1);
      const start = doc.lineAt(line).firstNonWhitespaceCharacterIndex;
      const range = new vscode.Range(line, start, line, doc.lineAt(line).text.length);
      await vscode.window.showTextDocument(doc, {
        viewColumn: this.sourceColumn ?? vscode.ViewColumn.One,
        selection: range,
        preserveFocus: false,
      });
    } else if (msg.type === "error") {
      void vscode.window.showErrorMessage(`StaticFX graph view: ${msg.message}`);
    }
  }
}

export class GraphPanels implements vscode.Disposable {
  private panels = new Map<string, GraphPanel>();

  constructor(private readonly extensionUri: vscode.Uri) {}

  show(graph: GraphResult, source: vscode.Uri, optimized: boolean, column: vscode.ViewColumn | undefined): void {
    const kind = optimized ? "optimized" : "fx";
    let p = this.panels.get(kind);
    if (!p) {
      p = new GraphPanel(this.extensionUri, graph.name, () => this.panels.delete(kind));
      this.panels.set(kind, p);
    }
    p.show(graph, source, column);
  }

  dispose(): void {
    for (const p of this.panels.values()) {
      p.panel.dispose();
    }
    this.panels.clear();
  }
}
