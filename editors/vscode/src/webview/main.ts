// The graph view's script, bundled with @viz-js/viz into dist/webview.js. The DOT arrives by
// postMessage and is rendered to SVG here; nothing from the DOT is ever parsed as HTML
// (Graphviz's SVG is parsed as SVG by viz, and labels are escaped by Graphviz).
import { instance } from "@viz-js/viz";
import {
  breakRole,
  fit,
  lineOfClasses,
  pan,
  parseToWebview,
  transformOf,
  View,
  wheelFactor,
  zoomAt,
  FromWebview,
} from "./logic";

interface VsCodeApi {
  postMessage(msg: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const viewport = document.getElementById("viewport") as HTMLElement;
const canvas = document.getElementById("canvas") as HTMLElement;
const title = document.getElementById("title") as HTMLElement;
const status = document.getElementById("status") as HTMLElement;

let view: View = { scale: 1, tx: 0, ty: 0 };
let graphSize = { w: 0, h: 0 };
const vizReady = instance();

function apply(): void {
  canvas.style.transform = transformOf(view);
}

function fitView(): void {
  view = fit(graphSize.w, graphSize.h, viewport.clientWidth, viewport.clientHeight);
  apply();
}

function showError(message: string): void {
  canvas.replaceChildren();
  status.textContent = message;
  status.className = "error";
  vscode.postMessage({ type: "error", message });
}

async function render(dot: string, name: string): Promise<void> {
  title.textContent = name;
  let svg: SVGSVGElement;
  try {
    svg = (await vizReady).renderSVGElement(dot);
  } catch (e) {
    showError(`Graphviz could not render this graph: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  let causes = 0;
  let branches = 0;
  for (const node of Array.from(svg.querySelectorAll("g.node"))) {
    const classes = node.getAttribute("class") ?? "";
    const role = breakRole(classes);
    if (role === "cause") {
      causes++;
    } else if (role === "branch") {
      branches++;
    }
    const line = lineOfClasses(classes);
    if (line !== undefined) {
      node.classList.add("fx-clickable");
      node.setAttribute("data-line", String(line));
    }
  }
  const w = svg.width.baseVal.value;
  const h = svg.height.baseVal.value;
  graphSize = { w, h };
  canvas.replaceChildren(svg);
  status.className = causes > 0 ? "breaks" : "";
  status.textContent =
    causes > 0
      ? `${causes} graph-break node${causes === 1 ? "" : "s"}, ${branches} in broken branches — click a node to see its source`
      : "no graph breaks — click a node to see its source";
  fitView();
}

window.addEventListener("message", (event: MessageEvent) => {
  const msg = parseToWebview(event.data);
  if (msg) {
    void render(msg.dot, msg.title);
  }
});

// Zoom with the wheel around the pointer, pan by dragging, click a node to reveal its line.
viewport.addEventListener(
  "wheel",
  (e: WheelEvent) => {
    e.preventDefault();
    const r = viewport.getBoundingClientRect();
    view = zoomAt(view, wheelFactor(e.deltaY), e.clientX - r.left, e.clientY - r.top);
    apply();
  },
  { passive: false },
);

let drag: { x: number; y: number; moved: boolean } | undefined;
viewport.addEventListener("pointerdown", (e: PointerEvent) => {
  drag = { x: e.clientX, y: e.clientY, moved: false };
  try {
    viewport.setPointerCapture(e.pointerId);
  } catch {
    // Not an active pointer (synthetic events): dragging still works inside the view.
  }
});
viewport.addEventListener("pointermove", (e: PointerEvent) => {
  if (!drag) {
    return;
  }
  const dx = e.clientX - drag.x;
  const dy = e.clientY - drag.y;
  if (drag.moved || Math.abs(dx) + Math.abs(dy) > 3) {
    drag.moved = true;
    view = pan(view, dx, dy);
    drag.x = e.clientX;
    drag.y = e.clientY;
    apply();
  }
});
viewport.addEventListener("pointerup", (e: PointerEvent) => {
  const wasDrag = drag?.moved ?? false;
  drag = undefined;
  if (wasDrag) {
    return;
  }
  const node = (e.target as Element | null)?.closest?.("g.node[data-line]");
  const line = Number(node?.getAttribute("data-line"));
  if (node && Number.isInteger(line) && line >= 1) {
    for (const n of Array.from(canvas.querySelectorAll("g.node.fx-selected"))) {
      n.classList.remove("fx-selected");
    }
    node.classList.add("fx-selected");
    vscode.postMessage({ type: "reveal", line });
  }
});

function zoomButton(id: string, factor: number): void {
  document.getElementById(id)?.addEventListener("click", () => {
    view = zoomAt(view, factor, viewport.clientWidth / 2, viewport.clientHeight / 2);
    apply();
  });
}
zoomButton("zoom-in", 1.25);
zoomButton("zoom-out", 0.8);
document.getElementById("zoom-fit")?.addEventListener("click", fitView);
document.getElementById("zoom-1")?.addEventListener("click", () => {
  view = { scale: 1, tx: 16, ty: 16 };
  apply();
});
window.addEventListener("resize", fitView);

vscode.postMessage({ type: "ready" });
