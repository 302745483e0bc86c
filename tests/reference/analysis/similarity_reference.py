#!/usr/bin/python3
"""Independent numpy references of the representation-similarity measures, for the C++ tests.

    similarity_reference.py DUMP_A DUMP_B ROUTESCOPE_RESULT.json

Written from the papers' definitions (no Routescope code, no similarity library). Every function
takes X [N, dx] and Y [N, dy] (rows: the same N inputs seen by two representations) in float64:

- linear_cka           Kornblith et al. 2019: ||X~'Y~||_F^2 / (||X~'X~||_F ||Y~'Y~||_F), X~ centred
- linear_cka_unbiased  the same with the unbiased HSIC estimator of Song et al. 2012 on the N x N
                       Gram matrices X~X~' and Y~Y~'
- rbf_cka              biased CKA of Gaussian kernels, sigma^2 = median of all N^2 squared distances
- svcca                Raghu et al. 2017: PCA to 99% of the variance on each side, then CCA;
                       mean of the min(kx, ky) canonical correlations; returns (score, kx, ky)
- pwcca                Morcos et al. 2018: CCA of the full centred matrices, correlations weighted
                       by the canonical variates' summed |projection| on the side with fewer columns
- procrustes           Ding et al. 2021: 2 - 2 ||X^'Y^||_* with X^ = X~ / ||X~||_F, in [0, 2]

CCA is computed from orthonormal bases of the centred column spaces (left singular vectors of each
centred matrix): the canonical correlations are the singular values of Ux'Uy. That is a different
route from whitening the covariance matrices, so the two implementations share no algebra.

The main program reads the vectors that Routescope's result lists (result.sample, result.gram_sample)
straight from the dumps with h5py and prints, per measure, the largest relative error.
"""
import json
import sys

import h5py
import numpy as np

MEASURES = ("linear_cka", "linear_cka_unbiased", "rbf_cka", "svcca", "pwcca", "procrustes")


def centre(X):
    X = np.asarray(X, np.float64)
    return X - X.mean(axis=0, keepdims=True)


# ---------------------------------------------------------------- CKA
def linear_cka(X, Y):
    X, Y = centre(X), centre(Y)
    num = np.linalg.norm(X.T @ Y, "fro") ** 2
    return float(num / (np.linalg.norm(X.T @ X, "fro") * np.linalg.norm(Y.T @ Y, "fro")))


def hsic_unbiased(K, L):
    """Song et al. 2012, eq. (5): unbiased HSIC of two N x N kernel matrices (N >= 4)."""
    n = K.shape[0]
    K = K.copy()
    L = L.copy()
    np.fill_diagonal(K, 0.0)
    np.fill_diagonal(L, 0.0)
    one = np.ones(n)
    term1 = np.sum(K * L.T)  # tr(KL)
    term2 = (one @ K @ one) * (one @ L @ one) / ((n - 1) * (n - 2))
    term3 = 2.0 / (n - 2) * (one @ K @ (L @ one))
    return float((term1 + term2 - term3) / (n * (n - 3)))


def linear_cka_unbiased(X, Y):
    X, Y = centre(X), centre(Y)
    K, L = X @ X.T, Y @ Y.T
    return float(hsic_unbiased(K, L) / np.sqrt(hsic_unbiased(K, K) * hsic_unbiased(L, L)))


def rbf_kernel(X):
    X = np.asarray(X, np.float64)
    # Squared distances from the differences themselves, row by row: |x|² + |y|² − 2xᵀy cancels
    # to noise for vectors far from the origin (a coordinate of 1e5 beside a spread of 1e-3).
    D = np.stack([np.sum((X - x) ** 2, axis=1) for x in X])
    sigma2 = np.median(D)  # all N^2 entries, the zero diagonal included
    return np.exp(-D / (2.0 * sigma2))


def double_centre(K):
    return K - K.mean(axis=0, keepdims=True) - K.mean(axis=1, keepdims=True) + K.mean()  # HKH


def cka_of_kernels(K, L):
    Kc, Lc = double_centre(K), double_centre(L)
    return float(np.sum(Kc * Lc) / (np.linalg.norm(Kc, "fro") * np.linalg.norm(Lc, "fro")))


def rbf_cka(X, Y):
    return cka_of_kernels(rbf_kernel(X), rbf_kernel(Y))


