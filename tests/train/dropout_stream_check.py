#!/usr/bin/python3
"""The dropout masks are drawn apart from the parameters (docs/decisions.md, "Data: random
streams"; docs/models.md, "Initialisation").

The parameters: tensor e, element i = init_std * Box-Muller(philox(seed, 0, e, 2i), (.., 2i+1)).
Dropout: element k of site s at step t is kept when philox(seed XOR "dropout1", t, s, k) >> 8,
over 2^24, is at least p. Until session 36 the dropout seed was unsalted, so step 0's embedding
dropout (site 0) read the words that drew embeddings.word.weight: every activation 2i whose weight
w_i had |w_i| >= init_std*sqrt(-2 ln p) was dropped.

Checked independently of the engine's numbers (a Philox4x32-10 port and a float64 PyTorch BERT
forward written here from docs/models.md): the initial embeddings are the documented draws, and the
logged step-1 loss of a 1-step run with dropout 0.1 equals the forward with the documented salted
mask and differs from the one with the unsalted (initialisation's) mask.
Usage: dropout_stream_check.py ROUTESCOPE_CLI WORKDIR
"""
import sys, os, json, math, subprocess, tempfile, shutil
import numpy as np, h5py, torch
torch.set_default_dtype(torch.float64)
CLI = sys.argv[1]
WORK = sys.argv[2]
M32 = 0xFFFFFFFF
def philox(ctr, key):
    c = list(ctr); k = list(key)
    for _ in range(10):
        p0 = 0xD2511F53 * c[0]; p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k[1]) & M32, p0 & M32]
        k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
    return c
def bits(seed, step, stream, idx):
    b = idx >> 2
    return philox([b & M32, b >> 32, stream, step], [seed & M32, (seed >> 32) & M32])[idx & 3]
class RS:  # data::RandomStream
    def __init__(s, seed, step, stream): s.seed, s.step, s.stream, s.i = seed, step, stream, 0
    def bits(s):
        v = bits(s.seed, s.step, s.stream, s.i); s.i += 1; return v
    def below(s, n): return (((s.bits() << 32) | s.bits()) * n) >> 64
def perm(n, seed, epoch):
    v = list(range(n)); r = RS(seed ^ 0x73687566666C6531, epoch, 0)
    for i in range(n, 1, -1):
        j = r.below(i); v[i-1], v[j] = v[j], v[i-1]
    return v
def mlm_mask(ids, length, seed, step, example, mp, V=261):
    ks = seed ^ 0x6D6C6D5F6D61736B; key = [ks & M32, (ks >> 32) & M32]
    thr = lambda p: round(p * 4294967296.0)
    tc, tm, tr = thr(mp), thr(0.8), thr(0.9)
    inp = list(ids); lab = [-100] * len(ids); best = None; anyc = False
    def corrupt(j, d):
        lab[j] = ids[j]
        if d[1] < tm: inp[j] = 4
        elif d[1] < tr: inp[j] = 5 + ((d[2] * (V - 5)) >> 32)
    for j in range(len(ids)):
        if j >= length or ids[j] < 5: continue
        d = philox([j, 0, example, step], key)
        if d[0] < tc: corrupt(j, d); anyc = True
        elif best is None or d[0] < bd: best, bd, bdr = j, d[0], d
    if not anyc and best is not None: corrupt(best, bdr)
    return inp, lab
def ln(x, w, b, eps):
    mu = x.mean(-1, keepdim=True); var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b
