"""The SSA core: values, operations with attributes and regions, blocks with arguments, regions.

An :class:`Operation` subclass per op (declared in a dialect module) gives the op its name, its operand/result
arity, its attribute schema, its traits and an optional ``verify_``. The generic structure (operands, results,
attributes, regions, parent block, location) lives here and is the same for every op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar, Iterator

from .types import Type

# ---------------------------------------------------------------------------------------------------------------
# Traits: marker classes; passes ask ``op.has_trait(Elementwise)``.


class Trait:
    """Base of op traits."""


class Pure(Trait):
    """No side effects: dead results mean the op can be erased; identical ops can be merged (CSE)."""


class Elementwise(Trait):
    """Result[i] depends only on operand[i] (after broadcasting scalar operands)."""


class Reduction(Trait):
    """Reduces dims given by the ``dims`` attribute."""


class Broadcast(Trait):
    """Replicates its input along new dims."""


class Cube(Trait):
    """Runs on the Cube unit (matmul)."""


class Vector(Trait):
    """Runs on the Vector unit."""


class ViewLike(Trait):
    """Reinterprets its input's data without computing (reshape, slice with unit strides …)."""


class Terminator(Trait):
    """Ends a block."""


class IsolatedFromAbove(Trait):
    """Its regions may not use values defined outside of it (functions)."""


class Constant(Trait):
    """Materialises a compile-time constant given by its ``value`` attribute."""


class MemoryEffect(Trait):
    """Reads or writes memory (buffers, out-parameters); never erased or merged."""


# ---------------------------------------------------------------------------------------------------------------
# Values


@dataclass(eq=False)
class Use:
    op: "Operation"
    index: int


class Value:
    """An SSA value: an op result or a block argument."""

    def __init__(self, type: Type, name_hint: str | None = None):
        self.type = type
        self.name_hint = name_hint
        self.uses: list[Use] = []

    # Note: pickled without ``uses`` (the users' operand lists rebuild them on loading): a use leads to its op, whose
    # results lead to their uses, so pickling them would recurse along every def-use chain (a few hundred chained
    # ops overflow the stack). Without them pickling follows regions, blocks and ops: as deep as the nesting.
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["uses"]
        return state

    def __setstate__(self, state: dict) -> None:
        uses = self.__dict__.get("uses", [])  # users loaded before this value added theirs already
        self.__dict__.update(state)
        self.uses = uses

    @property
    def users(self) -> list["Operation"]:
        seen, out = set(), []
        for u in self.uses:
            if id(u.op) not in seen:
                seen.add(id(u.op))
                out.append(u.op)
        return out

    def replace_all_uses_with(self, new: "Value") -> None:
        if new is self:
            return
        for use in list(self.uses):
            use.op.set_operand(use.index, new)

    def owner_block(self) -> "Block | None":
        raise NotImplementedError


class OpResult(Value):
    def __init__(self, type: Type, op: "Operation", index: int):
        super().__init__(type)
        self.op = op
        self.index = index

    def owner_block(self):
        return self.op.parent

    def __repr__(self) -> str:
        return f"<result {self.index} of {self.op.name}: {self.type}>"


class BlockArgument(Value):
    def __init__(self, type: Type, block: "Block", index: int, name_hint: str | None = None):
        super().__init__(type, name_hint)
        self.block = block
        self.index = index

    def owner_block(self):
        return self.block

    def __repr__(self) -> str:
        return f"<block arg {self.index}: {self.type}>"


# ---------------------------------------------------------------------------------------------------------------
# Attribute schema


@dataclass(frozen=True)
class Attr:
    """Schema of one attribute: a kind name for messages, a predicate, optional choices and default."""

    kind: str
    check: Callable[[object], bool]
    choices: tuple = ()
    optional: bool = False
    default: object = None

    def validate(self, value) -> str | None:
        if not self.check(value):
            return f"must be {self.kind}, got {value!r}"
        if self.choices and value not in self.choices:
            return f"must be one of {', '.join(map(str, self.choices))}, got {value!r}"
        return None


class VerifyError(Exception):
    """The IR is invalid; the message names the op, its location and what is wrong."""


# ---------------------------------------------------------------------------------------------------------------
# Operations

OP_REGISTRY: dict[str, type["Operation"]] = {}


def register_op(cls: type["Operation"]) -> type["Operation"]:
    """Class decorator: make an op known by its name (to the parser, the verifier, the interpreter tables)."""
    if cls.name in OP_REGISTRY and OP_REGISTRY[cls.name] is not cls:
        raise ValueError(f"op {cls.name} registered twice")
    OP_REGISTRY[cls.name] = cls
    return cls


