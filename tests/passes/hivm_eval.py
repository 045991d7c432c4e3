"""A tiny reference evaluator of HIVM vector and cube kernels on torch tensors (tests only, not part of the package).

It runs what ``convert-to-hivm`` produces — loads/stores with offsets and valid extents, vector ops, ``scf.for``,
index arithmetic — for every block index in ``range(block_dim)`` one after the other, so a kernel's result can be
compared with the reference interpreter's result for the tensor-level kernel. Local buffers start filled with a
poison value, so reading data no load or vector op wrote shows up as a mismatch; accesses outside a buffer or a
GM argument are errors.

``run_host(module, args)`` runs ``@main`` with the reference interpreter, except that ``hivm.launch`` runs the
HIVM kernel here.
"""

from __future__ import annotations

import torch

from graph_passes.ir.sizes import evaluate
from graph_passes.ir.types import IndexType, MemRefType, ScalarType
from torch_npu_backend.dtypes import torch_dtype
from torch_npu_backend.interpreter import BINARY, CMP, ROUND, UNARY, Interpreter

POISON = {"f16": 1111.0, "bf16": 1111.0, "f32": 1111.0, "i1": True}


class HIVMError(RuntimeError):
    pass


def _load_l0a(op, bufs, idx, what):
    """L0A[0:m, 0:k] = the A window at k_off of the L1 tile (read transposed with ``transpose``); zero beyond."""
    src, dst = bufs
    k_off, m, k = idx
    win = src[k_off:k_off + k, 0:m].T if op.attributes["transpose"] else src[0:m, k_off:k_off + k]
    _check_local(dst, [m, k], what)
    dst.zero_()
    dst[0:m, 0:k] = win


def _load_l0b(op, bufs, idx, what):
    """L0B[0:k, 0:n] = the B window at (k_off, n_off) of the L1 tile (read transposed with ``transpose``)."""
    src, dst = bufs
    k_off, n_off, k, n = idx
    win = src[n_off:n_off + n, k_off:k_off + k].T if op.attributes["transpose"] else src[k_off:k_off + k, n_off:n_off + n]
    _check_local(dst, [k, n], what)
    dst.zero_()
    dst[0:k, 0:n] = win


def _mmad(op, bufs, idx, what):
    """C[0:m, 0:n] = (init ? 0 : C) + A[0:m, 0:k] @ B[0:k, 0:n], the products summed in f64, rounded to f32 once."""
    a, b, c = bufs
    init, m, k, n = idx
    _check_local(c, [m, n], what)
    prod = (a[0:m, 0:k].double() @ b[0:k, 0:n].double()).float()
    c[0:m, 0:n] = prod if init else c[0:m, 0:n] + prod


def _fixpipe(op, bufs, idx, what):
    """GM[offsets : +m, : +n] = cast(relu?(C[0:m, 0:n])) (the box spans the destination's last two dims)."""
    c, dst = bufs
    offs, (m, n) = idx[: dst.dim()], idx[dst.dim():]
    val = c[0:m, 0:n]
    if op.attributes["relu"]:
        val = torch.relu(val)
    full = [1] * (dst.dim() - 2) + [m, n]
    region = dst[_gm_region(dst, offs, full, what)]
    region.copy_(val.reshape(region.shape).to(dst.dtype))


CUBE_RULES = {"hivm.load_l0a": _load_l0a, "hivm.load_l0b": _load_l0b, "hivm.mmad": _mmad, "hivm.fixpipe": _fixpipe}


def _region(ext):
    return tuple(slice(0, e) for e in ext)


def _gm_region(buf, offs, ext, what):
    for d, (o, e, n) in enumerate(zip(offs, ext, buf.shape)):
        if o < 0 or e < 0 or o + e > n:
            raise HIVMError(f"{what}: dim {d} range [{o}, {o + e}) outside [0, {n})")
    return tuple(slice(o, o + e) for o, e in zip(offs, ext))


