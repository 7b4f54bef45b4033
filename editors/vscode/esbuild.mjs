// Bundles the extension (Node, CommonJS, `vscode` external), the webview script (browser IIFE
// with @viz-js/viz inside: no network at run time) and, with --tests, the node:test files.
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");
const common = { bundle: true, logLevel: "warning", sourcemap: !production, minify: production };

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    target: "node18",
    external: ["vscode"],
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    format: "iife",
    target: "es2020",
  }),
  tests &&
    esbuild.build({
      ...common,
      sourcemap: true,
      minify: false,
      entryPoints: readdirSync("test")
        .filter((f) => f.endsWith(".test.ts"))
        .map((f) => `test/${f}`),
      outdir: "out/test",
      platform: "node",
      format: "cjs",
      target: "node20",
      packages: "external",
    }),
]);
