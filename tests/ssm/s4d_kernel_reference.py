"""Independent S4D kernel (MODELS.md, "The SSM of BiGS") with numpy in complex128.

Reads {"H", "N", "L", "A_re", "A_im", "C", "log_step"} as JSON on stdin (C as [H, N, 2] flattened,
real then imaginary part), prints K [H, L] row-major, one value per line.
"""
import json
import sys

import numpy as np

p = json.load(sys.stdin)
H, N, L = p["H"], p["N"], p["L"]
A_re = np.array(p["A_re"], dtype=np.float64).reshape(H, N)
A_im = np.array(p["A_im"], dtype=np.float64).reshape(H, N)
C = np.array(p["C"], dtype=np.float64).reshape(H, N, 2)
step = np.exp(np.array(p["log_step"], dtype=np.float64)).reshape(H, 1)
A = np.minimum(A_re, -1e-4) + 1j * A_im
C = C[..., 0] + 1j * C[..., 1]
dtA = step * A  # [H, N]
l = np.arange(L)
K = np.einsum("hn,hnl->hl", C * (np.exp(dtA) - 1) / A, np.exp(dtA[..., None] * l)).real
for value in K.reshape(-1):
    print(repr(float(value)))
