"""Typed attributes: a decision recorded as a frozen dataclass that prints and parses back.

A typed attribute is printed ``#<mnemonic><{field = value, ...}>`` (or, with ``positional`` fields,
``#<mnemonic><value, field = value, ...>``) (``#hfusion.schedule<{kind = "PURE_ELEMWISE",
tile = [12288], ...}>``): its fields in declaration order, those equal to their default left out. The parser looks
the mnemonic up in :data:`TYPED_ATTRS` and builds the dataclass with :meth:`TypedAttr.from_fields`, which checks
every field, so a hand-edited attribute with a wrong field is a parse error at its position, not a crash later.

Field values are attribute values (bool, int, str, lists, dicts, sizes) or nested typed records (a dataclass whose
fields are such values: written as a dict). Lists are held as tuples, so the attribute is hashable and immutable.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import ClassVar


class AttrFieldError(ValueError):
    """A typed attribute's field is missing, unknown or of the wrong kind."""


TYPED_ATTRS: dict[str, type["TypedAttr"]] = {}


def register_attr(cls):
    """Class decorator: make a typed attribute known to the parser by its mnemonic."""
    if cls.mnemonic in TYPED_ATTRS and TYPED_ATTRS[cls.mnemonic] is not cls:
        raise ValueError(f"attribute #{cls.mnemonic} registered twice")
    TYPED_ATTRS[cls.mnemonic] = cls
    return cls


class FieldDict(dict):
    """A record's fields: printed in declaration order, not sorted as an attribute dictionary is."""


class Record:
    """A frozen dataclass of attribute values, written as a dict (fields equal to their default omitted)."""

    def fields(self) -> FieldDict:
        out = FieldDict()
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if _has_default(f) and value == _default(f):
                continue
            out[f.name] = _to_text_value(value)
        return out

    @classmethod
    def from_fields(cls, given: dict, where: str = ""):
        where = where or f"#{getattr(cls, 'mnemonic', cls.__name__)}"
        if not isinstance(given, dict):
            raise AttrFieldError(f"{where}: expected a dictionary of fields, got {given!r}")
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise AttrFieldError(f"{where}: unknown field '{unknown[0]}' (fields: {', '.join(known)})")
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for name, f in known.items():
            if name not in given:
                if not _has_default(f):
                    raise AttrFieldError(f"{where}: missing field '{name}'")
                continue
            kwargs[name] = _convert(given[name], hints[name], f"{where}.{name}")
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as e:
            raise AttrFieldError(f"{where}: {e}") from None


class TypedAttr(Record):
    """A typed attribute (see the module docstring); subclasses are frozen dataclasses with a ``mnemonic``.

    ``positional`` names string fields written bare, first and always, before the others' ``key = value``:
    ``#hivm.data_layout<zZ, fractal = [16, 16]>`` instead of ``#hivm.data_layout<{kind = "zZ", ...}>``."""

    mnemonic: ClassVar[str] = ""
    positional: ClassVar[tuple[str, ...]] = ()


def _has_default(f) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _default(f):
    return f.default if f.default is not dataclasses.MISSING else f.default_factory()


def _to_text_value(value):
    if isinstance(value, Record):
        return value.fields()
    if isinstance(value, tuple):
        return [_to_text_value(v) for v in value]
    return value


def _convert(value, hint, where: str):
    """``value`` as parsed, checked against the field's type ``hint`` (lists become tuples)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", ())):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(value, inner[0], where)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise AttrFieldError(f"{where}: expected a list, got {value!r}")
        item = args[0] if args else object
        return tuple(_convert(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise AttrFieldError(f"{where}: expected a dictionary, got {value!r}")
        return dict(value)
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_fields(value, where)
    if hint is bool:
        if not isinstance(value, bool):
            raise AttrFieldError(f"{where}: expected a boolean, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise AttrFieldError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise AttrFieldError(f"{where}: expected a string, got {value!r}")
        return value
    return value
