"""HFusion passes (tensor level): one module per pass, the file named after the pass."""