def lin(P, n, x): return x @ P[n + ".weight"].T + P[n + ".bias"]
def mlm_loss(cfg, P, rows, labs, L, drop_keep):
    m = cfg["model"]; eps = m["ln_eps"]; d = m["d_model"]; H = m["n_heads"]; dh = d // H; p = m["dropout"]
    Bn = len(rows); tok = torch.zeros(Bn, L, dtype=torch.long); lens = [len(s) for s in rows]
    for i, s in enumerate(rows): tok[i, :len(s)] = torch.tensor(s)
    h = P["embeddings.word.weight"][tok] + P["embeddings.position.weight"][:L][None]
    h = ln(h, P["embeddings.norm.weight"], P["embeddings.norm.bias"], eps)
    h = h * torch.tensor(drop_keep, dtype=torch.float64).view(Bn, L, d) / (1 - p)
    mask = torch.zeros(Bn, 1, L, L)
    for i, l in enumerate(lens): mask[i, 0, :, l:] = -math.inf
    for li in range(m["n_layers"]):
        pf = f"layers.{li}."
        x = ln(h, P[pf+"norm1.weight"], P[pf+"norm1.bias"], eps)
        q, k, v = (lin(P, pf+"attn."+z, x).view(Bn, L, H, dh).transpose(1, 2) for z in "qkv")
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + mask, -1)
        h = h + lin(P, pf+"attn.o", (a @ v).transpose(1, 2).reshape(Bn, L, d))
        x = ln(h, P[pf+"norm2.weight"], P[pf+"norm2.bias"], eps)
        g = lin(P, pf+"ffn1", x); g = 0.5*g*(1+torch.tanh(math.sqrt(2/math.pi)*(g+0.044715*g**3)))
        h = h + lin(P, pf+"ffn2", g)
    x = lin(P, "mlm.dense", h); x = 0.5*x*(1+torch.erf(x/math.sqrt(2)))
    x = ln(x, P["mlm.norm.weight"], P["mlm.norm.bias"], eps)
    logits = x @ P["embeddings.word.weight"].T + P["mlm.bias"]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             torch.tensor(labs).reshape(-1), ignore_index=-100).item()

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
W = WORK
if True:
    import random
    random.seed(0); words = "the cat dog sat on mat ran fast slow big small red blue".split()
    docs = [" ".join(random.choice(words) for _ in range(random.randint(3, 10))) for _ in range(60)]
    open(f"{W}/c.txt", "w").write("\n".join(docs) + "\n")
    seed, p, std, Bsz, L, d = 1234, 0.1, 0.02, 4, 16, 16
    cfg = {"model": {"arch": "bert", "d_model": d, "n_layers": 1, "max_len": L, "n_heads": 2, "dropout": p, "init_std": std},
           "tokenizer": {"kind": "bytes"}, "data": {"train": f"{W}/c.txt", "seq_len": L},
           "train": {"batch_size": Bsz, "steps": 1, "warmup_steps": 0, "eval_every": 0, "checkpoint_every": 0, "threads": 1, "seed": seed}}
    json.dump(cfg, open(f"{W}/c.json", "w"))
    subprocess.run([CLI, "train", "--config", f"{W}/c.json", "--out", f"{W}/s0", "--set", "train.steps=0"], check=True, capture_output=True)
    out = subprocess.run([CLI, "train", "--config", f"{W}/c.json", "--out", f"{W}/s1", "--json"], check=True, capture_output=True, text=True).stdout
    logged = [json.loads(l) for l in out.splitlines() if '"type":"step"' in l][0]["loss"]
    f = h5py.File(f"{W}/s0/model.ckpt.h5", "r"); ck = json.loads(f["config"].attrs["json"])
    P = {k: torch.tensor(f["params"][k][()].astype(np.float64)) for k in f["params"]}
    W0 = f["params"]["embeddings.word.weight"][()].ravel()
    # 1. the init of tensor 0 from (seed, step 0, stream 0)
    n = 600
    u = lambda b: (b + 0.5) / 4294967296.0
    pred = np.array([np.float32(std * math.sqrt(-2 * math.log(u(bits(seed, 0, 0, 2*i)))) * math.cos(2 * math.pi * u(bits(seed, 0, 0, 2*i+1)))) for i in range(n)])
    init_ok = np.array_equal(pred, W0[:n])
    print("1. embeddings.word.weight[:600] == Box-Muller of philox(seed, step 0, stream 0):", init_ok)
    # 2. the step-1 loss with the dropout mask philox(seed, 0, 0, k)
    tr = [x for i, x in enumerate(docs) if i % 20 != 19]
    stream = []
    for x in tr: stream += [5 + b for b in x.encode()] + [3]
    seqs = [[2] + stream[a:a + L - 1] for a in range(0, len(stream), L - 1)]
    pm = perm(len(seqs), seed, 0); rows = []; labs = []
    for b in range(Bsz):
        s = seqs[pm[b]]; i, l = mlm_mask(s + [0] * (L - len(s)), len(s), seed, 0, b, 0.15)
        rows.append(i[:len(s)]); labs.append(l)
    DROPOUT_SALT = 0x64726F706F757431  # ASCII "dropout1"
    def mask(s):
        return [1.0 if (bits(s, 0, 0, k) >> 8) / 16777216.0 >= p else 0.0 for k in range(Bsz * L * d)]
    salted = mlm_loss(ck, P, rows, labs, L, mask(seed ^ DROPOUT_SALT))
    unsalted = mlm_loss(ck, P, rows, labs, L, mask(seed))
    print(f"logged step-1 loss {logged!r}; torch with the salted mask {salted!r}, with the "
          f"initialisation's words as the mask {unsalted!r}")
    problems = []
    if not init_ok:
        problems.append("embeddings.word.weight is not the documented Box-Muller draw")
    if abs(salted - logged) > 1e-6 * abs(logged):
        problems.append(f"the logged loss {logged} is not the forward with the documented mask ({salted})")
    if abs(unsalted - logged) <= 1e-4:
        problems.append("the logged loss is the forward whose mask reuses the initialisation's words")
    print("FAIL: " + "; ".join(problems) if problems else "PASS")
    sys.exit(1 if problems else 0)
