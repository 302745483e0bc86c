#!/usr/bin/python3
"""Self-tests of the PyTorch reference: each checks one statement of MODELS.md, CHECKPOINT_FORMAT.md
or docs/config.md against an independent computation (a numpy loop, a direct convolution, a closed
form, finite differences, the numbers MODELS.md prints). Run by CTest as `reference_selftest`:

    /usr/bin/python3 tests/reference/selftest.py [-v] [TestCase.test_name]
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from routescope_ref import adamw, batch as batch_mod, checkpoint, config as config_mod, ssm  # noqa: E402
from routescope_ref.errors import CheckpointError, ConfigError  # noqa: E402
from routescope_ref.models import GatedSSMBlock, Model  # noqa: E402
from routescope_ref.objective import logits_and_loss  # noqa: E402

torch.set_num_threads(1)
ARCHS = ("bigs", "stack_ssm", "gated_att", "bert")


def tiny_config(arch, **model):
    m = {"arch": arch, "vocab_size": 50, "d_model": 32, "n_layers": 2, "max_len": 16, "n_heads": 2,
         "ssm": {"n_modes": 8}}
    m.update(model)
    return config_mod.parse({"model": m, "train": {"steps": 6, "warmup_steps": 2, "lr": 3e-3, "ssm_lr": 1e-3}})


def tiny_mlm_batch(cfg, seed=0, B=3, L=16):
    r = np.random.default_rng(seed)
    V = cfg["model"]["vocab_size"]
    ids = r.integers(0, V, (B, L))
    lengths = np.array([L, L - 5, 4][:B])
    labels = np.full((B, L), -100)
    for b in range(B):
        chosen = r.choice(lengths[b], size=max(1, lengths[b] // 3), replace=False)
        labels[b, chosen] = r.integers(0, V, len(chosen))
    return ids, lengths, labels


class HippoInit(unittest.TestCase):
    def test_legs_magnitudes_for_64_modes_are_the_ones_models_md_prints(self):
        a = ssm.hippo_legs_imag(64)
        self.assertTrue(np.all(np.diff(a) >= 0), "ascending")
        np.testing.assert_allclose(a, -a[::-1], atol=1e-9, err_msg="they come in +- pairs")
        mags = np.abs(a[32:])  # the non-negative half, ascending
        np.testing.assert_allclose(np.round(mags[:4], 3), [0.264, 0.906, 1.703, 2.626])
        np.testing.assert_allclose(np.round(mags[-3:], 3), [258.152, 433.031, 1303.274])

    def test_lin_and_inv_inits_are_the_closed_forms(self):
        N = 8
        n = np.arange(N)
        np.testing.assert_allclose(ssm.a_im_init("lin", N), math.pi * n)
        np.testing.assert_allclose(ssm.a_im_init("inv", N), N / math.pi * (N / (2 * n + 1) - 1))

    def test_ssm_parameters_start_as_models_md_table(self):
        torch.manual_seed(0)
        s = ssm.SSM(d_model=4, n_kernels=2, n_modes=64, a_im="hippo", dt_min=0.01, dt_max=1.0)
        self.assertEqual(tuple(s.A_re.shape), (2, 64))
        self.assertEqual(tuple(s.C.shape), (2, 64, 2))
        self.assertTrue(torch.all(s.A_re == -0.5))
        self.assertTrue(torch.all(s.D == 1))
        np.testing.assert_allclose(s.A_im[1].detach().numpy(), ssm.hippo_legs_imag(64), rtol=1e-6)
        self.assertTrue(torch.all((s.log_step >= math.log(0.01)) & (s.log_step <= 0)))
        big = ssm.SSM(d_model=1, n_kernels=1, n_modes=20000, a_im="lin")
        self.assertAlmostEqual(big.C.std().item(), math.sqrt(0.5), delta=0.01)


def numpy_kernel(A_re, A_im, C, log_step, L):
    """MODELS.md's kernel as a plain loop over h, l, n in complex numpy."""
    H, N = A_re.shape
    K = np.zeros((H, L))
    for h in range(H):
        dt = math.exp(log_step[h])
        for l in range(L):
            acc = 0j
            for n in range(N):
                A = min(A_re[h, n], -1e-4) + 1j * A_im[h, n]
                acc += complex(C[h, n, 0], C[h, n, 1]) * (np.exp(dt * A) - 1) / A * np.exp(l * dt * A)
            K[h, l] = acc.real
    return K


