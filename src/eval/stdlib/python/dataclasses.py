# What `@dataclass` adds to a class besides its `__init__` (src/eval/stdlib/dataclasses.rs
# makes that one and installs these), written as CPython's generated methods behave.


class FrozenInstanceError(AttributeError):
    pass


def _compared(obj):
    fields = obj.__dataclass_fields__
    return tuple(getattr(obj, name) for name in fields if fields[name].compare)


def __eq__(self, other):
    # CPython returns NotImplemented for another class, and `==` then falls back to identity.
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return self is other


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError("cannot assign to field '" + name + "'")


def _frozen_delattr(self, name):
    raise FrozenInstanceError("cannot delete field '" + name + "'")
