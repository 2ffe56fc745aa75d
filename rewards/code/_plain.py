"""Values as plain data: what crosses between a solution and its tests, in both directions.

``plain`` writes a value of exact built-in type (no subclass, so no ``__eq__`` of the solution's),
one of the standard containers ``Counter``, ``OrderedDict``, ``defaultdict`` (of a built-in
factory) and ``deque``, or a built-in type itself (``int``, ``str``, ...) as JSON data, with tags for
what JSON lacks; ``decode`` reads it back, refusing anything else and anything whose reading would
cost more than its size (keys made to hash alike). The types are the ones this module found when it
was loaded, before any solution ran, so no solution can pass its own class off as one of them.

Standard-library values whose behaviour is the standard library's cross as data too, and are rebuilt as
the same kind of value on the other side, so an honest solution that returns them is checked as plain
Python would check it: an iterator (a generator, ``map``, ``filter``, ``zip``, ...: its items, read in
the solution's process, rebuilt as a one-pass iterator that equals only itself), a ``range``, a dict's
``keys()`` / ``values()`` / ``items()`` view, ``Fraction`` and ``Decimal``, ``UserList`` / ``UserDict`` /
``UserString``, and a subclass of a built-in type (or of those) that changes none of its behaviour (it
defines no special method but ``__init__``, ``__new__`` and ``__repr__``): it crosses as its base value.
A subclass that defines ``__eq__`` or any other special method stays an object: no verdict rests on it.

Any other value is an *object*: ``plain`` writes it as a handle (``{"handle": [number, type name]}``,
what ``handle(obj)`` returns: it keeps the object and numbers it) when given one, else refuses it;
``decode`` turns a handle into what its ``handle`` function makes of it (the test process: a proxy
that works on the object in the solution process; the trainer: an :class:`Opaque`), and refuses it
without one. Stdlib only: the same source runs in the sandbox's harness (see ``harness.py``) and in
the trainer.
"""

import collections as _collections
import itertools as _itertools
import sys as _psys

__all__ = [
    "BUILTIN_TYPES",
    "FACTORIES",
    "INERT",
    "ITERATORS",
    "MAX_DEPTH",
    "MAX_ITERATED",
    "MAX_NAME",
    "MAX_SAME_HASH",
    "NotPlainData",
    "ObjectUsed",
    "Opaque",
    "STANDARD_MARK",
    "SUBCLASSED",
    "USER_TYPES",
    "VIEWS",
    "decode",
    "kind_name",
    "plain",
]

MAX_DEPTH = 100
MAX_SAME_HASH = 64  # distinct keys of one set or dict allowed to share a hash (honest data: 2 at most)
MAX_NAME = 60  # characters of an object's type name that cross with its handle
STANDARD_MARK = "std:"  # before the type name of a standard-library object: a check on it abstains, never fails
BUILTIN_TYPES = {kind.__name__: kind for kind in (
    int, float, str, bool, list, tuple, dict, set, frozenset, bytes, complex, type(None), object)}
FACTORIES = {kind.__name__: kind for kind in (list, int, set, dict, str, float, tuple, frozenset, bool)}
COUNTER, ORDERED, DEFAULT, DEQUE = (_collections.Counter, _collections.OrderedDict, _collections.defaultdict,
                                    _collections.deque)
USER_TYPES = {_collections.UserList: ("userlist", list), _collections.UserDict: ("userdict", dict),
              _collections.UserString: ("userstring", str)}
MAX_ITERATED = 1 << 20  # items an iterator may give before it is no value that can cross
ITERATORS = frozenset([type((lambda: (yield))()), map, filter, zip, enumerate, reversed, type(iter(lambda: 0, 0))]
                      + [type(iter(kind())) for kind in (list, tuple, str, bytes, set, dict, bytearray)]
                      + [type(iter(range(0))), type(iter(range(1 << 64)))]
                      + [type(iter(view)) for view in ({}.keys(), {}.values(), {}.items())]
                      + [type(reversed(kind())) for kind in (list, dict)] + [type(reversed(range(0)))]
                      + [kind for kind in vars(_itertools).values() if type(kind) is type])
VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}
# The special methods a subclass may define and still behave as its base (none of them is read by a check).
INERT = frozenset(("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__slots__", "__init__",
                   "__new__", "__repr__", "__annotations__", "__firstlineno__", "__static_attributes__",
                   "__orig_bases__", "__parameters__"))
SUBCLASSED = (str, int, float, list, tuple, dict, set, frozenset, bytes, *USER_TYPES)
_TYPE_MRO, _TYPE_DICT = type.__dict__["__mro__"], type.__dict__["__dict__"]


class NotPlainData(ValueError):
    """A value (or its JSON form) that is not plain data of built-in types."""


def plain(value, depth=0, handle=None):
    """The value as JSON data; exact types only (a subclass or any other type is an object: a handle, when
    ``handle(obj) -> [number, type name]`` is given, else NotPlainData)."""
    kind = type(value)
    if depth > MAX_DEPTH:
        raise NotPlainData("nested too deeply")
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -10 ** 15 < value < 10 ** 15 else {"int": format(value, "x")}
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"float": repr(value)}
    if kind is list:
        return [plain(item, depth + 1, handle) for item in value]
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [plain(item, depth + 1, handle) for item in value]}
    if kind is dict or kind is COUNTER or kind is ORDERED:  # items read by the built-in types' own methods
        tag = "dict" if kind is dict else "counter" if kind is COUNTER else "odict"
        items = ORDERED.items(value) if kind is ORDERED else dict.items(value)
        return {tag: [[plain(k, depth + 1, handle), plain(v, depth + 1, handle)] for k, v in items]}
    if kind is DEFAULT and (value.default_factory is None or value.default_factory in FACTORIES.values()):
        factory = None if value.default_factory is None else value.default_factory.__name__
        return {"defaultdict": [factory, [[plain(k, depth + 1, handle), plain(v, depth + 1, handle)]
                                          for k, v in dict.items(value)]]}
    if kind is DEQUE:
        return {"deque": [[plain(item, depth + 1, handle) for item in value], value.maxlen]}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [plain(value.real), plain(value.imag)]}
    if kind is type and BUILTIN_TYPES.get(getattr(value, "__name__", None)) is value:
        return {"type": value.__name__}
    standard = _standard(value, kind, depth, handle)
    if standard is not None:
        return standard
    if handle is None:
        raise NotPlainData("a " + kind.__name__[:40] + " is not plain data")
    return {"handle": handle(value)}


def _standard(value, kind, depth, handle):
    """A standard-library value (see the module docstring) as JSON data, or ``None`` for any other value."""
    if kind in ITERATORS:
        items = []
        for item in value:  # the solution's code runs here (a generator's body): in the solution's process
            if len(items) >= MAX_ITERATED:
                raise NotPlainData("an iterator of more than " + str(MAX_ITERATED) + " items")
            items.append(plain(item, depth + 1, handle))
        return {"iter": items}
    if kind is range:
        return {"range": [value.start, value.stop, value.step]}
    if kind in VIEWS:
        return {VIEWS[kind]: [plain(item, depth + 1, handle) for item in value]}
    fractions, decimal = _psys.modules.get("fractions"), _psys.modules.get("decimal")
    if fractions is not None and kind is getattr(fractions, "Fraction", None):
        numerator, denominator = value.numerator, value.denominator
        if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
            raise NotPlainData("a bad Fraction")
        return {"fraction": [plain(numerator), plain(denominator)]}
    if decimal is not None and kind is getattr(decimal, "Decimal", None):
        return {"decimal": decimal.Decimal.__str__(value)}
    user = USER_TYPES.get(kind)
    if user is not None:
        data = value.data
        if type(data) is not user[1]:
            raise NotPlainData("a " + kind.__name__ + " whose data is a " + type(data).__name__[:40])
        return {user[0]: plain(data, depth + 1, handle)}
    base = _inert_base(kind)
    if base is None:
        return None
    if base in USER_TYPES:
        return _standard(value, base, depth, handle)
    as_base = {str: str.__str__, int: int.__index__, float: float.__float__, bytes: bytes.__bytes__,
               list: lambda v: list(list.__iter__(v)), tuple: lambda v: tuple(tuple.__iter__(v)),
               dict: lambda v: dict(dict.items(v)), set: lambda v: set(set.__iter__(v)),
               frozenset: lambda v: frozenset(frozenset.__iter__(v))}[base]
    return plain(as_base(value), depth + 1, handle)