def random_ssm_params(H=2, N=6, seed=0):
    r = np.random.default_rng(seed)
    A_re = -r.uniform(0.05, 1.0, (H, N))
    A_re[0, 1] = 0.3  # above the clip: acts as -1e-4
    A_im = r.uniform(-5, 5, (H, N))
    C = r.normal(0, 0.7, (H, N, 2))
    log_step = r.uniform(math.log(0.01), 0, H)
    return A_re, A_im, C, log_step


class S4DKernel(unittest.TestCase):
    def test_kernel_matches_a_plain_complex_loop(self):
        A_re, A_im, C, log_step = random_ssm_params()
        L = 20
        want = numpy_kernel(A_re, A_im, C, log_step, L)
        got = ssm.s4d_kernel(*(torch.tensor(x) for x in (A_re, A_im, C, log_step)), L).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)

    def test_kernel_in_float32_is_close_to_float64(self):
        A_re, A_im, C, log_step = random_ssm_params(seed=1)
        want = numpy_kernel(A_re, A_im, C, log_step, 32)
        got = ssm.s4d_kernel(*(torch.tensor(x, dtype=torch.float32) for x in (A_re, A_im, C, log_step)), 32)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)

    def test_kernel_gradient_passes_gradcheck_in_float64(self):
        A_re, A_im, C, log_step = random_ssm_params(seed=2)
        A_re[0, 1] = -0.3  # away from the clip's kink, where the derivative is one-sided
        inputs = tuple(torch.tensor(x, requires_grad=True) for x in (A_re, A_im, C, log_step))
        self.assertTrue(torch.autograd.gradcheck(lambda *p: ssm.s4d_kernel(*p, 12), inputs, eps=1e-6, atol=1e-7))

    def test_gradient_of_a_clipped_A_re_is_zero(self):
        A_re, A_im, C, log_step = random_ssm_params(seed=3)
        A_re[1, 2] = 0.2
        p = [torch.tensor(x, requires_grad=True) for x in (A_re, A_im, C, log_step)]
        ssm.s4d_kernel(*p, 10).sum().backward()
        self.assertEqual(p[0].grad[1, 2].item(), 0.0)
        self.assertNotEqual(p[0].grad[1, 3].item(), 0.0)

    def test_fft_convolution_equals_direct_causal_convolution_plus_skip(self):
        r = np.random.default_rng(4)
        B, L, d = 2, 13, 3
        u, K, D = r.normal(size=(B, L, d)), r.normal(size=(d, L)), r.normal(size=d)
        want = np.zeros((B, L, d))
        for b in range(B):
            for c in range(d):
                for t in range(L):
                    want[b, t, c] = sum(K[c, k] * u[b, t - k, c] for k in range(t + 1)) + D[c] * u[b, t, c]
        got = ssm.fft_conv(torch.tensor(u), torch.tensor(K), torch.tensor(D)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)

    def test_grouped_kernels_use_contiguous_channel_groups(self):
        torch.manual_seed(5)
        s = ssm.SSM(d_model=6, n_kernels=3, n_modes=4).double()
        u = torch.randn(1, 9, 6, dtype=torch.float64)
        y = s(u)
        K = s.kernel(9)
        for c in range(6):
            g = c // 2
            one = ssm.fft_conv(u[:, :, c:c + 1], K[g:g + 1], s.D[g:g + 1])
            torch.testing.assert_close(y[:, :, c:c + 1], one)


