"""Attribute schemas shared by the dialects.

Attribute values are plain Python data: bool, int, float, str, sympy expressions (sizes), IR types, and lists or
dicts of these. Each op declares its attributes with these schemas; the verifier checks them.
"""

from __future__ import annotations

import sympy

from .core import Attr
from .types import DTYPES, Type


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, bool)


def _is_size(v) -> bool:
    return _is_int(v) or (isinstance(v, sympy.Expr) and v.is_integer is not False)


def _is_list_of(pred):
    return lambda v: isinstance(v, (list, tuple)) and all(pred(x) for x in v)


def IntAttr(optional=False, default=None) -> Attr:
    return Attr("an integer", _is_int, optional=optional, default=default)


def BoolAttr(default: bool | None = None, optional: bool = False) -> Attr:
    """A boolean; optional when it has a default (filled in) or ``optional`` (left absent)."""
    return Attr("a boolean", lambda v: isinstance(v, bool), optional=optional or default is not None, default=default)


def StrAttr(choices=(), optional=False, default=None) -> Attr:
    return Attr("a string", lambda v: isinstance(v, str), tuple(choices), optional, default)


def NumberAttr(optional=False) -> Attr:
    return Attr("a number", _is_number, optional=optional)


def IntListAttr(optional=False, default=None) -> Attr:
    return Attr("a list of integers", _is_list_of(_is_int), optional=optional, default=default)


def SizeListAttr(optional=False) -> Attr:
    return Attr("a list of sizes (integers or size expressions)", _is_list_of(_is_size), optional=optional)


def TypeAttr(optional=False) -> Attr:
    return Attr("a type", lambda v: isinstance(v, Type), optional=optional)


def DtypeAttr(optional=False) -> Attr:
    return Attr("a dtype name", lambda v: isinstance(v, str), DTYPES, optional=optional)


def AnyAttr(optional=True) -> Attr:
    return Attr("any attribute value", lambda v: True, optional=optional)


def SizeDictAttr(optional=False) -> Attr:
    """A dictionary of name -> size (integer or size expression): a host tiling function."""
    return Attr("a dictionary of sizes", lambda v: isinstance(v, dict) and all(_is_size(x) for x in v.values()),
                optional=optional)