VARIADIC = "*"


class Operation:
    """One operation. Subclasses declare:

    - ``name``: ``dialect.op``;
    - ``operand_names`` / ``result_names``: names per position; a name starting with ``*`` is variadic (at most one);
    - ``attribute_schema``: name → :class:`Attr`;
    - ``num_regions``;
    - ``traits``: a tuple of :class:`Trait` classes;
    - ``verify_(self)``: op-specific checks, raising ``self.error(...)``.
    """

    name: ClassVar[str] = "builtin.unregistered"
    operand_names: ClassVar[tuple[str, ...]] = ()
    result_names: ClassVar[tuple[str, ...]] = ()
    attribute_schema: ClassVar[dict[str, Attr]] = {}
    num_regions: ClassVar[int] = 0
    traits: ClassVar[tuple[type[Trait], ...]] = ()

    def __init__(self, operands=(), result_types=(), attributes=None, regions=(), loc: str | None = None):
        self.operands: list[Value] = []
        self.results: list[OpResult] = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, object] = dict(attributes or {})
        self.regions: list[Region] = []
        self.parent: Block | None = None
        self.loc = loc
        for v in operands:
            self._append_operand(v)
        for r in regions:
            self.add_region(r)
        for key, spec in self.attribute_schema.items():
            if key not in self.attributes and spec.default is not None:
                self.attributes[key] = spec.default

    def __setstate__(self, state: dict) -> None:
        """Unpickling: register this op's uses of its operands (:class:`Value` pickles without them)."""
        self.__dict__.update(state)
        for i, v in enumerate(self.operands):
            v.__dict__.setdefault("uses", []).append(Use(self, i))

    # -- construction helpers ----------------------------------------------------------------------------
    @classmethod
    def create(cls, name: str, operands=(), result_types=(), attributes=None, regions=(), loc=None) -> "Operation":
        """Build an op by name through the registry (the parser's and the cloner's entry point)."""
        op_cls = OP_REGISTRY.get(name)
        if op_cls is None:
            raise VerifyError(f"unknown op '{name}'")
        return op_cls(operands, result_types, attributes, regions, loc)

    def _append_operand(self, v: Value) -> None:
        if not isinstance(v, Value):
            raise TypeError(f"{self.name}: operand {len(self.operands)} is {v!r}, not an SSA value")
        v.uses.append(Use(self, len(self.operands)))
        self.operands.append(v)

    def set_operand(self, index: int, new: Value) -> None:
        old = self.operands[index]
        old.uses = [u for u in old.uses if not (u.op is self and u.index == index)]
        new.uses.append(Use(self, index))
        self.operands[index] = new

    def set_operands(self, values) -> None:
        self.drop_operand_uses()
        self.operands = []
        for v in values:
            self._append_operand(v)

    def drop_operand_uses(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses = [u for u in v.uses if not (u.op is self and u.index == i)]

    def add_region(self, region: "Region") -> "Region":
        region.parent = self
        self.regions.append(region)
        return region

    # -- queries -------------------------------------------------------------------------------------------
    @classmethod
    def has_trait(cls, trait: type[Trait]) -> bool:
        return any(issubclass(t, trait) for t in cls.traits)

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise ValueError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def attr(self, key: str, default=None):
        return self.attributes.get(key, default)

    def operand(self, name: str) -> Value:
        """The operand declared as ``name`` in ``operand_names``. Only fixed operands have one (a variadic group is
        read as a slice of ``operands`` or through the op's own accessor); a fixed name declared after the variadic
        group counts from the end. An unknown or variadic name raises ``ValueError`` naming the op and its operands."""
        names = self.operand_names
        if name not in names or name.startswith(VARIADIC):
            raise ValueError(f"{self.name}: no fixed operand '{name}' (operands: {', '.join(names) or 'none'})")
        i = names.index(name)
        variadic = next((k for k, n in enumerate(names) if n.startswith(VARIADIC)), len(names))
        return self.operands[i if i < variadic else len(self.operands) - (len(names) - i)]

    @property
    def body(self) -> "Block":
        """The single block of the first region (for ops such as func.func and scf.for)."""
        return self.regions[0].blocks[0]

    def walk(self) -> Iterator["Operation"]:
        """This op and every op nested in its regions, in pre-order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in list(block.ops):
                    yield from op.walk()

    def parent_op(self) -> "Operation | None":
        if self.parent is None or self.parent.parent is None:
            return None
        return self.parent.parent.parent

    def is_ancestor_of(self, other: "Operation") -> bool:
        p = other.parent_op()
        while p is not None:
            if p is self:
                return True
            p = p.parent_op()
        return False

    # -- mutation ------------------------------------------------------------------------------------------
    def erase(self) -> None:
        """Remove from its block and drop operand uses; its results must be unused."""
        for r in self.results:
            if r.uses:
                raise ValueError(f"cannot erase {self.name}: result {r.index} still has {len(r.uses)} use(s)")
        for inner in list(self.walk())[1:]:
            inner.drop_operand_uses()
        self.drop_operand_uses()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def replace_with(self, values) -> None:
        """Replace every use of this op's results with ``values`` and erase the op."""
        values = list(values)
        if len(values) != len(self.results):
            raise ValueError(f"{self.name}: replacing {len(self.results)} results with {len(values)} values")
        for r, v in zip(self.results, values):
            r.replace_all_uses_with(v)
        self.erase()

    def clone(self, mapping: dict | None = None) -> "Operation":
        """A deep copy; operands are remapped through ``mapping`` (which is extended with the new values)."""
        mapping = {} if mapping is None else mapping
        new = Operation.create(
            self.name,
            [mapping.get(v, v) for v in self.operands],
            [r.type for r in self.results],
            dict(self.attributes),
            [],
            self.loc,
        )
        for old_r, new_r in zip(self.results, new.results):
            mapping[old_r] = new_r
            new_r.name_hint = old_r.name_hint
        for region in self.regions:
            new.add_region(region.clone(mapping))
        return new

    # -- verification -------------------------------------------------------------------------------------
    def error(self, message: str) -> VerifyError:
        where = self.loc or "<unknown>"
        return VerifyError(f"{where}: '{self.name}' op {message}")

    def verify_structure(self) -> None:
        """Arity, attribute schema and region count, from the declaration."""
        _check_arity(self, "operand", self.operand_names, len(self.operands))
        _check_arity(self, "result", self.result_names, len(self.results))
        if len(self.regions) != self.num_regions:
            raise self.error(f"expects {self.num_regions} region(s), has {len(self.regions)}")
        for key, spec in self.attribute_schema.items():
            if key not in self.attributes:
                if not spec.optional:
                    raise self.error(f"requires attribute '{key}' ({spec.kind})")
                continue
            problem = spec.validate(self.attributes[key])
            if problem:
                raise self.error(f"attribute '{key}' {problem}")

    def verify_(self) -> None:
        """Op-specific checks; override in subclasses."""

    def __repr__(self) -> str:
        return f"<{self.name} at {self.loc}>"


def _check_arity(op: Operation, what: str, names: tuple[str, ...], count: int) -> None:
    variadic = any(n.startswith(VARIADIC) for n in names)
    fixed = sum(1 for n in names if not n.startswith(VARIADIC))
    if (variadic and count < fixed) or (not variadic and count != fixed):
        expected = f"at least {fixed}" if variadic else str(fixed)
        raise op.error(f"expects {expected} {what}(s) ({', '.join(names) or 'none'}), has {count}")


# ---------------------------------------------------------------------------------------------------------------
# Blocks and regions


class Block:
    def __init__(self, arg_types=(), arg_names=None):
        self.args: list[BlockArgument] = []
        self.ops: list[Operation] = []
        self.parent: Region | None = None
        names = list(arg_names or [None] * len(arg_types))
        for t, n in zip(arg_types, names):
            self.add_arg(t, n)

    def add_arg(self, type: Type, name_hint: str | None = None) -> BlockArgument:
        a = BlockArgument(type, self, len(self.args), name_hint)
        self.args.append(a)
        return a

    def erase_arg(self, index: int) -> None:
        arg = self.args[index]
        if arg.uses:
            raise ValueError(f"cannot erase block argument {index}: it still has uses")
        del self.args[index]
        for i, a in enumerate(self.args):
            a.index = i

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.ops.index(anchor), op)

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.ops.index(anchor) + 1, op)

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops and self.ops[-1].has_trait(Terminator) else None

    def clone_into(self, new: "Block", mapping: dict) -> None:
        for op in self.ops:
            new.append(op.clone(mapping))


class Region:
    def __init__(self, blocks=()):
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    def clone(self, mapping: dict) -> "Region":
        new = Region()
        for block in self.blocks:
            nb = Block([a.type for a in block.args], [a.name_hint for a in block.args])
            for a, na in zip(block.args, nb.args):
                mapping[a] = na
            new.add_block(nb)
        for block, nb in zip(self.blocks, new.blocks):
            block.clone_into(nb, mapping)
        return new