class Architecture(unittest.TestCase):
    def test_gated_block_has_13645316_parameters_at_d1024_I3072(self):
        cfg = config_mod.parse({"model": {"d_model": 1024, "d_inner": 3072}})
        block = GatedSSMBlock(cfg)
        self.assertEqual(sum(p.numel() for p in block.parameters()), 13_645_316)

    def test_parameter_counts_of_all_four_blocks_follow_the_readme_shapes(self):
        d, N = 64, 8
        ssm_params = 2 * (2 * N + 2 * N + 2)  # two SSMs: A_re, A_im, C, D, log_step (H = 1)
        dense = lambda i, o: i * o + o  # noqa: E731
        want = {
            "bigs": 2 * d + dense(d, 3 * d) + 4 * dense(d, d) + dense(d, 3 * d) + dense(3 * d, d) + ssm_params,
            "stack_ssm": 3 * 2 * d + 4 * dense(d, d) + ssm_params + dense(d, 4 * d) + dense(4 * d, d),
            "gated_att": 2 * d + dense(d, 3 * d) + dense(d, d) + 4 * dense(d, d) + dense(d, d)
            + dense(d, 3 * d) + dense(3 * d, d),
            "bert": 2 * 2 * d + 4 * dense(d, d) + dense(d, 4 * d) + dense(4 * d, d),
        }
        for arch, n in want.items():
            cfg = config_mod.parse({"model": {"arch": arch, "d_model": d, "n_layers": 1, "vocab_size": 10,
                                              "max_len": 8, "ssm": {"n_modes": N}}})
            layer = Model(cfg).layers[0]
            self.assertEqual(sum(p.numel() for p in layer.parameters()), n, arch)

    def test_state_dict_names_are_the_checkpoint_names(self):
        cfg = tiny_config("bigs", type_embeddings=True, n_labels=3)
        names = set(Model(cfg).state_dict())
        for name in ("embeddings.word.weight", "embeddings.position.weight", "embeddings.type.weight",
                     "embeddings.norm.weight", "layers.1.dv.weight", "layers.0.du_backward.bias",
                     "layers.0.duc_forward.weight", "layers.0.do.weight", "layers.0.ssm_forward.A_re",
                     "layers.1.ssm_backward.log_step", "mlm.dense.weight", "mlm.norm.bias", "mlm.bias",
                     "classifier.pool.weight", "classifier.out.bias"):
            self.assertIn(name, names)
        self.assertFalse(any("decoder" in n for n in names), "the MLM decoder is tied, not a parameter")

    def test_forward_ssm_branch_at_t_ignores_tokens_after_t(self):
        torch.manual_seed(6)
        cfg = tiny_config("bigs")
        model = Model(cfg).double().eval()
        captured = {}
        model.layers[0].duc_forward.register_forward_hook(lambda m, i, o: captured.__setitem__("Y_f", o))
        model.layers[0].duc_backward.register_forward_hook(lambda m, i, o: captured.__setitem__("Y_b", o))
        ids = torch.randint(0, 50, (1, 16))
        lengths = torch.tensor([16])
        model.encode(ids, lengths)
        y_f, y_b = captured["Y_f"].clone(), torch.flip(captured["Y_b"], [1]).clone()
        t = 7
        changed = ids.clone()
        changed[0, t + 1:] = (changed[0, t + 1:] + 1) % 50
        model.encode(changed, lengths)
        torch.testing.assert_close(captured["Y_f"][:, :t + 1], y_f[:, :t + 1], rtol=0, atol=1e-12)
        self.assertGreater((captured["Y_f"][:, t + 1:] - y_f[:, t + 1:]).abs().max().item(), 1e-6)
        # the backward branch (flipped back to text order) at positions <= t sees the change
        self.assertGreater((torch.flip(captured["Y_b"], [1])[:, :t + 1] - y_b[:, :t + 1]).abs().max().item(), 1e-6)

    def test_causal_variants_at_t_ignore_tokens_after_t(self):
        # model.causal: every output at positions <= t is the same whatever the tokens after t (the
        # reference's SSM convolution is an FFT too, so float64 rounding, not exact zeros).
        torch.manual_seed(8)
        for arch in ("bigs", "stack_ssm", "gated_att", "bert"):
            model = Model(tiny_config(arch, causal=True)).double().eval()
            if arch in ("bigs", "stack_ssm"):  # no backward branch, none of its parameters
                names = [n for n, _ in model.named_parameters()]
                self.assertFalse([n for n in names if "backward" in n or ".norm2." in n], arch)
            ids = torch.randint(0, 50, (2, 16))
            lengths = torch.tensor([16, 12])
            h1, _ = model.encode(ids, lengths)
            t = 7
            changed = ids.clone()
            changed[:, t + 1:] = (changed[:, t + 1:] + 1) % 50
            h2, _ = model.encode(changed, lengths)
            torch.testing.assert_close(h2[:, :t + 1], h1[:, :t + 1], rtol=0, atol=1e-12, msg=arch)
            self.assertGreater((h2[:, t + 1:] - h1[:, t + 1:]).abs().max().item(), 1e-6, arch)
        with self.assertRaisesRegex(ConfigError, r"^model\.causal: .*model\.gmlp\.causal"):
            tiny_config("gmlp", causal=True)

    def test_attention_models_ignore_padding_and_bigs_does_not(self):
        torch.manual_seed(7)
        for arch, pads_matter in (("bigs", True), ("stack_ssm", True), ("gated_att", False), ("bert", False)):
            model = Model(tiny_config(arch)).double().eval()
            ids = torch.randint(0, 50, (1, 16))
            lengths = torch.tensor([10])
            h1, _ = model.encode(ids, lengths)
            other = ids.clone()
            other[0, 10:] = (other[0, 10:] + 3) % 50
            h2, _ = model.encode(other, lengths)
            diff = (h1[:, :10] - h2[:, :10]).abs().max().item()
            if pads_matter:
                self.assertGreater(diff, 1e-8, f"{arch}: no mask inside SSM blocks, pads flow into valid positions")
            else:
                self.assertLess(diff, 1e-12, f"{arch}: padding keys are masked")

    def test_loss_gradient_matches_central_differences_for_every_architecture(self):
        for arch in ARCHS:
            torch.manual_seed(8)
            cfg = tiny_config(arch, n_labels=3, d_model=16, n_layers=1)
            model = Model(cfg).double().eval()
            ids, lengths, labels = tiny_mlm_batch(cfg, B=2, L=8)
            batch = {"input_ids": torch.tensor(ids), "lengths": torch.tensor(lengths),
                     "labels": torch.tensor(labels), "token_type_ids": None}
            _, loss = logits_and_loss(model, batch)
            loss.backward()
            params = dict(model.named_parameters())
            probes = [("embeddings.word.weight", (int(ids[0, 0]), 1)), ("mlm.bias", (int(labels[labels >= 0][0]),)),
                      ("layers.0.ffn1.weight" if "ffn1.weight" in str(params.keys()) else "layers.0.dv.weight", (2, 3))]
            if arch in ("bigs", "stack_ssm"):
                probes += [("layers.0.ssm_forward.log_step", (0,)), ("layers.0.ssm_backward.A_im", (0, 3))]
            for name, idx in probes:
                p = params[name]
                with torch.no_grad():
                    old = p[idx].item()
                    p[idx] = old + 1e-6
                    up = logits_and_loss(model, batch)[1].item()
                    p[idx] = old - 1e-6
                    down = logits_and_loss(model, batch)[1].item()
                    p[idx] = old
                fd = (up - down) / 2e-6
                self.assertAlmostEqual(p.grad[idx].item(), fd, delta=1e-6 + 1e-5 * abs(fd), msg=f"{arch} {name}{idx}")


