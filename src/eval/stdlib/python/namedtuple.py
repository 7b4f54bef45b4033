# `collections.namedtuple` and `typing.NamedTuple`: tuple subclasses whose items are also
# attributes, built as CPython documents them (positional or keyword construction with the
# fields' defaults, `_fields`, `_field_defaults`, `_replace`, `_asdict`, `_make`).


class _NamedTupleBase(tuple):
    _fields = ()
    _field_defaults = {}

    def __new__(cls, *args, **kwargs):
        fields = cls._fields
        if len(args) > len(fields):
            raise TypeError("__new__() takes more positional arguments than the tuple has fields")
        values = list(args)
        for name in fields[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in cls._field_defaults:
                values.append(cls._field_defaults[name])
            else:
                raise TypeError("__new__() missing a required argument")
        if kwargs:
            raise TypeError("__new__() got an unexpected keyword argument")
        self = tuple.__new__(cls, values)
        for name, value in zip(fields, values):
            object.__setattr__(self, name, value)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("can't set attribute")

    def __repr__(self):
        shown = ", ".join(name + "=" + repr(getattr(self, name)) for name in self._fields)
        return type(self).__name__ + "(" + shown + ")"

    def _replace(self, **kwargs):
        values = {name: getattr(self, name) for name in self._fields}
        for name, value in kwargs.items():
            if name not in values:
                raise ValueError("Got unexpected field names")
            values[name] = value
        return type(self)(**values)

    def _asdict(self):
        return {name: getattr(self, name) for name in self._fields}

    @classmethod
    def _make(cls, iterable):
        return cls(*iterable)


def namedtuple(typename, field_names, *, rename=False, defaults=None, module=None):
    if isinstance(field_names, str):
        field_names = field_names.replace(",", " ").split()
    field_names = tuple(field_names)
    field_defaults = {}
    if defaults is not None:
        defaults = tuple(defaults)
        if len(defaults) > len(field_names):
            raise TypeError("Got more default values than field names")
        first = len(field_names) - len(defaults)
        field_defaults = dict(zip(field_names[first:], defaults))
    namespace = {"_fields": field_names, "_field_defaults": field_defaults}
    return type(typename, (_NamedTupleBase,), namespace)


class NamedTuple(_NamedTupleBase):
    # The class statement's annotations are the fields, its values their defaults; a class
    # deriving from such a class is an ordinary subclass.
    def __init_subclass__(cls, **kwargs):
        if NamedTuple not in cls.__bases__:
            return
        fields = tuple(cls.__annotations__)
        own = cls.__dict__
        cls._fields = fields
        cls._field_defaults = {name: own[name] for name in fields if name in own}
