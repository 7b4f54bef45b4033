// Pure logic shared by the extension and its tests: how the server is launched, what the
// commands send, and how server errors reach the user. No `vscode` import here, so node's
// test runner can load it.

export interface Settings {
  /** `staticfx.path`; empty or unset means `staticfx` from PATH. */
  path?: string;
  /** `staticfx.args`: extra arguments after `lsp`. */
  args?: unknown;
  /** `staticfx.exampleInputs`: per-class forward inputs, forwarded to the server. */
  exampleInputs?: unknown;
  /** `staticfx.python`: interpreter or venv for imports outside the workspace; empty discovers it. */
  python?: unknown;
  /** `staticfx.inlayHints.shapes`: the shape of each assignment in forward as an inlay hint. */
  inlayHintShapes?: unknown;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** Expands a leading `~` and `${workspaceFolder}` in a configured path. */
export function expandPath(p: string, home: string, workspaceFolder?: string): string {
  let out = p.trim();
  if (out === "~" || out.startsWith("~/")) {
    out = home + out.slice(1);
  }
  if (workspaceFolder !== undefined) {
    out = out.split("${workspaceFolder}").join(workspaceFolder);
  }
  return out;
}

/** The process the client starts: `<path or staticfx> lsp <args...>`. */
export function serverCommand(s: Settings, home: string, workspaceFolder?: string): ServerCommand {
  const configured = typeof s.path === "string" ? expandPath(s.path, home, workspaceFolder) : "";
  const extra = Array.isArray(s.args) ? s.args.filter((a): a is string => typeof a === "string") : [];
  if (Array.isArray(s.args) && extra.length !== s.args.length) {
    throw new Error("staticfx.args must be a list of strings");
  }
  return { command: configured === "" ? "staticfx" : configured, args: ["lsp", ...extra] };
}

/** initializationOptions: only settings the server understands. */
export function initializationOptions(s: Settings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.exampleInputs && typeof s.exampleInputs === "object" && !Array.isArray(s.exampleInputs)) {
    out.exampleInputs = s.exampleInputs;
  }
  if (typeof s.python === "string" && s.python.trim() !== "") {
    out.python = s.python.trim();
  }
  if (typeof s.inlayHintShapes === "boolean") {
    out.inlayHints = { shapes: s.inlayHintShapes };
  }
  return out;
}

/** The class a code lens is about: `{uri, class}`, the argument of the server's lens commands. */
export interface LensTarget {
  uri: string;
  class: string;
}

/** The argument of a lens command when it names a class, else undefined. */
export function lensTarget(arg: unknown): LensTarget | undefined {
  if (!arg || typeof arg !== "object") {
    return undefined;
  }
  const a = arg as Record<string, unknown>;
  return typeof a.uri === "string" && typeof a.class === "string" ? { uri: a.uri, class: a.class } : undefined;
}

/**
 * The extension's command for a code lens's command from the server. The server names its own
 * commands (`staticfx.showGraph` with `{uri, class}`), which vscode-languageclient would send
 * back to the server and drop the answer; the extension's show the graph panel and the run
 * result instead. `staticfx.revealLocation` is the extension's already.
 */
export function lensCommand(command: string, args: unknown[] | undefined): { command: string; arguments: unknown[] } {
  const target = lensTarget(args?.[0]);
  if (target && command === "staticfx.showGraph") {
    return { command: "staticfx.openGraph", arguments: [target] };
  }
  if (target && command === "staticfx.runGraph") {
    return { command: "staticfx.runOnSampleInputs", arguments: [target] };
  }
  return { command, arguments: args ?? [] };
}

/** The argument of `staticfx.revealLocation`: `{uri, range}`, the range in protocol terms. */
export function revealTarget(arg: unknown): { uri: string; range: { start: Position; end: Position } } | undefined {
  if (!arg || typeof arg !== "object") {
    return undefined;
  }
  const a = arg as { uri?: unknown; range?: { start?: Position; end?: Position } };
  const ok = (p: unknown): p is Position =>
    !!p && typeof (p as Position).line === "number" && typeof (p as Position).character === "number";
  if (typeof a.uri !== "string" || !a.range || !ok(a.range.start) || !ok(a.range.end)) {
    return undefined;
  }
  return { uri: a.uri, range: { start: a.range.start, end: a.range.end } };
}

export interface Position {
  line: number;
  character: number;
}

export interface GraphArgs {
  uri: string;
  position?: Position;
  class?: string;
  optimized?: true;
}

/** Arguments of `staticfx.showGraph` for the class under the cursor. */
export function showGraphArgs(uri: string, position: Position, optimize: boolean): GraphArgs {
  const args: GraphArgs = { uri, position: { line: position.line, character: position.character } };
  if (optimize) {
    args.optimized = true;
  }
  return args;
}

export interface GraphResult {
  name: string;
  dot: string;
  optimized?: boolean;
}

/**
 * Checks a `showGraph` answer. An optimized graph was asked for but the server did not say it
 * optimized (older servers ignore `optimize`): that is an error, never a mislabelled graph.
 */
