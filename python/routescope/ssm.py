"""The SSM of BiGS: S4D with a zero-order-hold kernel, as the official BiGS code has it (MODELS.md).

Per SSM, H kernels (H = 1: one kernel shared by all d channels; H > 1: H contiguous channel groups),
N modes each, all N kept (no conjugate-pair halving):

    A_n  = min(A_re_n, -1e-4) + i*A_im_n          Delta = exp(log_step)
    K[l] = Re( sum_n C_n * (exp(Delta*A_n) - 1) / A_n * exp(l*Delta*A_n) ),   l = 0..L-1
    y    = irfft( rfft(pad(u, 2L)) * rfft(pad(K, 2L)) )[0:L] + D*u

No factor 2. exp(l*Delta*A_n) is evaluated directly: the product dtA = Delta*A_n is formed first and
then multiplied by l (as S4D's reference code orders it), never by repeated powers. The clip is
torch.clamp(max=-1e-4), whose gradient is zero where it clips. The kernel is written in real
arithmetic (cos/sin) so that it shares no code path with the complex numpy check in
tests/reference/selftest.py.

One implementation: tests/reference/routescope_ref/ssm.py (the engine's parity oracle) imports
these two functions, and routescope.bigs (the exported BiGS) calls them.
"""
import torch

# MODELS.md: A_re is clipped at -1e-4 so every mode decays.
A_RE_MAX = -1e-4


def s4d_kernel(A_re, A_im, C, log_step, L):
    """K [H, L] from the parameters (A_re, A_im [H, N]; C [H, N, 2]; log_step [H])."""
    a = torch.clamp(A_re, max=A_RE_MAX)
    b = A_im
    dt = torch.exp(log_step)[:, None]  # [H, 1]
    dta, dtb = dt * a, dt * b  # Delta*A = dta + i*dtb, [H, N]
    # (exp(Delta*A) - 1) / A = (p + iq) / (a + ib)
    e = torch.exp(dta)
    p = e * torch.cos(dtb) - 1.0
    q = e * torch.sin(dtb)
    den = a * a + b * b
    br = (p * a + q * b) / den
    bi = (q * a - p * b) / den
    # W = C * B_bar
    cr, ci = C[..., 0], C[..., 1]
    wr = cr * br - ci * bi
    wi = cr * bi + ci * br
    # exp(l*Delta*A) = exp(l*dta) (cos(l*dtb) + i sin(l*dtb)); Re(W * that)
    l = torch.arange(L, dtype=A_re.dtype, device=A_re.device)
    la = dta[:, :, None] * l  # [H, N, L]
    lb = dtb[:, :, None] * l
    mag = torch.exp(la)
    return (mag * (wr[:, :, None] * torch.cos(lb) - wi[:, :, None] * torch.sin(lb))).sum(dim=1)


def fft_conv(u, K, D):
    """Causal linear convolution along the sequence via FFT of size 2L, plus the D skip.

    u [B, L, d], K [d, L], D [d] -> y [B, L, d] with y[t] = sum_{k<=t} K[k] u[t-k] + D u[t].
    """
    L = u.shape[1]
    uf = torch.fft.rfft(u.transpose(1, 2), n=2 * L)  # [B, d, L+1]
    kf = torch.fft.rfft(K, n=2 * L)  # [d, L+1]
    y = torch.fft.irfft(uf * kf, n=2 * L)[..., :L]
    return y.transpose(1, 2) + u * D
