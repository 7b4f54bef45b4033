// A stand-in for the `vscode` module, enough to activate the bundled extension in plain Node:
// the parts the extension and vscode-languageclient use are implemented (commands with VS Code's
// duplicate-id check, configuration, documents, webview panels, messages); anything else is an
// inert auto-stub, so an unexpected API use shows up as a missing effect, not a crash.
import * as path from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";

export function stub(name: string): any {
  const fn = function () {
    return stub(`${name}()`);
  };
  return new Proxy(fn, {
    get(_t, p) {
      if (p === "then") return undefined;
      if (p === Symbol.iterator) return function* () {};
      if (p === Symbol.toPrimitive) return () => "";
      if (p === "dispose") return () => undefined;
      return stub(`${name}.${String(p)}`);
    },
    apply() {
      return stub(`${name}()`);
    },
    construct() {
      return stub(`new ${name}`);
    },
  });
}

function withStubs<T extends object>(name: string, obj: T): T {
  return new Proxy(obj, {
    get(t, p, r) {
      if (p in t || typeof p === "symbol" || p === "then") return Reflect.get(t, p, r);
      return stub(`${name}.${p}`);
    },
  });
}

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...ds: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => ds.forEach((d) => d?.dispose?.()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void): Disposable => {
    this.listeners.push(l);
    return new Disposable(() => (this.listeners = this.listeners.filter((x) => x !== l)));
  };
  fire(e: T): void {
    this.listeners.forEach((l) => l(e));
  }
  dispose(): void {
    this.listeners = [];
  }
}

const noEvent = () => new Disposable();

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
    private readonly text: string,
  ) {}
  get path(): string {
    return this.fsPath;
  }
  static file(p: string): Uri {
    return new Uri("file", p, pathToFileURL(p).toString());
  }
  static parse(s: string): Uri {
    return s.startsWith("file:") ? Uri.file(fileURLToPath(s)) : new Uri(s.split(":")[0], s, s);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return Uri.file(path.join(base.fsPath, ...parts));
  }
  with(): Uri {
    return this;
  }
  toString(): string {
    return this.text;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.fsPath };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export class CodeLens {
  command?: { title: string; command: string; arguments?: unknown[] };
  constructor(
    public range: Range,
    command?: { title: string; command: string; arguments?: unknown[] },
  ) {
    this.command = command;
  }
  get isResolved(): boolean {
    return this.command !== undefined;
  }
}

export const InlayHintKind = { Type: 1, Parameter: 2 };

export class InlayHint {
  tooltip?: string | MarkdownString;
  paddingLeft?: boolean;
  paddingRight?: boolean;
  textEdits?: unknown[];
  data?: unknown;
  constructor(
    public position: Position,
    public label: string | unknown[],
    public kind?: number,
  ) {}
}

export class MarkdownString {
  isTrusted?: boolean;
  supportHtml?: boolean;
  constructor(
    public value = "",
    public supportThemeIcons = false,
  ) {}
  appendMarkdown(v: string): MarkdownString {
    this.value += v;
    return this;
  }
}

export class CancellationError extends Error {}
export class CancellationTokenSource {
  token = { isCancellationRequested: false, onCancellationRequested: noEvent };
  cancel(): void {
    this.token.isCancellationRequested = true;
  }
  dispose(): void {}
}

export const LogLevel = { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 };
export const ViewColumn = { Active: -1, Beside: -2, One: 1, Two: 2 };
export const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
export const version = "1.91.0";

export class Diagnostic {
  code: unknown;
  source?: string;
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity?: number,
  ) {}
}

/** What the test inspects. */
export const recorded = {
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  errors: [] as string[],
  infos: [] as string[],
  diagnostics: new Map<string, Diagnostic[]>(),
  panels: [] as FakePanel[],
  shown: [] as { uri: string; line: number }[],
  /** The providers vscode-languageclient registered, by feature. */
  providers: new Map<string, any>(),
};

export const commands = withStubs("commands", {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    if (recorded.commands.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    recorded.commands.set(id, fn);
    return new Disposable(() => recorded.commands.delete(id));
  },
  executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    const fn = recorded.commands.get(id);
    return fn ? Promise.resolve(fn(...args)) : Promise.reject(new Error(`command '${id}' not found`));
  },
});

export interface FakeDocument {
  uri: Uri;
  languageId: string;
  version: number;
  lineCount: number;
  isClosed: boolean;
  getText(): string;
  lineAt(n: number): { text: string; firstNonWhitespaceCharacterIndex: number };
}

export function document(file: string, text: string): FakeDocument {
  const lines = text.split("\n");
  return {
    uri: Uri.file(file),
    languageId: "python",
    version: 1,
    lineCount: lines.length,
    isClosed: false,
    getText: () => text,
    lineAt: (n) => ({ text: lines[n], firstNonWhitespaceCharacterIndex: lines[n].search(/\S|$/) }),
  };
}

export const settings: Record<string, unknown> = {};

/** Fire with the changed keys after editing `settings`, as VS Code does. */
export const configurationChanged = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
export function changeSettings(changes: Record<string, unknown>): void {
  Object.assign(settings, changes);
  const keys = Object.keys(changes);
  configurationChanged.fire({
    affectsConfiguration: (section) => keys.some((k) => k === section || k.startsWith(`${section}.`) || section.startsWith(`${k}.`)),
  });
}