def _check_local(buf, ext, what):
    if len(ext) != buf.dim() or any(e > n for e, n in zip(ext, buf.shape)):
        raise HIVMError(f"{what}: extents {list(ext)} exceed buffer {list(buf.shape)}")


def run_kernel(func, tensors, bindings) -> None:
    """Run HIVM kernel ``func`` on ``tensors`` (one per memref argument, written in place)."""
    args = list(func.body.args)
    tiling = func.attributes["tiling"]
    env = {}
    ti = 0
    for a in args:
        if isinstance(a.type, MemRefType):
            t = tensors[ti]
            ti += 1
            shape = [evaluate(d, bindings) for d in a.type.shape]
            env[a] = t.view(shape)
        elif isinstance(a.type, IndexType):
            env[a] = evaluate(tiling[a.name_hint], bindings)
        else:
            env[a] = tensors[ti]
            ti += 1
    block_dim = evaluate(tiling["block_dim"], bindings)
    for bid in range(block_dim):
        _run_block(func.body, dict(env), bid)


def _run_block(block, env, bid):
    for op in block.ops:
        _run_op(op, env, bid)


def _val(env, v):
    return env[v]


def _run_op(op, env, bid):
    name = op.name
    ins = [env.get(v) for v in op.operands]
    if name in ("func.return", "scf.yield"):
        return
    if name == "arith.constant":
        env[op.result] = op.attributes["value"]
        return
    if name.startswith("arith."):
        a, b = ins
        env[op.result] = {
            "arith.addi": a + b, "arith.subi": a - b, "arith.muli": a * b, "arith.floordivsi": a // b if b else 0,
            "arith.remsi": a % b if b else 0, "arith.minsi": min(a, b), "arith.maxsi": max(a, b),
            "arith.ceildivsi": -(-a // b) if b else 0,
        }[name]  # fmt: skip
        return
    if name in ("hivm.set_flag", "hivm.wait_flag", "hivm.pipe_barrier"):
        return  # the evaluator runs in program order: synchronisation has no effect here
    if name == "hivm.multi_buffer_select":
        copies = ins[1:]
        env[op.result] = copies[ins[0] % len(copies)]
        return
    if name == "hivm.get_block_idx":
        env[op.result] = bid
        return
    if name == "hivm.alloc":
        t = op.result.type
        env[op.result] = torch.full(t.static_shape(), POISON.get(t.dtype, 77), dtype=torch_dtype(t.dtype))
        return
    if name == "scf.for":
        lb, ub, step = ins[:3]
        for i in range(lb, ub, step):
            inner = dict(env)
            inner[op.body.args[0]] = i
            _run_block(op.body, inner, bid)
        return
    n = op.num_buffers
    bufs, idx = ins[:n], ins[n:]
    what = f"{name} at {op.loc}"
    if name == "hivm.load":
        src, dst = bufs
        offs, ext = idx[: src.dim()], idx[src.dim() :]
        _check_local(dst, ext, what)
        dims = op.attributes.get("dims")
        if dims is not None:  # a box over some of the GM dims (the others at their offset), e.g. one batch
            if op.attributes.get("steps") is not None or sorted(dims) != list(dims) or min(dims) < 0:
                raise HIVMError(f"{what}: only increasing non-negative dims without steps are evaluated")
            full = [ext[dims.index(d)] if d in dims else 1 for d in range(src.dim())]
            box = src[_gm_region(src, offs, full, what)]
            dst[_region(ext)] = box.reshape([full[d] for d in dims])
            return
        dst[_region(ext)] = src[_gm_region(src, offs, ext, what)]
        return
    if name in CUBE_RULES:
        CUBE_RULES[name](op, bufs, idx, what)
        return
    if name == "hivm.store":
        src, dst = bufs
        offs, ext = idx[: dst.dim()], idx[dst.dim() :]
        _check_local(src, ext, what)
        dst[_gm_region(dst, offs, ext, what)] = src[_region(ext)]
        return
    dst = bufs[-1]
    ext = list(idx)
    if name == "hivm.vreduce":
        src = bufs[0]
        _check_local(src, ext, what)
        x = src[_region(ext)]
        dims = op.attributes["dims"]
        kind = op.attributes["kind"]
        for d in sorted(dims, reverse=True):
            x = {"sum": lambda t: t.sum(d, keepdim=True, dtype=t.dtype),
                 "prod": lambda t: t.prod(d, keepdim=True, dtype=t.dtype),
                 "max": lambda t: t.amax(d, keepdim=True), "min": lambda t: t.amin(d, keepdim=True),
                 "any": lambda t: t.any(d, keepdim=True), "all": lambda t: t.all(d, keepdim=True)}[kind](x)  # fmt: skip
        out_ext = [1 if d in dims else e for d, e in enumerate(ext)]
        dst[_region(out_ext)] = x.to(dst.dtype)
        return
    _check_local(dst, ext, what)
    reg = _region(ext)

    def rd(v, k):
        if isinstance(v, torch.Tensor):
            _check_local(v, ext, what)
            return v[reg]
        return v

    if name == "hivm.vunary":
        dst[reg] = UNARY[op.attributes["fun"]](rd(bufs[0], 0)).to(dst.dtype)
    elif name == "hivm.vbinary":  # an operand of extent 1 along a dim (an inlined broadcast) is read along it
        def rd_bcast(v):
            if not isinstance(v, torch.Tensor):
                return v
            e = [1 if n == 1 else x for x, n in zip(ext, v.shape)]
            _check_local(v, e, what)
            return v[_region(e)]

        a, b = rd_bcast(bufs[0]), rd_bcast(bufs[1])
        if "column_scale" in op.attributes:  # the [R, 1] column read times the scale, rounded to its dtype
            scale = op.attributes["column_scale"]
            a, b = [x * scale if isinstance(x, torch.Tensor) and x.shape[-1] == 1 else x for x in (a, b)]
        out = BINARY[op.attributes["fun"]](a, b)
        dst[reg] = torch.as_tensor(out).to(dst.dtype).expand(dst[reg].shape)
    elif name == "hivm.vcmp":
        dst[reg] = torch.as_tensor(CMP[op.attributes["predicate"]](rd(bufs[0], 0), rd(bufs[1], 1)))
    elif name == "hivm.vsel":
        c, a, b = (rd(bufs[i], i) for i in range(3))
        dst[reg] = torch.where(torch.as_tensor(c), torch.as_tensor(a), torch.as_tensor(b)).to(dst.dtype)
    elif name == "hivm.vcast":
        x = rd(bufs[0], 0)
        if dst.dtype == torch.bool:
            dst[reg] = x != 0
        else:
            if x.is_floating_point() and not dst.dtype.is_floating_point:
                x = ROUND[op.attributes.get("round_mode", "rint")](x)
            dst[reg] = x.to(dst.dtype)
    elif name == "hivm.vbrc":
        src = bufs[0]
        dims = op.attributes["dims"]
        src_ext = [1 if d in dims else e for d, e in enumerate(ext)]
        _check_local(src, src_ext, what)
        dst[reg] = src[_region(src_ext)].expand(dst[reg].shape)
    elif name == "hivm.vfill":
        dst[reg] = op.attributes["value"]
    else:
        raise HIVMError(f"no evaluator rule for {name}")


class _HostInterpreter(Interpreter):
    def run_op(self, op, values):
        if op.name != "hivm.launch":
            return super().run_op(op, values)
        kernel = self.module.lookup(op.attributes["callee"])
        outs = [values[i].clone() for i in kernel.attributes["output_args"]]
        tensors = list(values)
        for i, o in zip(kernel.attributes["output_args"], outs):
            tensors[i] = o
        tensors = [t.contiguous() if isinstance(t, torch.Tensor) else t for t in tensors]
        run_kernel(kernel, tensors, self.bindings)
        return [tensors[i] for i in kernel.attributes["output_args"]]


def run_host(module, args, bindings=None, func="main") -> list:
    interp = _HostInterpreter(module, bindings)
    f = module.lookup(func)
    interp.bind(f, args)
    return interp.call(func, args)
