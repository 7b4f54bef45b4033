# `contextlib.ExitStack` and `AbstractContextManager` over the context-manager protocol: exit
# callbacks run last in, first out, and one that returns true swallows the exception.


class AbstractContextManager:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class ExitStack(AbstractContextManager):
    def __init__(self):
        self._exit_callbacks = []

    def __exit__(self, exc_type, exc_value, traceback):
        suppressed = False
        while self._exit_callbacks:
            callback = self._exit_callbacks.pop()
            if callback(exc_type, exc_value, traceback):
                suppressed = True
                exc_type, exc_value, traceback = None, None, None
        return suppressed

    def enter_context(self, cm):
        cls = type(cm)
        result = cls.__enter__(cm)
        exit_method = cls.__exit__
        self._exit_callbacks.append(lambda t, v, b: exit_method(cm, t, v, b))
        return result

    def push(self, exit):
        exit_method = getattr(type(exit), "__exit__", None)
        if exit_method is None:
            self._exit_callbacks.append(exit)
        else:
            self._exit_callbacks.append(lambda t, v, b: exit_method(exit, t, v, b))
        return exit

    def callback(self, callback, *args, **kwds):
        def _exit_wrapper(exc_type, exc_value, traceback):
            callback(*args, **kwds)

        self._exit_callbacks.append(_exit_wrapper)
        return callback

    def pop_all(self):
        new_stack = type(self)()
        new_stack._exit_callbacks = self._exit_callbacks
        self._exit_callbacks = []
        return new_stack

    def close(self):
        self.__exit__(None, None, None)


def _decorate_with(cm, func):
    # `ContextDecorator.__call__`, which a `@contextmanager` manager inherits: every call of
    # `func` runs inside the manager (a generator manager is entered anew each time).
    def inner(*args, **kwds):
        with cm:
            return func(*args, **kwds)

    return inner