export function checkGraphResult(result: unknown, optimize: boolean): GraphResult {
  if (!result || typeof result !== "object") {
    throw new Error("staticfx.showGraph returned no graph");
  }
  const r = result as Record<string, unknown>;
  if (typeof r.dot !== "string" || !/^\s*(strict\s+)?digraph\b/.test(r.dot)) {
    throw new Error("staticfx.showGraph returned no DOT digraph");
  }
  const name = typeof r.name === "string" ? r.name : "graph";
  if (optimize && r.optimized !== true) {
    throw new Error(
      "this staticfx server does not produce optimized graphs (it ignored `optimized`); update staticfx",
    );
  }
  return { name, dot: r.dot, optimized: r.optimized === true };
}

const INPUT_SPEC = /^[A-Za-z_][A-Za-z0-9_]*=\d+(?:[x,]\d+)*(?::[A-Za-z0-9_]+)?$|^[A-Za-z_][A-Za-z0-9_]*=(?::[A-Za-z0-9_]+)?$/;

/**
 * Parses what the user typed for "Run Graph on Sample Inputs": specs separated by spaces or
 * `;`, each `NAME=SHAPE[:DTYPE]` with SHAPE as `1,3,224,224` or `1x3x224x224` (empty: scalar).
 */
export function parseInputSpecs(text: string): string[] {
  const specs = text
    .split(/[;\s]+/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const s of specs) {
    if (!INPUT_SPEC.test(s)) {
      throw new Error(`bad input \`${s}\`: expected NAME=SHAPE[:DTYPE], e.g. x=1,3,224,224 or ids=2x16:int64`);
    }
  }
  return specs;
}

/** The input specs for a class from `staticfx.exampleInputs` (`{"x": [1, 784]}` forms). */
export function specsFromSettings(exampleInputs: unknown, cls: string): string[] {
  if (!exampleInputs || typeof exampleInputs !== "object") {
    return [];
  }
  const perClass = (exampleInputs as Record<string, unknown>)[cls];
  if (!perClass || typeof perClass !== "object") {
    return [];
  }
  const out: string[] = [];
  for (const [name, v] of Object.entries(perClass as Record<string, unknown>)) {
    if (Array.isArray(v) && v.every((d) => Number.isInteger(d))) {
      out.push(`${name}=${v.join(",")}`);
    } else if (typeof v === "string") {
      out.push(`${name}=${v}`);
    } else if (v && typeof v === "object" && Array.isArray((v as { shape?: unknown }).shape)) {
      const o = v as { shape: number[]; dtype?: string };
      out.push(`${name}=${o.shape.join(",")}${o.dtype ? ":" + o.dtype : ""}`);
    }
  }
  return out;
}

export interface RunArgs {
  uri: string;
  position?: Position;
  class?: string;
  inputs?: string[];
  seed?: number;
}

export function runGraphArgs(uri: string, position: Position, inputs: string[], seed?: number): RunArgs {
  const args: RunArgs = { uri, position: { line: position.line, character: position.character } };
  if (inputs.length > 0) {
    args.inputs = inputs;
  }
  if (seed !== undefined) {
    args.seed = seed;
  }
  return args;
}

/** Arguments of `staticfx.runGraph` for a code lens's class. */
export function runClassArgs(target: LensTarget, inputs: string[]): RunArgs {
  const args: RunArgs = { uri: target.uri, class: target.class };
  if (inputs.length > 0) {
    args.inputs = inputs;
  }
  return args;
}

/** The run result as text: the summary, then one line per output when given. */
export function formatRunResult(result: unknown): string {
  if (!result || typeof result !== "object" || typeof (result as { summary?: unknown }).summary !== "string") {
    throw new Error("staticfx.runGraph returned no summary");
  }
  const r = result as { summary: string; outputs?: unknown };
  const lines = [r.summary.trimEnd()];
  if (Array.isArray(r.outputs) && r.outputs.length > 0) {
    lines.push("", "Outputs:");
    r.outputs.forEach((o, i) => lines.push(`  [${i}] ${typeof o === "string" ? o : JSON.stringify(o)}`));
  }
  return lines.join("\n");
}

/**
 * One line for the user from whatever a request rejected with: the server's own message
 * (a JSON-RPC error), without the client library's prefix or a stack.
 */
export function errorMessage(title: string, err: unknown): string {
  let msg: string;
  if (err && typeof err === "object" && typeof (err as { message?: unknown }).message === "string") {
    msg = (err as { message: string }).message;
  } else if (typeof err === "string") {
    msg = err;
  } else {
    msg = "unknown error";
  }
  msg = msg
    .replace(/^Request [\w/]+ failed with message:\s*/, "")
    // The server's messages often start with the command id already.
    .replace(/^staticfx\.\w+:\s*/, "")
    .split("\n")[0]
    .trim();
  return `StaticFX ${title}: ${msg || "failed"}`;
}
