import * as os from "os";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";
import {
  checkGraphResult,
  errorMessage,
  formatRunResult,
  initializationOptions,
  lensCommand,
  LensTarget,
  lensTarget,
  parseInputSpecs,
  revealTarget,
  runClassArgs,
  runGraphArgs,
  serverCommand,
  Settings,
  showGraphArgs,
} from "./args";
import { findServerBinary, notFoundMessage } from "./findBinary";
import { GraphPanels } from "./graphPanel";

let client: LanguageClient | undefined;
/** The command line of the server last started, for the message when it fails to start. */
let serverCommandLine = "";
let output: vscode.LogOutputChannel;
let runOutput: vscode.OutputChannel;

function settings(): Settings {
  const c = vscode.workspace.getConfiguration("staticfx");
  return {
    path: c.get("path"),
    args: c.get("args"),
    exampleInputs: c.get("exampleInputs"),
    python: c.get("python"),
    inlayHintShapes: c.get("inlayHints.shapes"),
  };
}

/** The subset of the Python extension's API (`ms-python.python`) used to find its interpreter. */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path?: string } | undefined;
    resolveEnvironment?(env: unknown): Promise<{ executable?: { uri?: { fsPath?: string } } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined };
}

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>("ms-python.python");
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

/** The python executable of the interpreter selected for the workspace, if the Python extension is there. */
async function selectedInterpreter(): Promise<string | undefined> {
  const api = await pythonApi();
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  try {
    const envs = api?.environments;
    if (envs?.getActiveEnvironmentPath) {
      const active = envs.getActiveEnvironmentPath(resource);
      const resolved = envs.resolveEnvironment ? await envs.resolveEnvironment(active) : undefined;
      return str(resolved?.executable?.uri?.fsPath) ?? str(active?.path);
    }
    return str(api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0]);
  } catch {
    return undefined;
  }
}

/** The client for the binary found, or undefined after telling the user none was found. */
async function makeClient(): Promise<LanguageClient | undefined> {
  const s = settings();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const cmd = serverCommand(s, os.homedir(), folder);
  const configured = typeof s.path === "string" && s.path.trim() !== "" ? cmd.command : "";
  const interpreter = configured === "" ? await selectedInterpreter() : undefined;
  const found = findServerBinary({ configured, interpreter });
  if (!found) {
    void vscode.window.showErrorMessage(notFoundMessage(interpreter));
    return undefined;
  }
  output.info(`staticfx: ${found.path} (from ${found.source})`);
  serverCommandLine = [found.path, ...cmd.args].join(" ");
  // No `transport`: with TransportKind.stdio the client appends `--stdio` to the arguments.
  const exe = { command: found.path, args: cmd.args };
  const serverOptions: ServerOptions = { run: exe, debug: exe };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ],
    initializationOptions: initializationOptions(s),
    outputChannel: output,
    middleware: {
      // The lenses' commands become the extension's, which show what the server answers.
      provideCodeLenses: async (document, token, next) => {
        const lenses = await next(document, token);
        for (const lens of lenses ?? []) {
          if (lens.command) {
            const mapped = lensCommand(lens.command.command, lens.command.arguments);
            lens.command.command = mapped.command;
            lens.command.arguments = mapped.arguments;
          }
        }
        return lenses;
      },
    },
  };
  // The id `staticfx` makes the client honour `staticfx.trace.server`.
  return new LanguageClient("staticfx", "StaticFX", serverOptions, clientOptions);
}

async function start(): Promise<void> {
  client = await makeClient();
  if (!client) {
    return;
  }
  try {
    await client.start();
  } catch (e) {
    void vscode.window.showErrorMessage(
      `StaticFX: could not start \`${serverCommandLine}\`: ${e instanceof Error ? e.message : String(e)}. ` +
        "Set `staticfx.path` to the staticfx binary.",
    );
  }
}

async function restart(): Promise<void> {
  const old = client;
  client = undefined;
  if (old) {
    try {
      await old.stop(5000);
    } catch {
      // A server that died already cannot be stopped; start a new one anyway.
    }
    await old.dispose();
  }
  await start();
}

function running(): LanguageClient | undefined {
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage("StaticFX: the language server is not running (see the StaticFX output).");
    return undefined;
  }
  return client;
}

function pythonEditor(): vscode.TextEditor | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.document.languageId !== "python") {
    void vscode.window.showErrorMessage("StaticFX: open a Python file and put the cursor in an nn.Module class.");
    return undefined;
  }
  return ed;
}

async function execute(c: LanguageClient, command: string, args: object): Promise<unknown> {
  return c.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] });
}