class Configuration(unittest.TestCase):
    def test_unknown_key_is_an_error_naming_the_key(self):
        with self.assertRaisesRegex(ConfigError, r"^model\.d_modle: unknown key$"):
            config_mod.parse({"model": {"d_modle": 3}})
        with self.assertRaisesRegex(ConfigError, r"model\.ssm\.modes: unknown key"):
            config_mod.parse('{"model": {"ssm": {"modes": 3}}}')

    def test_defaults_and_derived_values(self):
        cfg = config_mod.parse({})
        self.assertEqual(cfg["model"]["ln_eps"], 1e-12)
        self.assertEqual(config_mod.d_inner(cfg), 3 * 256)
        self.assertEqual(config_mod.n_heads(cfg), 4)
        self.assertEqual(config_mod.ssm_lr(cfg), 5e-4)
        self.assertEqual(config_mod.d_inner(config_mod.parse({"model": {"arch": "bert"}})), 4 * 256)
        self.assertEqual(config_mod.n_heads(config_mod.parse({"model": {"d_model": 32}})), 1)

    def test_bad_values_name_the_key(self):
        for bad, key in (({"model": {"arch": "lstm"}}, "model.arch"), ({"train": {"lr": "fast"}}, "train.lr"),
                         ({"model": {"ssm": {"n_kernels": 3}}}, "model.ssm.n_kernels"),
                         ({"train": {"betas": [0.9]}}, "train.betas"), ({"model": {"d_model": True}}, "model.d_model")):
            with self.assertRaisesRegex(ConfigError, "^" + key.replace(".", r"\.")):
                config_mod.parse(bad)

    def test_set_override(self):
        cfg = config_mod.apply_override(config_mod.parse({}), "model.ssm.n_modes=32")
        self.assertEqual(cfg["model"]["ssm"]["n_modes"], 32)
        with self.assertRaisesRegex(ConfigError, "train.stepz: unknown key"):
            config_mod.apply_override(cfg, "train.stepz=3")


