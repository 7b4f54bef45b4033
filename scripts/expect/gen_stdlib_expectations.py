"""Runs the Python snippets of src/eval/stdlib/tests.rs in CPython and writes what each
`rN`/`mN`/`tN` name holds (its repr) into the expected tables of that file.

    python3 scripts/expect/gen_stdlib_expectations.py          # rewrite the tables
    python3 scripts/expect/gen_stdlib_expectations.py --check  # exit 1 if one differs

The torch snippet (`TORCH_SNIPPET`) needs torch, and `PACKAGING_SNIPPET` the `packaging`
package; without them those entries are left alone.
"""

import pathlib
import re
import sys

TESTS = pathlib.Path(__file__).resolve().parents[2] / "src/eval/stdlib/tests.rs"
SNIPPET = re.compile(r'const (\w+): &str = r#"(.*?)"#;', re.S)
ENTRY = re.compile(r'(\(\s*"(\w+)",\s*r#")(.*?)("#,?\s*\))', re.S)


def run_snippets(text):
    values = {}
    for name, code in SNIPPET.findall(text):
        namespace = {"__name__": name.lower()}
        try:
            exec(compile(code, name, "exec"), namespace)
        except ModuleNotFoundError as e:
            print(f"{name}: skipped ({e})", file=sys.stderr)
            continue
        for key, value in namespace.items():
            if re.fullmatch(r"[rmt]\d+", key):
                values[key] = repr(value)
    return values


def main():
    check = "--check" in sys.argv[1:]
    text = TESTS.read_text()
    values = run_snippets(text)
    differing = []

    def replace(m):
        key, old = m.group(2), m.group(3)
        new = values.get(key, old)
        if new != old:
            differing.append(f"{key}: {old} -> {new}")
        return m.group(1) + new + m.group(4)

    updated = ENTRY.sub(replace, text)
    for d in differing:
        print(d)
    if check:
        sys.exit(1 if differing else 0)
    if updated != text:
        TESTS.write_text(updated)


if __name__ == "__main__":
    main()
