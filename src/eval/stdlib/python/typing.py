# `typing`'s subscripted forms at runtime: `Optional[X]`, `Union[...]`, `List[int]`,
# `Literal[...]`, `Callable[[...], R]`, `Annotated[...]` are aliases with `__origin__` and
# `__args__`, equal when both are, and read back by `get_origin` / `get_args`. A union is
# flattened and deduplicated, `None` standing for `type(None)`, and of one member is that
# member, as in CPython.

import collections.abc
from typing import Annotated, Literal, Union

_BUILTIN_ORIGINS = {
    "List": list,
    "Dict": dict,
    "Tuple": tuple,
    "Set": set,
    "FrozenSet": frozenset,
    "Type": type,
}


class _GenericAlias:
    def __init__(self, origin, args):
        self.__origin__ = origin
        self.__args__ = args

    def __eq__(self, other):
        if not isinstance(other, _GenericAlias):
            return False
        return self.__origin__ == other.__origin__ and self.__args__ == other.__args__

    def __or__(self, other):
        return _union((self, other))

    def __ror__(self, other):
        return _union((other, self))


def _union(members):
    flat = []
    for member in members:
        if isinstance(member, _GenericAlias) and member.__origin__ is Union:
            parts = member.__args__
        else:
            parts = (member,)
        for part in parts:
            if part is None:
                part = type(None)
            if part not in flat:
                flat.append(part)
    if len(flat) == 1:
        return flat[0]
    return _GenericAlias(Union, tuple(flat))


def _subscript(name, params):
    if not isinstance(params, tuple):
        params = (params,)
    if name == "Optional":
        return _union((params[0], None))
    if name == "Union":
        return _union(params)
    if name == "Literal":
        return _GenericAlias(Literal, params)
    if name == "Annotated":
        return _GenericAlias(Annotated, params)
    if name == "Callable":
        return _GenericAlias(collections.abc.Callable, params)
    if name in _BUILTIN_ORIGINS:
        return _GenericAlias(_BUILTIN_ORIGINS[name], params)
    return _GenericAlias(getattr(collections.abc, name), params)


def get_origin(tp):
    if isinstance(tp, _GenericAlias):
        return tp.__origin__
    return None


def get_args(tp):
    if isinstance(tp, _GenericAlias):
        return tp.__args__
    return ()