# ---------------------------------------------------------------- CCA family
def basis(X, rel=1e-10):
    """Orthonormal basis of the centred column space, restricted to directions whose covariance
    eigenvalue exceeds rel * the largest; returns (U [N, r], singular values [r])."""
    U, s, _ = np.linalg.svd(centre(X), full_matrices=False)
    keep = s ** 2 > rel * s[0] ** 2
    return U[:, keep], s[keep]


def svcca_dims(X, variance=0.99, rel=1e-10):
    """Smallest k whose top-k eigenvalues of X~'X~ hold >= variance of their sum, at most the
    number of directions with variance (eigenvalue > rel * the largest, as basis()): at
    variance 1 a rank-deficient X keeps its rank, not a direction of rounding noise."""
    s = np.linalg.svd(centre(X), compute_uv=False)
    ev = s ** 2
    frac = np.cumsum(ev) / ev.sum()
    return min(int(np.searchsorted(frac, variance) + 1), int((ev > rel * ev[0]).sum()))


def svcca(X, Y, variance=0.99):
    Ux, _, _ = np.linalg.svd(centre(X), full_matrices=False)
    Uy, _, _ = np.linalg.svd(centre(Y), full_matrices=False)
    kx, ky = svcca_dims(X, variance), svcca_dims(Y, variance)
    # projecting X~ on its top kx principal directions gives Ux[:, :kx] diag(s): its column space is
    # spanned by Ux[:, :kx], so the canonical correlations are the singular values of Ux_k'Uy_k
    rho = np.linalg.svd(Ux[:, :kx].T @ Uy[:, :ky], compute_uv=False)
    k = min(kx, ky)
    return float(np.mean(np.clip(rho[:k], 0.0, 1.0))), kx, ky


def pwcca(X, Y):
    X, Y = centre(X), centre(Y)
    Ux, _ = basis(X)
    Uy, _ = basis(Y)
    P, rho, Rt = np.linalg.svd(Ux.T @ Uy, full_matrices=False)
    k = min(Ux.shape[1], Uy.shape[1])
    rho = np.clip(rho[:k], 0.0, 1.0)
    if X.shape[1] <= Y.shape[1]:  # the side with fewer columns, A when equal
        H, Z = Ux @ P[:, :k], X
    else:
        H, Z = Uy @ Rt.T[:, :k], Y
    H = H / np.linalg.norm(H, axis=0, keepdims=True)  # unit-norm canonical variates
    alpha = np.abs(H.T @ Z).sum(axis=1)  # alpha_i = sum_j |<h_i, z_j>|
    return float(np.sum(alpha * rho) / np.sum(alpha))


def canonical_correlations(X, Y):
    Ux, _ = basis(X)
    Uy, _ = basis(Y)
    return np.linalg.svd(Ux.T @ Uy, compute_uv=False)


# ---------------------------------------------------------------- Procrustes
def procrustes(X, Y):
    X, Y = centre(X), centre(Y)
    X = X / np.linalg.norm(X, "fro")
    Y = Y / np.linalg.norm(Y, "fro")
    nuclear = np.linalg.svd(X.T @ Y, compute_uv=False).sum()
    return float(2.0 - 2.0 * nuclear)


def measure(name, X, Y, variance=0.99):
    if name == "svcca":
        return svcca(X, Y, variance)[0]
    return {"linear_cka": linear_cka, "linear_cka_unbiased": linear_cka_unbiased, "rbf_cka": rbf_cka,
            "pwcca": pwcca, "procrustes": procrustes}[name](X, Y)


# ---------------------------------------------------------------- permutation null
def permutation_null(K, L, permutations, seed=12345):
    """Biased CKA of K against L with its examples re-paired by random permutations."""
    rng = np.random.default_rng(seed)
    Kc, Lc = double_centre(K), double_centre(L)
    nk = np.linalg.norm(Kc, "fro")
    nl = np.linalg.norm(Lc, "fro")
    out = np.empty(permutations)
    for i in range(permutations):
        p = rng.permutation(K.shape[0])
        out[i] = np.sum(Kc * Lc[np.ix_(p, p)]) / (nk * nl)  # HPLP'H = P(HLH)P'
    return out


def linear_gram(X):
    X = centre(X)
    return X @ X.T


