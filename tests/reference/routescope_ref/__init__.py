"""Independent PyTorch reference of the BiGS-family models (MODELS.md), written from the spec alone.

It is the oracle the C++ engine's parity tests compare against: configuration (docs/config.md),
S4D kernel and FFT convolution, the four architectures of the BiGS paper's 2x2 ablation
(GATED/SSM = BiGS, STACK/SSM, GATED/ATT, STACK/ATT = BERT), the heads, AdamW with the parameter
groups and schedule of docs/config.md, and checkpoints (CHECKPOINT_FORMAT.md version 1).
"""
