"""The SSM of BiGS for the parity oracle: the S4D kernel and the FFT convolution are the Python
package's (python/routescope/ssm.py, whose docstring states the equations); this module wraps them
in the engine's parameter layout."""
import math

import numpy as np
import torch
from torch import nn

from routescope.ssm import A_RE_MAX, fft_conv, s4d_kernel  # noqa: F401  (python/routescope)


def hippo_legs_imag(n_modes):
    """A_im of the HiPPO-LegS init (MODELS.md), ascending, float64 numpy [N].

    LegS_nk = sqrt(2n+1)sqrt(2k+1) (n > k), n+1 (n = k), 0 (n < k); S = -LegS + P P^T with
    P_n = sqrt(n + 1/2). S = -1/2 I + S_skew; A_im = eigenvalues of the Hermitian -i*S_skew.
    """
    n = np.arange(n_modes, dtype=np.float64)
    r = np.sqrt(2.0 * n + 1.0)
    legs = np.where(n[:, None] > n[None, :], r[:, None] * r[None, :], 0.0) + np.diag(n + 1.0)
    p = np.sqrt(n + 0.5)
    s = -legs + p[:, None] * p[None, :]
    s_skew = s + 0.5 * np.eye(n_modes)
    return np.linalg.eigvalsh(-1j * s_skew)


def a_im_init(kind, n_modes):
    """A_im init [N] (float64 numpy): hippo (LegS), lin: pi*n, inv: (N/pi)(N/(2n+1) - 1)."""
    n = np.arange(n_modes, dtype=np.float64)
    if kind == "hippo":
        return hippo_legs_imag(n_modes)
    if kind == "lin":
        return math.pi * n
    if kind == "inv":
        return (n_modes / math.pi) * (n_modes / (2.0 * n + 1.0) - 1.0)
    raise ValueError(f"model.ssm.a_im_init: unknown '{kind}'")


class SSM(nn.Module):
    """One S4D SSM (one direction of one layer); parameters named as CHECKPOINT_FORMAT.md."""

    def __init__(self, d_model, n_kernels=1, n_modes=64, a_im="hippo", dt_min=0.01, dt_max=1.0):
        super().__init__()
        if d_model % n_kernels != 0:
            raise ValueError(f"model.ssm.n_kernels={n_kernels} must divide d_model={d_model}")
        self.d_model, self.n_kernels, self.n_modes = d_model, n_kernels, n_modes
        self.a_im_kind, self.dt_min, self.dt_max = a_im, dt_min, dt_max
        H, N = n_kernels, n_modes
        self.A_re = nn.Parameter(torch.empty(H, N))
        self.A_im = nn.Parameter(torch.empty(H, N))
        self.C = nn.Parameter(torch.empty(H, N, 2))
        self.D = nn.Parameter(torch.empty(H))
        self.log_step = nn.Parameter(torch.empty(H))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        """MODELS.md init: A_re = -0.5, A_im from the named init, C ~ N(0, sqrt(0.5)) per part,
        D = 1, log_step ~ U[log dt_min, log dt_max]."""
        self.A_re.fill_(-0.5)
        self.A_im.copy_(torch.from_numpy(a_im_init(self.a_im_kind, self.n_modes)).to(self.A_im.dtype)[None, :]
                        .expand(self.n_kernels, -1))
        self.C.normal_(0.0, math.sqrt(0.5))
        self.D.fill_(1.0)
        self.log_step.uniform_(math.log(self.dt_min), math.log(self.dt_max))

    def kernel(self, L):
        """K [H, L]."""
        return s4d_kernel(self.A_re, self.A_im, self.C, self.log_step, L)

    def forward(self, u):
        """u [B, L, d] -> y [B, L, d]; channel c uses kernel c // (d/H)."""
        group = self.d_model // self.n_kernels
        K = self.kernel(u.shape[1]).repeat_interleave(group, dim=0)  # [d, L]
        D = self.D.repeat_interleave(group)
        return fft_conv(u, K, D)
