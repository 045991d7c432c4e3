"""The one pass registry: ``@register_pass`` on a pass class; :func:`load_all_passes` imports every pass module.

Pass modules live in ``graph_passes/passes/<name>.py`` and ``graph_passes/passes/{hfusion,hivm}/<name>.py``; the
file name is the pass name (kebab → snake case, the ``hfusion-``/``hivm-`` prefix optional inside its package).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .base import ModulePass

PASS_REGISTRY: dict[str, type[ModulePass]] = {}

_PACKAGE = __name__.rsplit(".", 1)[0]  # graph_passes.passes
_INFRA_MODULES = {"base", "registry", "pipeline", "manager", "dumps"}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make a pass known by its ``name`` to pipelines and ``npu-opt``."""
    name = getattr(cls, "name", "")
    if not name or name != name.lower() or "_" in name or " " in name:
        raise ValueError(f"pass class {cls.__name__} needs a kebab-case name, got {name!r}")
    if not (cls.__doc__ or "").strip() or "\n" in (cls.__doc__ or "").strip():
        raise ValueError(f"pass {name} needs a one-line docstring")
    params = cls.__dict__.get("__dataclass_params__")
    if params is None or not params.frozen:
        raise ValueError(f"pass {name} must be a frozen dataclass (@dataclass(frozen=True))")
    module = cls.__module__
    if module.startswith(_PACKAGE + "."):
        stem = module.rsplit(".", 1)[-1].replace("_", "-")
        prefix = module[len(_PACKAGE) + 1 :].split(".")[0] + "-" if module.count(".") > 2 else ""
        if stem != name and prefix + stem != name:
            raise ValueError(f"pass {name} lives in {module}: the file name must be the pass name")
    old = PASS_REGISTRY.get(name)
    if old is not None and old.__qualname__ != cls.__qualname__:
        raise ValueError(f"pass {name} registered twice ({old.__module__} and {module})")
    PASS_REGISTRY[name] = cls
    return cls


def load_all_passes() -> dict[str, type[ModulePass]]:
    """Import every pass module under graph_passes/passes (idempotent) and return the registry."""
    root = Path(__file__).parent
    for info in pkgutil.walk_packages([str(root)], prefix=_PACKAGE + "."):
        if info.name.rsplit(".", 1)[-1] in _INFRA_MODULES or info.ispkg:
            continue
        importlib.import_module(info.name)
    return PASS_REGISTRY