# ---------------------------------------------------------------- reading dumps
class Dump:
    def __init__(self, path):
        self.path = path
        self.f = h5py.File(path, "r")
        self.lengths = self.f["data/lengths"][()].astype(np.int64)
        self.S = len(self.lengths)
        self.layers = sorted(int(k) for k in self.f["layers"].keys())
        self._cache = {}

    def close(self):
        self.f.close()

    def _layer(self, layer):
        if layer not in self._cache:
            g = self.f[f"layers/{layer}"]
            hidden = g["hidden"][()].astype(np.float64)
            if "example_index" in g:
                row = {int(e): r for r, e in enumerate(g["example_index"][()])}
            else:
                row = {e: e for e in range(self.S)}
            sentence = g["sentence"][()].astype(np.float64) if "sentence" in g else None
            self._cache[layer] = (hidden, row, sentence)
        return self._cache[layer]

    def tokens(self, layer, examples, positions):
        hidden, row, _ = self._layer(layer)
        return np.stack([hidden[row[int(e)], int(t)] for e, t in zip(examples, positions)])

    def sentences(self, layer, examples):
        hidden, row, sentence = self._layer(layer)
        if sentence is not None:
            return np.stack([sentence[row[int(e)]] for e in examples])
        return np.stack([hidden[row[int(e)], : self.lengths[int(e)]].mean(axis=0) for e in examples])

    def vectors(self, layer, result):
        s = result["sample"]
        if result["vectors"] == "sentence":
            return self.sentences(layer, s["examples"])
        return self.tokens(layer, s["examples"], s["positions"])


def relative_error(ours, ref, floor=1e-3):
    return abs(ours - ref) / max(abs(ref), floor)


def reference_matrices(A, B, result, variance=None):
    """{measure: matrix} recomputed from the vectors the result lists; also the svcca dims and the
    gram-subsample observed values."""
    if variance is None:
        variance = float(result.get("options", {}).get("svcca_variance", 0.99))
    la, lb = result["layers_a"], result["layers_b"]
    names = [m for m in MEASURES if m in result["measures"]]
    g = np.asarray(result["gram_sample"], np.int64)
    out = {m: np.zeros((len(la), len(lb))) for m in names}
    gram = {"linear_cka": np.zeros((len(la), len(lb))), "rbf_cka": np.zeros((len(la), len(lb)))}
    dims_a, dims_b = [svcca_dims(A.vectors(l, result), variance) for l in la], []
    dims_b = [svcca_dims(B.vectors(l, result), variance) for l in lb]
    for i, l in enumerate(la):
        X = A.vectors(l, result)
        for j, m in enumerate(lb):
            Y = B.vectors(m, result)
            for name in names:
                if name == "rbf_cka":
                    out[name][i, j] = rbf_cka(X[g], Y[g])
                else:
                    out[name][i, j] = measure(name, X, Y, variance)
            gram["linear_cka"][i, j] = linear_cka(X[g], Y[g])
            gram["rbf_cka"][i, j] = rbf_cka(X[g], Y[g])
    return out, dims_a, dims_b, gram


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    A, B = Dump(sys.argv[1]), Dump(sys.argv[2])
    with open(sys.argv[3]) as fh:
        doc = json.load(fh)
    worst_all = 0.0
    for result in doc["results"]:
        ref, dims_a, dims_b, gram = reference_matrices(A, B, result)
        print(f"{result['vectors']} vectors, n = {result['n']}, gram n = {len(result['gram_sample'])}, "
              f"layers A {result['layers_a']} x B {result['layers_b']}")
        for name, R in ref.items():
            C = np.asarray(result["measures"][name], np.float64)
            err = np.vectorize(relative_error)(C, R) if C.shape == R.shape else np.array([np.inf])
            worst_all = max(worst_all, float(err.max()))
            print(f"  {name:22s} max relative error {err.max():.3e}")
        if "svcca_dims_a" in result:
            print(f"  svcca dims A {result['svcca_dims_a']} (reference {dims_a}), "
                  f"B {result['svcca_dims_b']} (reference {dims_b})")
        for name in ("linear_cka", "rbf_cka"):
            if name in result.get("gram", {}):
                C = np.asarray(result["gram"][name]["observed"], np.float64)
                err = np.vectorize(relative_error)(C, gram[name])
                print(f"  gram {name:17s} observed max relative error {err.max():.3e}")
    print(f"largest relative error {worst_all:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