def _inert_base(kind):
    """The built-in (or ``User*``) type ``kind`` subclasses without changing its behaviour, else ``None``."""
    if type(kind) is not type:  # a metaclass of its own could change how the class behaves
        return None
    for base in SUBCLASSED:
        if kind is not base and issubclass(kind, base):
            break
    else:
        return None
    for cls in _TYPE_MRO.__get__(kind):
        if cls is base:
            return base
        if any(name[:2] == "__" and name[-2:] == "__" and name not in INERT for name in _TYPE_DICT.__get__(cls)):
            return None
    return None


def decode(data, depth=0, handle=None):
    """Python values from what ``plain`` wrote (built-in types only, so using them runs no solution code);
    a handle becomes ``handle(body)`` (``body``: what ``plain`` wrote), or NotPlainData without ``handle``."""
    if depth > MAX_DEPTH:
        raise NotPlainData("nested too deeply")
    kind = type(data)
    if kind is list:
        return [decode(item, depth + 1, handle) for item in data]
    if data is None or kind in (bool, str, int, float):
        return data
    if kind is not dict or len(data) != 1:
        raise NotPlainData("unknown value form")
    (tag, body), = data.items()
    if tag == "int" and type(body) is str and body[:1] != "+" and body.lstrip("-").isascii():
        try:
            return int(body, 16)
        except ValueError:
            raise NotPlainData("bad int") from None
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag in ("tuple", "set", "frozenset") and type(body) is list:
        items = [decode(item, depth + 1, handle) for item in body]
        if tag == "tuple":
            return tuple(items)
        _spread(items)
        return set(items) if tag == "set" else frozenset(items)
    if tag in ("dict", "counter", "odict"):
        pairs = _pairs(body, depth, handle)
        return COUNTER(dict(pairs)) if tag == "counter" else (dict if tag == "dict" else ORDERED)(pairs)
    if tag == "defaultdict" and type(body) is list and len(body) == 2 and (body[0] is None or body[0] in FACTORIES):
        return DEFAULT(None if body[0] is None else FACTORIES[body[0]], _pairs(body[1], depth, handle))
    if tag == "deque" and type(body) is list and len(body) == 2 and type(body[0]) is list \
            and (body[1] is None or type(body[1]) is int and 0 <= body[1] <= 1 << 30):
        return DEQUE([decode(item, depth + 1, handle) for item in body[0]], body[1])
    if tag == "bytes" and type(body) is str and body.isascii():
        try:
            return bytes.fromhex(body)
        except ValueError:
            raise NotPlainData("bad bytes") from None
    if tag == "complex" and type(body) is list and len(body) == 2 \
            and all(type(part) is float or type(part) is int or type(part) is dict for part in body):
        real, imag = decode(body[0], depth + 1), decode(body[1], depth + 1)
        if type(real) is not float and type(real) is not int or type(imag) is not float and type(imag) is not int:
            raise NotPlainData("bad complex")
        try:
            return complex(real, imag)
        except OverflowError:
            raise NotPlainData("bad complex") from None
    if tag == "type" and body in BUILTIN_TYPES:
        return BUILTIN_TYPES[body]
    if tag == "iter" and type(body) is list:
        return iter([decode(item, depth + 1, handle) for item in body])
    if tag == "range" and type(body) is list and len(body) == 3 and all(type(part) is int for part in body) \
            and body[2] != 0:
        return range(*body)
    if tag in ("keys", "values", "items") and type(body) is list:
        items = [decode(item, depth + 1, handle) for item in body]
        if tag == "values":
            return dict(enumerate(items)).values()
        if tag == "items" and not all(type(item) is tuple and len(item) == 2 for item in items):
            raise NotPlainData("bad dict items")
        _spread([item[0] for item in items] if tag == "items" else items)
        return dict(items).items() if tag == "items" else dict.fromkeys(items).keys()
    if tag == "fraction" and type(body) is list and len(body) == 2:
        numerator, denominator = decode(body[0], depth + 1), decode(body[1], depth + 1)
        if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
            raise NotPlainData("bad Fraction")
        import fractions
        return fractions.Fraction(numerator, denominator)
    if tag == "decimal" and type(body) is str and len(body) <= 4096:
        import decimal
        try:
            return decimal.Decimal(body)
        except (ArithmeticError, ValueError):
            raise NotPlainData("bad Decimal") from None
    if tag in ("userlist", "userdict", "userstring"):
        kind, base = next((kind, base) for kind, (name, base) in USER_TYPES.items() if name == tag)
        data = decode(body, depth + 1, handle)
        if type(data) is not base:
            raise NotPlainData("bad " + kind.__name__)
        return kind(data)
    if tag == "handle" and handle is not None:
        return handle(body)
    if tag == "handle":
        raise NotPlainData("an object of the solution")
    raise NotPlainData("unknown value form")


