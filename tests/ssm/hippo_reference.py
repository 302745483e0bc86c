"""Independent HiPPO-LegS A_im (MODELS.md, "The SSM of BiGS"), from the definition with numpy.

Usage: hippo_reference.py N  — prints the N eigenvalues of −i·S_skew, ascending, one per line.
"""
import sys

import numpy as np

N = int(sys.argv[1])
n = np.arange(N, dtype=np.float64)
r = np.sqrt(2 * n + 1)
legs = np.where(n[:, None] > n[None, :], r[:, None] * r[None, :], 0.0) + np.diag(n + 1)
P = np.sqrt(n + 0.5)
S = -legs + np.outer(P, P)
S_skew = S + 0.5 * np.eye(N)
for value in np.linalg.eigvalsh(-1j * S_skew):
    print(repr(float(value)))
