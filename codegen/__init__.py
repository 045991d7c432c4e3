"""HIVM kernel → simulator program, host tiling function and assembly dump (docs/codegen.md).

    from codegen import compile_kernel, compile_module
    ck = compile_kernel(module.lookup("main_fused_0"), module)
    outs, res = ck.run([x, y, out], {"s0": 300})
"""

from .emitters import EMITTERS, HOST_ONLY
from .errors import CodegenError
from .kernel import ArgLayout, CompiledKernel, Tiling, compile_kernel, compile_module

__all__ = ["EMITTERS", "HOST_ONLY", "CodegenError", "ArgLayout", "CompiledKernel", "Tiling", "compile_kernel",
           "compile_module"]
