"""HIVM passes (buffer level): one module per pass, the file named after the pass."""
