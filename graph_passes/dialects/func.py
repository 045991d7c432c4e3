"""``func``: functions, calls and returns.

``func.func`` carries ``sym_name`` and ``function_type``; its body is one block whose arguments are the function's
parameters. Device kernels outlined by fusion are functions with ``hacc.entry``-like attributes (``kernel``,
``fusion_kind``); the host function calls them with ``func.call``.
"""

from __future__ import annotations

from ..analysis.fusion_kind import FusionKind
from ..ir.attrs import BoolAttr, IntListAttr, SizeDictAttr, StrAttr, TypeAttr
from ..ir.core import Attr, Block, IsolatedFromAbove, Operation, Region, Terminator, register_op
from ..ir.types import FunctionType, TensorType
from .schedule_attrs import CubeSchedule, MovementSchedule, VectorSchedule, resolve_ref

FUSION_KINDS = tuple(k.name for k in FusionKind)  # the kinds an outlined kernel is classified as


@register_op
class FuncOp(Operation):
    name = "func.func"
    num_regions = 1
    traits = (IsolatedFromAbove,)
    attribute_schema = {
        "sym_name": StrAttr(),
        "function_type": TypeAttr(),
        # a device kernel (outlined by hfusion-fuse-ops) and its fusion kind
        "kernel": BoolAttr(optional=True),
        "fusion_kind": StrAttr(FUSION_KINDS, optional=True),
        "output_args": IntListAttr(optional=True),  # the arguments that are the kernel's out-parameters
        # hfusion-auto-schedule's decisions (dialects/schedule_attrs.py) and the host tiling function: name -> size
        "schedule": Attr("a #hfusion.schedule, #hfusion.movement_schedule or #hfusion.cube_schedule",
                         lambda v: isinstance(v, (VectorSchedule, MovementSchedule, CubeSchedule)), optional=True),
        "tiling": SizeDictAttr(optional=True),
    }

    @classmethod
    def build(cls, sym_name: str, input_types, result_types, arg_names=None, **attrs) -> "FuncOp":
        ftype = FunctionType(tuple(input_types), tuple(result_types))
        block = Block(list(input_types), arg_names)
        return cls([], [], {"sym_name": sym_name, "function_type": ftype, **attrs}, [Region([block])])

    @property
    def sym_name(self) -> str:
        return self.attributes["sym_name"]

    @property
    def function_type(self) -> FunctionType:
        return self.attributes["function_type"]

    @property
    def args(self):
        return self.body.args

    def set_function_type(self) -> None:
        """Recompute ``function_type`` from the block arguments and the return's operands."""
        ret = self.body.terminator
        results = tuple(v.type for v in ret.operands) if ret is not None else ()
        self.attributes["function_type"] = FunctionType(tuple(a.type for a in self.args), results)

    def verify_(self) -> None:
        ftype = self.attributes["function_type"]
        if not isinstance(ftype, FunctionType):
            raise self.error(f"function_type must be a function type, got {ftype}")
        if len(self.regions[0].blocks) != 1:
            raise self.error("must have exactly one block")
        arg_types = tuple(a.type for a in self.args)
        if arg_types != tuple(ftype.inputs):
            raise self.error(f"argument types ({', '.join(map(str, arg_types))}) do not match {ftype}")
        ret = self.body.terminator
        if ret is None or ret.name != "func.return":
            raise self.error(f"@{self.sym_name} must end with func.return")
        got = tuple(v.type for v in ret.operands)
        if got != tuple(ftype.results):
            raise ret.error(f"returns ({', '.join(map(str, got))}) but @{self.sym_name} declares {ftype}")
        schedule = self.attributes.get("schedule")
        if isinstance(schedule, VectorSchedule) and not any(op.dialect == "hivm" for op in self.body.ops):
            self._verify_schedule_refs(schedule)

    def _verify_schedule_refs(self, schedule: VectorSchedule) -> None:
        """Every value the schedule names is a tensor of the body, of its buffer's dtype (a schedule of another
        body — ops added or removed since hfusion-auto-schedule — is caught here, not in convert-to-hivm)."""
        values = {}
        for ref in schedule.refs():
            v = values[ref] = resolve_ref(ref, self)
            if v is None or not isinstance(v.type, TensorType):
                raise self.error(f"schedule names '{ref}', which is not a tensor value of @{self.sym_name}'s body")
        for i, buf in enumerate(schedule.buffers):
            if len(schedule.tile) and any(d >= len(schedule.tile) for d in buf.dims):
                raise self.error(f"schedule buffer {i} spans dims {list(buf.dims)} of a rank-{len(schedule.tile)} "
                                 f"tile")
            for ref in buf.values:
                dtype = values[ref].type.dtype
                if dtype != buf.dtype:
                    raise self.error(f"schedule buffer {i} is {buf.dtype} but holds '{ref}' of {dtype}")


@register_op
class ReturnOp(Operation):
    name = "func.return"
    operand_names = ("*values",)
    traits = (Terminator,)


@register_op
class CallOp(Operation):
    name = "func.call"
    operand_names = ("*args",)
    result_names = ("*results",)
    attribute_schema = {"callee": StrAttr()}

    def verify_(self) -> None:
        module = self.parent_op()
        while module is not None and module.name != "builtin.module":
            module = module.parent_op()
        if module is None:
            return
        callee = module.lookup(self.attributes["callee"])
        if callee is None:
            raise self.error(f"calls unknown function @{self.attributes['callee']}")
        ftype = callee.attributes["function_type"]
        got_in = tuple(v.type for v in self.operands)
        got_out = tuple(r.type for r in self.results)
        if got_in != tuple(ftype.inputs) or got_out != tuple(ftype.results):
            raise self.error(
                f"call type ({', '.join(map(str, got_in))}) -> ({', '.join(map(str, got_out))}) "
                f"does not match @{callee.sym_name}: {ftype}"
            )
