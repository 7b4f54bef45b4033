// Where the `staticfx` binary comes from, in the order users expect: the `staticfx.path`
// setting, then the staticfx installed in the Python environment selected in VS Code (what
// `pip install staticfx` there puts next to its python), then PATH. Pure logic over the file
// system, no `vscode` import, so node's test runner can load it.
import { statSync } from "node:fs";
import * as path from "node:path";

export type BinarySource = "staticfx.path" | "the selected Python environment" | "PATH";

export interface FoundBinary {
  path: string;
  source: BinarySource;
}

export interface BinarySearch {
  /** `staticfx.path`, already expanded; empty or unset means "search". */
  configured?: string;
  /** The python executable of the selected interpreter, when the Python extension gives one. */
  interpreter?: string;
  /** The PATH variable (default: this process's). */
  pathEnv?: string;
  platform?: NodeJS.Platform;
  isExecutable?: (file: string) => boolean;
}

export function isExecutableFile(file: string, platform: NodeJS.Platform = process.platform): boolean {
  try {
    const st = statSync(file);
    return st.isFile() && (platform === "win32" || (st.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

function names(platform: NodeJS.Platform): string[] {
  return platform === "win32" ? ["staticfx.exe", "staticfx.cmd", "staticfx.bat"] : ["staticfx"];
}

/** The scripts directories of an interpreter: a venv's bin/ (Scripts\ on Windows) holds both. */
export function interpreterScriptDirs(interpreter: string, platform: NodeJS.Platform = process.platform): string[] {
  const p = platform === "win32" ? path.win32 : path.posix;
  const dir = p.dirname(interpreter);
  return platform === "win32" ? [dir, p.join(dir, "Scripts")] : [dir];
}

export function findServerBinary(s: BinarySearch): FoundBinary | undefined {
  const platform = s.platform ?? process.platform;
  const p = platform === "win32" ? path.win32 : path.posix;
  const isExec = s.isExecutable ?? ((f: string) => isExecutableFile(f, platform));
  const configured = (s.configured ?? "").trim();
  if (configured !== "") {
    // An explicit setting is used as given, even if it does not exist: starting it then fails
    // with a message that names it, instead of silently running another staticfx.
    return { path: configured, source: "staticfx.path" };
  }
  if (typeof s.interpreter === "string" && s.interpreter !== "") {
    for (const dir of interpreterScriptDirs(s.interpreter, platform)) {
      for (const n of names(platform)) {
        const candidate = p.join(dir, n);
        if (isExec(candidate)) {
          return { path: candidate, source: "the selected Python environment" };
        }
      }
    }
  }
  const delimiter = platform === "win32" ? ";" : ":";
  for (const dir of (s.pathEnv ?? process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") {
      continue;
    }
    for (const n of names(platform)) {
      const candidate = p.join(dir, n);
      if (isExec(candidate)) {
        return { path: candidate, source: "PATH" };
      }
    }
  }
  return undefined;
}

/** The one notification when no binary is found: what was searched and how to install. */
export function notFoundMessage(interpreter?: string): string {
  const where =
    typeof interpreter === "string" && interpreter !== ""
      ? `the selected Python environment (${interpreter}) or PATH`
      : "PATH (and no Python interpreter is selected)";
  return (
    `StaticFX: no staticfx binary found in ${where}. ` +
    "Install it with `pip install staticfx` in that environment (or `cargo install --path .` from a checkout), " +
    "or set `staticfx.path`; then run StaticFX: Restart Server."
  );
}
