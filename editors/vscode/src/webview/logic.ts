// The graph view's logic without the DOM: messages between extension and webview, what a
// node's SVG classes say, and zoom/pan arithmetic. Loaded by the webview bundle and the tests.

/** Extension → webview. */
export interface ShowGraphMessage {
  type: "graph";
  title: string;
  dot: string;
}

/** Webview → extension. */
export type FromWebview =
  | { type: "ready" }
  | { type: "reveal"; line: number }
  | { type: "error"; message: string };

/** Validates a message from the extension; anything else is ignored by the webview. */
export function parseToWebview(data: unknown): ShowGraphMessage | undefined {
  if (!data || typeof data !== "object") {
    return undefined;
  }
  const m = data as Record<string, unknown>;
  if (m.type === "graph" && typeof m.dot === "string" && typeof m.title === "string") {
    return { type: "graph", title: m.title, dot: m.dot };
  }
  return undefined;
}

/** Validates a message from the webview (its script is ours, but its input is the DOT). */
export function parseFromWebview(data: unknown): FromWebview | undefined {
  if (!data || typeof data !== "object") {
    return undefined;
  }
  const m = data as Record<string, unknown>;
  switch (m.type) {
    case "ready":
      return { type: "ready" };
    case "reveal":
      return Number.isInteger(m.line) && (m.line as number) >= 1 ? { type: "reveal", line: m.line as number } : undefined;
    case "error":
      return typeof m.message === "string" ? { type: "error", message: m.message.slice(0, 2000) } : undefined;
    default:
      return undefined;
  }
}

/** The 1-based source line in a node's classes (`fx-line-17`), if any. */
export function lineOfClasses(classes: string): number | undefined {
  for (const c of classes.split(/\s+/)) {
    const m = /^fx-line-(\d+)$/.exec(c);
    if (m) {
      const n = Number(m[1]);
      return n >= 1 ? n : undefined;
    }
  }
  return undefined;
}

export type BreakRole = "cause" | "branch" | undefined;

/** Whether the node decides a graph break (`fx-break`) or lies in a broken branch. */
export function breakRole(classes: string): BreakRole {
  const list = classes.split(/\s+/);
  if (list.includes("fx-break")) {
    return "cause";
  }
  if (list.includes("fx-break-branch")) {
    return "branch";
  }
  return undefined;
}

/** A view transform: screen = graph * scale + (tx, ty). */
export interface View {
  scale: number;
  tx: number;
  ty: number;
}

export const MIN_SCALE = 0.05;
export const MAX_SCALE = 20;

/** Zooms by `factor` keeping the graph point under screen point (px, py) fixed. */
export function zoomAt(v: View, factor: number, px: number, py: number): View {
  const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, v.scale * factor));
  const k = scale / v.scale;
  return { scale, tx: px - (px - v.tx) * k, ty: py - (py - v.ty) * k };
}

export function pan(v: View, dx: number, dy: number): View {
  return { scale: v.scale, tx: v.tx + dx, ty: v.ty + dy };
}

/** The view that fits a graph of size (gw, gh) into a viewport (vw, vh), centred, at most 1:1. */
export function fit(gw: number, gh: number, vw: number, vh: number, margin = 16): View {
  if (gw <= 0 || gh <= 0 || vw <= 0 || vh <= 0) {
    return { scale: 1, tx: 0, ty: 0 };
  }
  const scale = Math.max(MIN_SCALE, Math.min(1, (vw - 2 * margin) / gw, (vh - 2 * margin) / gh));
  return { scale, tx: (vw - gw * scale) / 2, ty: (vh - gh * scale) / 2 };
}

/** The CSS transform for a view. */
export function transformOf(v: View): string {
  return `translate(${v.tx}px, ${v.ty}px) scale(${v.scale})`;
}

/** Wheel delta (pixels) to a zoom factor: smooth, and symmetric for in and out. */
export function wheelFactor(deltaY: number): number {
  return Math.exp(-Math.max(-500, Math.min(500, deltaY)) / 500);
}