/** The graph of the class under the cursor, or of `target` (a code lens's class). */
async function showGraph(panels: GraphPanels, optimize: boolean, target?: LensTarget): Promise<void> {
  const ed = target ? undefined : pythonEditor();
  const c = (ed || target) && running();
  if ((!ed && !target) || !c) {
    return;
  }
  const title = optimize ? "Show Optimized Graph" : "Show FX Graph";
  try {
    const uri = target ? vscode.Uri.parse(target.uri) : ed!.document.uri;
    const args = target
      ? { uri: target.uri, class: target.class, ...(optimize ? { optimized: true as const } : {}) }
      : showGraphArgs(ed!.document.uri.toString(), c.code2ProtocolConverter.asPosition(ed!.selection.active), optimize);
    const graph = checkGraphResult(await execute(c, "staticfx.showGraph", args), optimize);
    panels.show(graph, uri, optimize, ed?.viewColumn ?? vscode.window.activeTextEditor?.viewColumn);
  } catch (e) {
    void vscode.window.showErrorMessage(errorMessage(title, e));
  }
}

/** Runs the class under the cursor, or `target` (a code lens's class), on inputs the user types. */
async function runGraph(context: vscode.ExtensionContext, target?: LensTarget): Promise<void> {
  const ed = target ? undefined : pythonEditor();
  const c = (ed || target) && running();
  if ((!ed && !target) || !c) {
    return;
  }
  const uri = target ? target.uri : ed!.document.uri.toString();
  const key = `staticfx.runInputs:${uri}`;
  const typed = await vscode.window.showInputBox({
    title: "StaticFX: Run Graph on Sample Inputs",
    prompt: "Forward inputs as NAME=SHAPE[:DTYPE], separated by spaces (empty: the configured example inputs)",
    placeHolder: "x=1,3,224,224",
    value: context.workspaceState.get<string>(key, ""),
    validateInput: (v) => {
      try {
        parseInputSpecs(v);
        return undefined;
      } catch (e) {
        return e instanceof Error ? e.message : String(e);
      }
    },
  });
  if (typed === undefined) {
    return;
  }
  await context.workspaceState.update(key, typed);
  try {
    const args = target
      ? runClassArgs(target, parseInputSpecs(typed))
      : runGraphArgs(uri, c.code2ProtocolConverter.asPosition(ed!.selection.active), parseInputSpecs(typed));
    const text = formatRunResult(await execute(c, "staticfx.runGraph", args));
    runOutput.clear();
    runOutput.appendLine(text);
    runOutput.show(true);
    void vscode.window.showInformationMessage(`StaticFX: ${text.split("\n")[0]}`);
  } catch (e) {
    void vscode.window.showErrorMessage(errorMessage("Run Graph", e));
  }
}

// The VS Code command ids differ from the server's (`staticfx.showGraph`, `staticfx.runGraph`):
// vscode-languageclient registers every command the server advertises under its own id.
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("StaticFX", { log: true });
  runOutput = vscode.window.createOutputChannel("StaticFX Run");
  const panels = new GraphPanels(context.extensionUri);
  context.subscriptions.push(
    output,
    runOutput,
    panels,
    vscode.commands.registerCommand("staticfx.openGraph", (arg?: unknown) => showGraph(panels, false, lensTarget(arg))),
    vscode.commands.registerCommand("staticfx.openOptimizedGraph", (arg?: unknown) => showGraph(panels, true, lensTarget(arg))),
    vscode.commands.registerCommand("staticfx.runOnSampleInputs", (arg?: unknown) => runGraph(context, lensTarget(arg))),
    vscode.commands.registerCommand("staticfx.revealLocation", revealLocation),
    vscode.commands.registerCommand("staticfx.restartServer", restart),
    watchInterpreter(),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("staticfx.path") || e.affectsConfiguration("staticfx.args")) {
        void restart();
      } else if (
        (e.affectsConfiguration("staticfx.exampleInputs") ||
          e.affectsConfiguration("staticfx.python") ||
          e.affectsConfiguration("staticfx.inlayHints")) &&
        client?.isRunning()
      ) {
        void client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { staticfx: initializationOptions(settings()) },
        });
      }
    }),
  );
  await start();
}

/** A code lens's "first break": opens the document with the range selected. */
async function revealLocation(arg?: unknown): Promise<void> {
  const at = revealTarget(arg);
  if (!at) {
    void vscode.window.showErrorMessage("StaticFX: revealLocation needs {uri, range}");
    return;
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(at.uri));
  const { start, end } = at.range;
  const selection = new vscode.Range(start.line, start.character, end.line, end.character);
  await vscode.window.showTextDocument(doc, { selection, preserveFocus: false });
}

/** A newly selected interpreter may have its own staticfx: restart when it is the one in use. */
function watchInterpreter(): vscode.Disposable {
  let sub: vscode.Disposable | undefined;
  void pythonApi().then((api) => {
    sub = api?.environments?.onDidChangeActiveEnvironmentPath?.(() => {
      const s = settings();
      if (typeof s.path !== "string" || s.path.trim() === "") {
        void restart();
      }
    });
  });
  return new vscode.Disposable(() => sub?.dispose());
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    await c.stop();
  }
}
