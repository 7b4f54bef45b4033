"""Where the ``staticfx`` binary of this installation is."""

import os
import sys
import sysconfig


def _candidates():
    exe = "staticfx" + (sysconfig.get_config_var("EXE") or "")
    # The scripts directory of the scheme the package was installed with: the venv's (or the
    # interpreter's) first, then the user scheme of `pip install --user`.
    yield os.path.join(sysconfig.get_path("scripts"), exe)
    if sys.version_info >= (3, 10):
        user = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        user = "nt_user"
    elif sys.platform == "darwin" and getattr(sys, "_framework", None):
        user = "osx_framework_user"
    else:
        user = "posix_user"
    yield os.path.join(sysconfig.get_path("scripts", scheme=user), exe)
    # Next to the interpreter, for layouts where scripts and python share a directory.
    yield os.path.join(os.path.dirname(sys.executable), exe)


def find_staticfx_bin() -> str:
    """The path of the ``staticfx`` binary installed with this package."""
    tried = []
    for path in _candidates():
        if os.path.isfile(path):
            return path
        tried.append(path)
    raise FileNotFoundError(
        "the staticfx binary is not installed next to this Python (looked in: "
        + ", ".join(tried)
        + "); reinstall with `pip install staticfx`"
    )
