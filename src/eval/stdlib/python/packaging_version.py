# `packaging.version` as libraries use it to compare releases (`version.parse(v) >=
# version.parse("2.5")`): PEP 440 versions, parsed with string methods instead of the
# package's verbose regular expression, ordered as PEP 440 orders them.


class InvalidVersion(ValueError):
    pass


_PRE_NAMES = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}
_PRE_RANK = {"a": 0, "b": 1, "rc": 2}


def _digits(text, i):
    j = i
    while j < len(text) and text[j].isdigit():
        j += 1
    return j


def _skip_separator(text, i):
    if i < len(text) and text[i] in ".-_":
        return i + 1
    return i


def _segment(text, i, names):
    """A `name[sep]N` segment at `i` whose name is one of `names`: (name, number, end)."""
    start = _skip_separator(text, i)
    for name in sorted(names, key=len, reverse=True):
        if text.startswith(name, start):
            j = _skip_separator(text, start + len(name))
            end = _digits(text, j)
            number = int(text[j:end]) if end > j else 0
            return name, number, end
    return None


class Version:
    def __init__(self, version):
        text = str(version).strip().lower()
        if text.startswith("v"):
            text = text[1:]
        local = None
        if "+" in text:
            text, local = text.split("+", 1)
        epoch = 0
        if "!" in text:
            head, text = text.split("!", 1)
            if not head.isdigit():
                raise InvalidVersion(f"Invalid version: {version!r}")
            epoch = int(head)
        end = _digits(text, 0)
        if end == 0:
            raise InvalidVersion(f"Invalid version: {version!r}")
        release = [int(text[0:end])]
        while end < len(text) and text[end] == "." and _digits(text, end + 1) > end + 1:
            nxt = _digits(text, end + 1)
            release.append(int(text[end + 1 : nxt]))
            end = nxt
        pre = post = dev = None
        found = _segment(text, end, list(_PRE_NAMES))
        if found is not None:
            pre = (_PRE_NAMES[found[0]], found[1])
            end = found[2]
        found = _segment(text, end, ["post", "rev", "r"])
        if found is not None:
            post = found[1]
            end = found[2]
        elif end < len(text) and text[end] == "-" and _digits(text, end + 1) > end + 1:
            nxt = _digits(text, end + 1)
            post = int(text[end + 1 : nxt])
            end = nxt
        found = _segment(text, end, ["dev"])
        if found is not None:
            dev = found[1]
            end = found[2]
        if end != len(text):
            raise InvalidVersion(f"Invalid version: {version!r}")
        self.epoch = epoch
        self.release = tuple(release)
        self.pre = pre
        self.post = post
        self.dev = dev
        self.local = local

    def _key(self):
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (-1, 0)
        elif self.pre is None:
            pre = (3, 0)
        else:
            pre = (_PRE_RANK[self.pre[0]], self.pre[1])
        post = -1 if self.post is None else self.post
        dev = (1, 0) if self.dev is None else (0, self.dev)
        local = () if self.local is None else (self.local,)
        return (self.epoch, tuple(release), pre, post, dev, local)

    @property
    def major(self):
        return self.release[0]

    @property
    def minor(self):
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self):
        return self.release[2] if len(self.release) > 2 else 0

    @property
    def base_version(self):
        text = ".".join(str(x) for x in self.release)
        if self.epoch:
            return f"{self.epoch}!{text}"
        return text

    @property
    def public(self):
        return str(self).split("+", 1)[0]

    @property
    def is_prerelease(self):
        return self.pre is not None or self.dev is not None

    @property
    def is_devrelease(self):
        return self.dev is not None

    @property
    def is_postrelease(self):
        return self.post is not None

    def __str__(self):
        text = self.base_version
        if self.pre is not None:
            text += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            text += f".post{self.post}"
        if self.dev is not None:
            text += f".dev{self.dev}"
        if self.local is not None:
            text += f"+{self.local}"
        return text

    def __repr__(self):
        return f"<Version('{self}')>"

    def __eq__(self, other):
        return isinstance(other, Version) and self._key() == other._key()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __lt__(self, other):
        return self._key() < other._key()

    def __le__(self, other):
        return self._key() <= other._key()

    def __gt__(self, other):
        return self._key() > other._key()

    def __ge__(self, other):
        return self._key() >= other._key()

    def __hash__(self):
        return hash(self._key())


def parse(version):
    return Version(version)
