"""HIVM passes (buffer level): one module per pass, the file named after the pass.

Order (after AscendNPU-IR's HIVMPipelines.cpp): convert-to-hivm → hivm-infer-core-type → hivm-infer-mem-scope →
hivm-infer-data-layout → hivm-mark-multi-buffer → hivm-plan-memory → hivm-verify-memory-plan → hivm-inject-sync
→ hivm-enable-multi-buffer.
"""
