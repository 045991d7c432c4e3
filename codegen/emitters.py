"""The one table: IR op name → emit function ``fn(state, op)`` (``state``: the
:class:`codegen.lowering.KernelEmitter`). ``tests/codegen`` checks that every ``hivm.*`` op except
the host-side ``hivm.launch`` has an entry (an emitter may still reject a form it cannot emit, with a CodegenError)."""

from __future__ import annotations

from graph_passes.dialects.arith import BINARY_OPS

from . import (broadcast, cube, dma, embedding_gather, index_ops, mask_ops, permute, reduce, scalar_ops, sync, transpose,
               vector_ops)
from .scalar_loops import on_scalar_pipe

HOST_ONLY = ("hivm.launch",)

EMITTERS = {
    # scalar unit
    "arith.constant": scalar_ops.emit_constant,
    **{name: scalar_ops.emit_index_binary for name in BINARY_OPS},
    "arith.index_cast": scalar_ops.emit_index_cast,
    "hivm.get_block_idx": scalar_ops.emit_block_idx,
    "hivm.get_sub_block_idx": scalar_ops.emit_sub_block_idx,
    "hivm.alloc": scalar_ops.emit_alloc,
    "hivm.multi_buffer_select": scalar_ops.emit_multi_buffer_select,
    # MTE2 / MTE3
    "hivm.load": dma.emit_load,
    "hivm.store": dma.emit_store,
    # S + MTE2: a scalar loop over the index issuing one row copy each
    "hivm.embedding_gather": embedding_gather.emit_embedding_gather,
    # V (i64 ops: scalar loops on S, codegen.scalar_loops)
    "hivm.copy": vector_ops.emit_copy,
    "hivm.vunary": on_scalar_pipe(vector_ops.emit_vunary),
    "hivm.vbinary": on_scalar_pipe(vector_ops.emit_vbinary),
    "hivm.vcmp": on_scalar_pipe(mask_ops.emit_vcmp),
    "hivm.vsel": on_scalar_pipe(mask_ops.emit_vsel),
    "hivm.vcast": on_scalar_pipe(vector_ops.emit_vcast),
    "hivm.vbrc": on_scalar_pipe(broadcast.emit_vbrc),
    "hivm.vreduce": on_scalar_pipe(reduce.emit_vreduce),
    "hivm.vtranspose": transpose.emit_vtranspose,
    "hivm.vindex": permute.emit_vindex,
    "hivm.vpermute": permute.emit_vpermute,
    "hivm.vfill": on_scalar_pipe(vector_ops.emit_vfill),
    "hivm.varange": on_scalar_pipe(index_ops.emit_varange),
    "hivm.vgather": index_ops.emit_vgather,
    "hivm.vgather_offsets": index_ops.emit_vgather_offsets,
    # cube: MTE1, M, FIX
    "hivm.load_l0a": cube.emit_load_l0a,
    "hivm.load_l0b": cube.emit_load_l0b,
    "hivm.mmad": cube.emit_mmad,
    "hivm.fixpipe": cube.emit_fixpipe,
    # sync
    "hivm.set_flag": sync.emit_set_flag,
    "hivm.wait_flag": sync.emit_wait_flag,
    "hivm.pipe_barrier": sync.emit_pipe_barrier,
    "hivm.sync_block_set": sync.emit_sync_block_set,
    "hivm.sync_block_wait": sync.emit_sync_block_wait,
}
