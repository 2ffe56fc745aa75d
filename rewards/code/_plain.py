"""Values as plain data: what crosses between a solution and its tests, in both directions.

``plain`` writes a value of exact built-in type (no subclass, so no ``__eq__`` of the solution's)
as JSON data, with tags for what JSON lacks; ``decode`` reads it back, refusing anything else and
anything whose reading would cost more than its size (keys made to hash alike). Stdlib only: the
same source runs in the sandbox's harness (see ``harness.py``) and in the trainer.
"""

MAX_DEPTH = 100
MAX_SAME_HASH = 64  # distinct keys of one set or dict allowed to share a hash (honest data: 2 at most)


class NotPlainData(ValueError):
    """A value (or its JSON form) that is not plain data of built-in types."""


def plain(value, depth=0):
    """The value as JSON data; exact types only (a subclass or any other type raises NotPlainData)."""
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
        return [plain(item, depth + 1) for item in value]
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [plain(item, depth + 1) for item in value]}
    if kind is dict:
        return {"dict": [[plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [plain(value.real), plain(value.imag)]}
    raise NotPlainData("a " + kind.__name__[:40] + " is not plain data")


def decode(data, depth=0):
    """Python values from what ``plain`` wrote (built-in types only, so using them runs no solution code)."""
    if depth > MAX_DEPTH:
        raise NotPlainData("nested too deeply")
    kind = type(data)
    if kind is list:
        return [decode(item, depth + 1) for item in data]
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
        items = [decode(item, depth + 1) for item in body]
        if tag == "tuple":
            return tuple(items)
        _spread(items)
        return set(items) if tag == "set" else frozenset(items)
    if tag == "dict" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        pairs = [(decode(k, depth + 1), decode(v, depth + 1)) for k, v in body]
        _spread([k for k, _ in pairs])
        return dict(pairs)
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
    raise NotPlainData("unknown value form")


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
