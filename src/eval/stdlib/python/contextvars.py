# `contextvars.ContextVar` for one thread of evaluation: a variable with a value that `set`
# changes and `reset` restores, as the analysed program sees it in a single context.

_MISSING = object()


class Token:
    def __init__(self, var, old_value):
        self.var = var
        self.old_value = old_value


class ContextVar:
    def __init__(self, name, *, default=_MISSING):
        self.name = name
        self._default = default
        self._value = _MISSING

    def get(self, *default):
        if self._value is not _MISSING:
            return self._value
        if default:
            return default[0]
        if self._default is not _MISSING:
            return self._default
        raise LookupError(self.name)

    def set(self, value):
        token = Token(self, self._value)
        self._value = value
        return token

    def reset(self, token):
        self._value = token.old_value