class Optimizer(unittest.TestCase):
    def test_parameter_groups_follow_docs_config(self):
        cases = {"layers.0.dv.weight": "decay", "layers.0.attn.q.weight": "decay", "mlm.dense.weight": "decay",
                 "classifier.pool.weight": "decay", "classifier.out.weight": "decay", "layers.0.ffn2.weight": "decay",
                 "layers.0.dv.bias": "no_decay", "layers.0.norm.weight": "no_decay", "layers.2.norm3.weight": "no_decay",
                 "embeddings.word.weight": "no_decay", "embeddings.position.weight": "no_decay",
                 "embeddings.norm.weight": "no_decay", "mlm.norm.weight": "no_decay", "mlm.bias": "no_decay",
                 "layers.0.ssm_forward.C": "ssm", "layers.3.ssm_backward.D": "ssm"}
        for name, group in cases.items():
            self.assertEqual(adamw.group_of(name), group, name)

    def test_schedule_is_linear_warmup_then_cosine_to_zero(self):
        cfg = config_mod.parse({"train": {"warmup_steps": 4, "steps": 14, "schedule": "cosine"}})
        self.assertEqual([adamw.lr_factor(s, cfg) for s in range(4)], [0.25, 0.5, 0.75, 1.0])
        self.assertAlmostEqual(adamw.lr_factor(9, cfg), 0.5)
        self.assertAlmostEqual(adamw.lr_factor(14, cfg), 0.0)
        lin = config_mod.apply_override(cfg, "train.schedule=linear")
        self.assertAlmostEqual(adamw.lr_factor(6, lin), 0.8)
        const = config_mod.apply_override(cfg, "train.schedule=constant")
        self.assertEqual(adamw.lr_factor(12, const), 1.0)

    def test_one_adamw_step_matches_the_closed_form(self):
        cfg = tiny_config("bigs")
        model = Model(cfg).double()
        opt = adamw.make_optimizer(model, cfg)
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        for p in model.parameters():
            p.grad = torch.full_like(p, 0.5)
        f = adamw.set_lr(opt, 0, cfg)
        opt.step()
        t = cfg["train"]
        for name, p in model.named_parameters():
            group = adamw.group_of(name)
            lr = f * (t["ssm_lr"] if group == "ssm" else t["lr"])
            wd = t["weight_decay"] if group == "decay" else 0.0
            # first step: m_hat = g, v_hat = g^2 -> update = g / (|g| + eps)
            want = before[name] * (1 - lr * wd) - lr * 0.5 / (0.5 + t["eps"])
            torch.testing.assert_close(p.detach(), want, rtol=1e-12, atol=1e-14, msg=name)

    def test_clip_scales_to_the_global_norm(self):
        model = Model(tiny_config("bert"))
        for p in model.parameters():
            p.grad = torch.ones_like(p)
        n = sum(p.numel() for p in model.parameters())
        self.assertAlmostEqual(adamw.clip(model, 1.0), math.sqrt(n), places=3)
        self.assertAlmostEqual(adamw.grad_norm(model), 1.0, delta=1e-5)