def _pairs(body, depth, handle):
    if type(body) is not list or not all(type(p) is list and len(p) == 2 for p in body):
        raise NotPlainData("unknown value form")
    pairs = [(decode(k, depth + 1, handle), decode(v, depth + 1, handle)) for k, v in body]
    _spread([k for k, _ in pairs])
    return pairs


def _spread(keys):
    """Refuse keys made to hash alike: a set or dict of them costs quadratic time to build."""
    seen = {}
    for key in keys:
        try:
            code = hash(key)
        except TypeError:
            raise NotPlainData("an unhashable key") from None
        seen[code] = count = seen.get(code, 0) + 1
        if count > MAX_SAME_HASH:
            raise NotPlainData("keys that hash alike")


def kind_name(obj):
    """The type name that crosses with an object's handle: ``std:module.Name`` for a standard-library type
    (a check on it cannot be made outside the program, so it abstains), else the type's own name."""
    kind = type(obj)
    name, module = str(kind.__name__), getattr(kind, "__module__", None)
    if type(module) is str and module != "builtins" and module in _psys.stdlib_module_names \
            and getattr(_psys.modules.get(module), name, None) is kind:
        return (STANDARD_MARK + module + "." + name)[:MAX_NAME]
    return name[:MAX_NAME]


class ObjectUsed(TypeError):
    """A check used an object of the solution as a value (compared, tested for truth, hashed, ...);
    ``standard``: the object is of a standard-library type the checks cannot verify (the check abstains)."""

    def __init__(self, message, standard=False):
        super().__init__(message)
        self.standard = standard


def _refuse(name):
    def refuse(self, *args, **kwargs):
        raise ObjectUsed("an object of the solution (" + self.kind + ") used with " + name,
                         self.kind.startswith(STANDARD_MARK))

    refuse.__name__ = name
    return refuse


class Opaque:
    """What the trainer sees of an object the solution returned: its type's name, and nothing to compare.

    Every use but identity (``is``, ``is not``) raises :class:`ObjectUsed`, so no check passes on it;
    the object's own methods never run here.
    """

    __slots__ = ("kind",)

    def __init__(self, body):
        self.kind = str(body[1])[:MAX_NAME] if type(body) is list and len(body) == 2 else "object"

    __hash__ = None
    for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__", "__iter__",
                  "__contains__", "__getitem__", "__call__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
                  "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__neg__", "__abs__",
                  "__int__", "__float__", "__index__", "__round__", "__str__", "__format__", "__getattr__"):
        locals()[_name] = _refuse(_name)
    del _name

    def __repr__(self):
        return "<an object of the solution: " + self.kind + ">"
