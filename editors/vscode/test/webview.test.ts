import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import * as assert from "node:assert/strict";
import { contentSecurityPolicy, graphHtml, makeNonce } from "../src/webviewHtml";
import {
  breakRole,
  fit,
  lineOfClasses,
  pan,
  parseFromWebview,
  parseToWebview,
  transformOf,
  wheelFactor,
  zoomAt,
  MAX_SCALE,
  MIN_SCALE,
} from "../src/webview/logic";

const CSP_SOURCE = "https://file+.vscode-resource.vscode-cdn.net";
const params = () => ({
  cspSource: CSP_SOURCE,
  scriptUri: `${CSP_SOURCE}/ext/dist/webview.js`,
  nonce: makeNonce((n) => new Uint8Array(randomBytes(n))),
});

function cspOf(html: string): string {
  const m = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
  assert.ok(m, "no CSP meta tag");
  return m[1];
}

describe("webview HTML", () => {
  it("has a strict CSP: nothing by default, scripts only by nonce, no inline or eval", () => {
    const p = params();
    const csp = cspOf(graphHtml(p));
    const directives = new Map(csp.split(/;\s*/).map((d) => [d.split(" ")[0], d.split(" ").slice(1)]));
    assert.deepEqual(directives.get("default-src"), ["'none'"]);
    assert.deepEqual(directives.get("script-src"), [`'nonce-${p.nonce}'`, "'wasm-unsafe-eval'"]);
    assert.ok(!csp.includes("'unsafe-inline'") && !csp.includes("'unsafe-eval'"), csp);
    assert.ok(!directives.has("connect-src"), "the view must not fetch anything");
    assert.ok(!/\bhttps?:\/\/(?!file\+\.vscode-resource)/.test(csp), `foreign origin in ${csp}`);
    assert.equal(csp, contentSecurityPolicy(p));
  });
  it("every script and style element carries the nonce; the script comes from the extension", () => {
    const p = params();
    const html = graphHtml(p);
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
    assert.equal(scripts.length, 1);
    assert.ok(scripts[0].includes(`nonce="${p.nonce}"`) && scripts[0].includes(`src="${p.scriptUri}"`), scripts[0]);
    const styles = [...html.matchAll(/<style\b([^>]*)>/g)].map((m) => m[1]);
    assert.ok(styles.length >= 1 && styles.every((s) => s.includes(`nonce="${p.nonce}"`)));
    assert.ok(!/\son[a-z]+=/i.test(html), "no inline event handlers");
    assert.ok(!/style="/.test(html), "no inline style attributes");
  });
  it("escapes the script URI and refuses a bad nonce or CSP source", () => {
    const p = params();
    const html = graphHtml({ ...p, scriptUri: 'x"><script>alert(1)</script>' });
    assert.ok(!html.includes("<script>alert(1)"));
    assert.ok(html.includes("x&quot;&gt;&lt;script&gt;"));
    assert.throws(() => graphHtml({ ...p, nonce: "abc" }), /nonce/);
    assert.throws(() => graphHtml({ ...p, nonce: `${"a".repeat(20)}' 'unsafe-inline` }), /nonce/);
    assert.throws(() => graphHtml({ ...p, cspSource: "x; script-src *" }), /cspSource/);
  });
  it("makes distinct 32-character alphanumeric nonces", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const n = makeNonce((k) => new Uint8Array(randomBytes(k)));
      assert.match(n, /^[A-Za-z0-9]{32}$/);
      seen.add(n);
    }
    assert.equal(seen.size, 200);
    // Bytes the alphabet cannot map evenly are skipped, not folded onto early letters.
    const alternating = (k: number) => Uint8Array.from({ length: k }, (_, i) => (i % 2 ? 61 : 255));
    assert.equal(makeNonce(alternating), "9".repeat(32));
  });
});