class Checkpoint(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "m.ckpt.h5")
        torch.manual_seed(9)
        self.cfg = tiny_config("bigs", type_embeddings=True)
        self.model = Model(self.cfg)
        self.params = dict(self.model.named_parameters())

    def tearDown(self):
        self.dir.cleanup()

    def test_write_then_read_round_trips_everything(self):
        m = {n: torch.randn_like(p) for n, p in self.params.items()}
        v = {n: torch.rand_like(p) for n, p in self.params.items()}
        checkpoint.write(self.path, self.cfg, self.params, tokenizer_kind="sentencepiece", tokenizer_model=b"\x00abc",
                         train={"step": 7, "tokens_seen": 99, "rng_state": [1, 2, 2**63], "data_position": 5,
                                "adam_m": m, "adam_v": v})
        self.assertEqual(os.listdir(self.dir.name), ["m.ckpt.h5"], "no temporary file left behind")
        ck = checkpoint.read(self.path)
        self.assertEqual(ck["config"], self.cfg)
        for n, p in self.params.items():
            np.testing.assert_array_equal(ck["params"][n], p.detach().numpy())
            np.testing.assert_array_equal(ck["train"]["adam_v"][n], v[n].numpy())
        self.assertEqual(ck["tokenizer"], {"kind": "sentencepiece", "model": b"\x00abc"})
        self.assertEqual(ck["train"]["step"], 7)
        self.assertEqual(list(ck["train"]["rng_state"]), [1, 2, 2**63])
        with h5py.File(self.path) as f:
            self.assertEqual(f.attrs["format"], "routescope-checkpoint")
            self.assertEqual(f.attrs["format_version"], 1)
            self.assertEqual(f["params/layers.0.dv.weight"].dtype, np.float32)
            self.assertEqual(json.loads(f["config"].attrs["json"]), self.cfg)

    def test_bytes_is_the_tokenizer_kind_by_default(self):
        checkpoint.write(self.path, self.cfg, self.params)
        self.assertEqual(checkpoint.read(self.path)["tokenizer"], {"kind": "bytes", "model": None})

    def test_reader_rejects_bad_files_naming_the_dataset(self):
        def broken(mutate, pattern):
            checkpoint.write(self.path, self.cfg, self.params)
            with h5py.File(self.path, "a") as f:
                mutate(f)
            with self.assertRaisesRegex(CheckpointError, pattern):
                checkpoint.read(self.path)

        broken(lambda f: f["params"].__delitem__("layers.1.dol.bias"), r"/params/layers\.1\.dol\.bias: missing")
        broken(lambda f: (f["params"].__delitem__("mlm.bias"), f["params"].create_dataset("mlm.bias", data=np.zeros(7, np.float32))),
               r"/params/mlm\.bias: shape \[7\] disagrees with /config")
        broken(lambda f: f["params/mlm.bias"].__setitem__(0, np.nan), r"/params/mlm\.bias: non-finite")
        broken(lambda f: f.attrs.__setitem__("format_version", 2), "unknown format_version 2")
        broken(lambda f: f["config"].attrs.__setitem__("json", '{"model": {"d_modle": 1}}'), r"model\.d_modle: unknown key")
        broken(lambda f: f["params"].create_dataset("layers.9.dv.weight", data=np.zeros(2, np.float32)),
               r"/params/layers\.9\.dv\.weight: unexpected parameter")
        with open(self.path, "wb") as f:
            f.write(b"not hdf5")
        with self.assertRaisesRegex(CheckpointError, "cannot open"):
            checkpoint.read(self.path)


