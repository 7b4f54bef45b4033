"""``python -m staticfx``: run the binary that was installed with this package."""

import os
import sys

from staticfx._find import find_staticfx_bin


def main() -> None:
    try:
        binary = os.fsdecode(find_staticfx_bin())
    except FileNotFoundError as e:
        print(f"staticfx: {e}", file=sys.stderr)
        sys.exit(2)
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.run([binary, *sys.argv[1:]]).returncode)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