describe("webview messages", () => {
  it("accepts only well-formed graph messages", () => {
    assert.deepEqual(parseToWebview({ type: "graph", title: "M.forward", dot: "digraph {}" }), {
      type: "graph",
      title: "M.forward",
      dot: "digraph {}",
    });
    assert.equal(parseToWebview({ type: "graph", title: "M", dot: 3 }), undefined);
    assert.equal(parseToWebview({ type: "html", html: "<b>" }), undefined);
    assert.equal(parseToWebview("digraph {}"), undefined);
  });
  it("accepts reveal only for a positive integer line", () => {
    assert.deepEqual(parseFromWebview({ type: "reveal", line: 17 }), { type: "reveal", line: 17 });
    for (const line of [0, -1, 1.5, "17", null]) {
      assert.equal(parseFromWebview({ type: "reveal", line }), undefined, String(line));
    }
    assert.deepEqual(parseFromWebview({ type: "ready" }), { type: "ready" });
    assert.equal((parseFromWebview({ type: "error", message: "x".repeat(5000) }) as { message: string }).message.length, 2000);
    assert.equal(parseFromWebview({ type: "eval", code: "1" }), undefined);
  });
});

describe("node classes from the server's DOT", () => {
  it("reads the source line and the break role", () => {
    assert.equal(lineOfClasses("node fx-break fx-line-17"), 17);
    assert.equal(lineOfClasses("node fx-line-0"), undefined);
    assert.equal(lineOfClasses("node fx-line-x fx-linear"), undefined);
    assert.equal(lineOfClasses("node"), undefined);
    assert.equal(breakRole("node fx-break fx-line-17"), "cause");
    assert.equal(breakRole("node fx-break-branch fx-line-18"), "branch");
    assert.equal(breakRole("node fx-breakage"), undefined);
  });
});

describe("zoom and pan", () => {
  it("zooming keeps the point under the pointer fixed", () => {
    const v0 = { scale: 0.8, tx: 10, ty: -20 };
    const [px, py] = [200, 150];
    const gx = (px - v0.tx) / v0.scale;
    const gy = (py - v0.ty) / v0.scale;
    const v1 = zoomAt(v0, 1.7, px, py);
    assert.ok(Math.abs(v1.scale - 1.36) < 1e-12);
    assert.ok(Math.abs(gx * v1.scale + v1.tx - px) < 1e-9);
    assert.ok(Math.abs(gy * v1.scale + v1.ty - py) < 1e-9);
  });
  it("clamps the scale, and zooming back in and out returns to the start", () => {
    assert.equal(zoomAt({ scale: 1, tx: 0, ty: 0 }, 1e6, 0, 0).scale, MAX_SCALE);
    assert.equal(zoomAt({ scale: 1, tx: 0, ty: 0 }, 1e-6, 0, 0).scale, MIN_SCALE);
    const v = zoomAt(zoomAt({ scale: 1, tx: 5, ty: 6 }, wheelFactor(120), 30, 40), wheelFactor(-120), 30, 40);
    assert.ok(Math.abs(v.scale - 1) < 1e-12 && Math.abs(v.tx - 5) < 1e-9 && Math.abs(v.ty - 6) < 1e-9);
    assert.ok(wheelFactor(100) < 1 && wheelFactor(-100) > 1);
  });
  it("pans by the pointer delta and fits the graph centred, never above 1:1", () => {
    assert.deepEqual(pan({ scale: 2, tx: 1, ty: 2 }, 10, -5), { scale: 2, tx: 11, ty: -3 });
    const big = fit(2000, 1000, 532, 332);
    assert.ok(Math.abs(big.scale - 0.25) < 1e-12);
    assert.ok(Math.abs(big.tx - (532 - 500) / 2) < 1e-9 && Math.abs(big.ty - (332 - 250) / 2) < 1e-9);
    assert.equal(fit(100, 50, 1000, 1000).scale, 1);
    assert.deepEqual(fit(0, 0, 100, 100), { scale: 1, tx: 0, ty: 0 });
    assert.equal(transformOf({ scale: 0.5, tx: 3, ty: 4 }), "translate(3px, 4px) scale(0.5)");
  });
});