export const workspace = withStubs("workspace", {
  textDocuments: [] as FakeDocument[],
  workspaceFolders: undefined as unknown,
  notebookDocuments: [],
  getConfiguration(section?: string) {
    return {
      get<T>(key: string, def?: T): T | undefined {
        const full = section ? `${section}.${key}` : key;
        if (full in settings) {
          return settings[full] as T;
        }
        // A whole section, as VS Code answers `get("staticfx")`.
        const nested: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(settings)) {
          if (k.startsWith(`${full}.`)) {
            const parts = k.slice(full.length + 1).split(".");
            let o = nested;
            parts.slice(0, -1).forEach((p) => (o = (o[p] ??= {}) as Record<string, unknown>));
            o[parts[parts.length - 1]] = v;
          }
        }
        return Object.keys(nested).length > 0 ? (nested as T) : def;
      },
      has: (key: string) => (section ? `${section}.${key}` : key) in settings,
      update: () => Promise.resolve(),
      inspect: () => undefined,
    };
  },
  async openTextDocument(uri: Uri) {
    const d = workspace.textDocuments.find((x) => x.uri.toString() === uri.toString());
    if (!d) throw new Error(`not open: ${uri}`);
    return d;
  },
  onDidOpenTextDocument: noEvent,
  onDidChangeTextDocument: noEvent,
  onDidCloseTextDocument: noEvent,
  onDidSaveTextDocument: noEvent,
  onWillSaveTextDocument: noEvent,
  onDidChangeConfiguration: configurationChanged.event,
  onDidChangeWorkspaceFolders: noEvent,
});

export class FakePanel {
  html = "";
  title: string;
  posted: unknown[] = [];
  revealed = 0;
  private receive = new EventEmitter<unknown>();
  private disposed = new EventEmitter<void>();
  readonly webview = {
    cspSource: "https://file+.vscode-resource.vscode-cdn.net",
    asWebviewUri: (u: Uri) => `https://file+.vscode-resource.vscode-cdn.net${u.fsPath}`,
    onDidReceiveMessage: this.receive.event,
    postMessage: async (m: unknown) => {
      this.posted.push(m);
      return true;
    },
    set html(v: string) {
      panelHtml.set(this, v);
    },
    get html(): string {
      return panelHtml.get(this) ?? "";
    },
  };
  constructor(
    readonly viewType: string,
    title: string,
    readonly options: Record<string, unknown>,
  ) {
    this.title = title;
  }
  onDidDispose = this.disposed.event;
  reveal(): void {
    this.revealed++;
  }
  dispose(): void {
    this.disposed.fire();
  }
  /** The webview script sending a message to the extension. */
  fromWebview(m: unknown): void {
    this.receive.fire(m);
  }
}
const panelHtml = new WeakMap<object, string>();

export const window = withStubs("window", {
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [],
  tabGroups: { all: [], onDidChangeTabs: noEvent, onDidChangeTabGroups: noEvent },
  onDidChangeActiveTextEditor: noEvent,
  onDidChangeVisibleTextEditors: noEvent,
  createOutputChannel(name: string) {
    return withStubs(`output(${name})`, {
      name,
      appendLine: () => undefined,
      append: () => undefined,
      clear: () => undefined,
      show: () => undefined,
      dispose: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      logLevel: LogLevel.Info,
      onDidChangeLogLevel: noEvent,
    });
  },
  async showErrorMessage(m: string) {
    recorded.errors.push(m);
    return undefined;
  },
  async showWarningMessage(m: string) {
    recorded.errors.push(m);
    return undefined;
  },
  async showInformationMessage(m: string) {
    recorded.infos.push(m);
    return undefined;
  },
  createWebviewPanel(viewType: string, title: string, _col: unknown, options: Record<string, unknown>) {
    const p = new FakePanel(viewType, title, options);
    recorded.panels.push(p);
    return p;
  },
  async showTextDocument(doc: FakeDocument, opts: { selection: Range }) {
    recorded.shown.push({ uri: doc.uri.toString(), line: opts.selection.start.line });
    return {};
  },
});

export const languages = withStubs("languages", {
  registerCodeLensProvider(_selector: unknown, provider: unknown) {
    recorded.providers.set("codeLens", provider);
    return new Disposable(() => recorded.providers.delete("codeLens"));
  },
  registerInlayHintsProvider(_selector: unknown, provider: unknown) {
    recorded.providers.set("inlayHint", provider);
    return new Disposable(() => recorded.providers.delete("inlayHint"));
  },
  match(selector: { language?: string; scheme?: string }[], doc: FakeDocument) {
    return selector.some((s) => (!s.language || s.language === doc.languageId) && (!s.scheme || s.scheme === doc.uri.scheme)) ? 10 : 0;
  },
  createDiagnosticCollection() {
    return withStubs("diagnostics", {
      set(uri: Uri | [Uri, Diagnostic[]][], diags?: Diagnostic[]) {
        if (Array.isArray(uri)) {
          uri.forEach(([u, d]) => recorded.diagnostics.set(u.toString(), d));
        } else {
          recorded.diagnostics.set(uri.toString(), diags ?? []);
        }
      },
      delete(uri: Uri) {
        recorded.diagnostics.delete(uri.toString());
      },
      clear() {
        recorded.diagnostics.clear();
      },
      dispose() {},
    });
  },
});

/** Extensions other than ours, by id (the tests put a fake `ms-python.python` here). */
export const installedExtensions = new Map<string, { id: string; isActive: boolean; exports: unknown; activate(): Promise<unknown> }>();
export const extensions = withStubs("extensions", {
  all: [] as unknown[],
  getExtension(id: string) {
    return installedExtensions.get(id);
  },
  onDidChange: noEvent,
});

export const env = withStubs("env", { appName: "Fake Code", language: "en", machineId: "test", uiKind: 1 });