class ParityCli(unittest.TestCase):
    """parity.py end to end on a tiny model of each architecture."""

    @classmethod
    def setUpClass(cls):
        import parity
        cls.parity = parity
        cls.dir = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_arch(self, arch, float64=False, classify=False, subprocess_cli=False, **model):
        d = self.dir.name
        cfg = tiny_config(arch, n_labels=3 if classify else 0, **model)
        run_json = os.path.join(d, f"{arch}.json")
        with open(run_json, "w") as f:
            json.dump(cfg, f)
        ck, bt, out = (os.path.join(d, f"{arch}.{x}") for x in ("ckpt.h5", "batch.h5", "result.h5"))
        ids, lengths, labels = tiny_mlm_batch(cfg)
        if classify:
            batch_mod.write(bt, ids, lengths, class_labels=[0, 2, 1])
        else:
            batch_mod.write(bt, ids, lengths, labels=labels)
        steps = 6
        init_args = ["--init", "--config", run_json, "--out", ck, "--seed", "3"]
        run_args = ["--checkpoint", ck, "--batch", bt, "--out", out, "--steps", str(steps)] + (["--float64"] if float64 else [])
        if subprocess_cli:
            for args in (init_args, run_args):
                subprocess.run([sys.executable, os.path.join(HERE, "parity.py")] + args, check=True)
        else:
            self.assertEqual(self.parity.main(init_args), 0)
            self.assertEqual(self.parity.main(run_args), 0)
        model, _ = checkpoint.load_model(ck)
        with h5py.File(out) as f:
            B, L = ids.shape
            want = (B, 3) if classify else (B, L, cfg["model"]["vocab_size"])
            self.assertEqual(f["logits"].shape, want)
            self.assertEqual(f["logits"].dtype, np.float64 if float64 else np.float32)
            losses = f["step_losses"][()]
            self.assertEqual(losses.shape, (steps,))
            self.assertEqual(losses[0], f["loss"][()])
            self.assertLess(losses[-1], losses[0], f"{arch}: six AdamW steps on one batch lower its loss")
            names = [n for n, _ in model.named_parameters()]
            self.assertEqual(sorted(f["grads"]), sorted(names))
            self.assertEqual(sorted(f["params_after"]), sorted(names))
            for n, p in model.named_parameters():
                self.assertEqual(f["grads"][n].shape, tuple(p.shape))
            self.assertGreater(np.abs(f["grads/embeddings.word.weight"][()]).sum(), 0)
            np.testing.assert_allclose(f["step_lrs"][()][:2], [1.5e-3, 3e-3], rtol=1e-6)
            # the loss is the mean over target tokens: recompute it from the logits
            logits = f["logits"][()].astype(np.float64)
            if not classify:
                z = logits - logits.max(-1, keepdims=True)
                logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
                mask = labels >= 0
                nll = -logp[mask, labels[mask]].mean()
                self.assertAlmostEqual(nll, float(f["loss"][()]), delta=1e-5)
        return out

    def test_bigs_through_the_command_line(self):
        self.run_arch("bigs", subprocess_cli=True)

    def test_stack_ssm(self):
        self.run_arch("stack_ssm")

    def test_gated_att(self):
        self.run_arch("gated_att")

    def test_bert(self):
        self.run_arch("bert")

    def test_float64_and_grouped_kernels(self):
        self.run_arch("bigs", float64=True, ssm={"n_modes": 8, "n_kernels": 4})

    def test_classification_heads(self):
        for pool in ("mean", "first"):
            self.run_arch("bert", classify=True, pool=pool)

    def test_resume_continues_the_same_trajectory(self):
        """6 straight steps = 3 steps, a checkpoint with /train (params, moments, step), --resume 3 more."""
        d = self.dir.name
        straight = self.run_arch("stack_ssm", float64=True)
        cfg = tiny_config("stack_ssm")
        ck, bt = os.path.join(d, "stack_ssm.ckpt.h5"), os.path.join(d, "stack_ssm.batch.h5")
        half, rest = os.path.join(d, "half.h5"), os.path.join(d, "rest.h5")
        self.assertEqual(self.parity.main(["--checkpoint", ck, "--batch", bt, "--out", half, "--steps", "3", "--float64"]), 0)
        mid = os.path.join(d, "mid.ckpt.h5")
        with h5py.File(half) as f:
            params = {n: f["params_after"][n][()] for n in f["params_after"]}
            train = {"step": 3, "adam_m": {n: f["adam_m"][n][()] for n in params},
                     "adam_v": {n: f["adam_v"][n][()] for n in params}}
        checkpoint.write(mid, cfg, params, train=train)
        self.assertEqual(self.parity.main(["--checkpoint", mid, "--batch", bt, "--out", rest, "--steps", "3",
                                           "--float64", "--resume"]), 0)
        with h5py.File(straight) as a, h5py.File(rest) as b:
            np.testing.assert_allclose(b["step_lrs"][()], a["step_lrs"][3:], rtol=1e-12)
            # the checkpoint stores float32, so the resumed run starts from rounded parameters
            np.testing.assert_allclose(b["step_losses"][()], a["step_losses"][3:], rtol=1e-5)

    def test_bench_train_prints_one_json_line_of_throughput(self):
        import contextlib
        import io
        import bench_train
        run_json = os.path.join(self.dir.name, "bench.json")
        cfg = tiny_config("bigs")
        cfg["data"]["seq_len"], cfg["train"]["batch_size"] = 16, 2
        with open(run_json, "w") as f:
            json.dump(cfg, f)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(bench_train.main(["--config", run_json, "--steps", "2", "--warmup", "1", "--threads", "1"]), 0)
        result = json.loads(out.getvalue())
        self.assertEqual(result["tokens_per_step"], 32)
        self.assertGreater(result["tokens_per_s"], 0)
        self.assertTrue(math.isfinite(result["final_loss"]))

    def test_bad_checkpoint_exits_2_with_a_message(self):
        bad = os.path.join(self.dir.name, "bad.ckpt.h5")
        with open(bad, "w") as f:
            f.write("x")
        self.assertEqual(self.parity.main(["--checkpoint", bad, "--batch", bad, "--out", bad + ".out"]), 2)


if __name__ == "__main__":
    unittest.main()
