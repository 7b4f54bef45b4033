// What the activation tests share: where the packaged extension and the server binary are, and
// a poll for what the extension does asynchronously.
import * as path from "node:path";
import * as fake from "./fakeVscode";

export const ext = path.resolve(__dirname, "../..");
export const repo = path.resolve(ext, "../..");
export const bin = process.env.STATICFX_BIN ?? path.join(repo, "target/debug/staticfx");

/** Polls `probe` until it gives a value, or fails after `ms` with the errors the fake showed. */
export async function until<T>(what: string, probe: () => T | undefined, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) {
      return v;
    }
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}; errors shown: ${JSON.stringify(fake.recorded.errors)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
