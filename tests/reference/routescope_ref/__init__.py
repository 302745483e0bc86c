"""Independent PyTorch reference of the BiGS-family models (MODELS.md), written from the spec alone.

It is the oracle the C++ engine's parity tests compare against: configuration (docs/config.md),
S4D kernel and FFT convolution, the four architectures of the BiGS paper's 2x2 ablation
(GATED/SSM = BiGS, STACK/SSM, GATED/ATT, STACK/ATT = BERT), the heads, AdamW with the parameter
groups and schedule of docs/config.md, and checkpoints (CHECKPOINT_FORMAT.md version 1).
"""

import os as _os
import sys as _sys

# The S4D kernel and FFT convolution are the Python package's (python/routescope/ssm.py).
_PACKAGE = _os.path.normpath(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "..",
                                           "..", "python"))
if _PACKAGE not in _sys.path:
    _sys.path.insert(0, _PACKAGE)
