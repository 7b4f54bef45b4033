"""staticfx: the Rust binary, installed as this environment's ``staticfx`` script.

``python -m staticfx ARGS`` runs it too (see ``__main__``); ``find_staticfx_bin()`` tells where it
is, for editors and scripts.
"""

from staticfx._find import find_staticfx_bin

__all__ = ["find_staticfx_bin"]
