#!/usr/bin/env python3
"""Tests of torch_baseline.py without PyTorch: a small stand-in torch module over numpy
runs the script's CPU path, and the graphs' math is checked against properties every
correct implementation has (normalized rows, rows of probabilities, exact sums). Exits 77
(skipped) when numpy is missing."""

import json
import math
import os
import sys
import tempfile
import types
import unittest

try:
    import numpy as np
except ImportError:  # the stand-in needs numpy
    print("numpy is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def round_to_bf16(values):
    """float32 -> nearest bfloat16 (ties to even), kept in float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


class FakeDtype:
    def __init__(self, name, numpy_dtype):
        self.name = name
        self.numpy_dtype = numpy_dtype

    def __repr__(self):
        return "torch." + self.name


float32 = FakeDtype("float32", np.float32)
float64 = FakeDtype("float64", np.float64)
bfloat16 = FakeDtype("bfloat16", np.float32)  # stored as float32 values rounded to bf16
uint8 = FakeDtype("uint8", np.uint8)
boolean = FakeDtype("bool", np.bool_)


class Tensor:
    def __init__(self, array, dtype):
        self.array = np.asarray(array, dtype=dtype.numpy_dtype)
        if dtype is bfloat16:
            self.array = round_to_bf16(self.array)
        self.dtype = dtype

    def _wrap(self, array):
        # Arithmetic on bf16 tensors happens in float32 in these graphs (they upcast first).
        return Tensor(array, self.dtype if self.dtype is not bfloat16 else float32)

    def _other(self, other):
        return other.array if isinstance(other, Tensor) else other

    def __add__(self, other):
        return self._wrap(self.array + self._other(other))

    def __sub__(self, other):
        return self._wrap(self.array - self._other(other))

    def __mul__(self, other):
        return self._wrap(self.array * self._other(other))

    def __truediv__(self, other):
        return self._wrap(self.array / self._other(other))

    __radd__ = __add__
    __rmul__ = __mul__

    def __gt__(self, other):
        return Tensor(self.array > self._other(other), boolean)

    def __and__(self, other):
        return Tensor(self.array & self._other(other), boolean)

    def float(self):
        return Tensor(self.array, float32)

    def to(self, dtype=None, device=None):
        return Tensor(self.array, dtype or self.dtype)

    def detach(self):
        return self

    def clone(self):
        return Tensor(self.array.copy(), self.dtype)

    def mean(self, dim, keepdim=False):
        return self._wrap(self.array.mean(axis=dim, keepdims=keepdim))

    def sum(self, dim, keepdim=False):
        return self._wrap(self.array.sum(axis=dim, keepdims=keepdim))

    def amax(self, dim, keepdim=False):
        return self._wrap(self.array.max(axis=dim, keepdims=keepdim))

    def fill_(self, value):
        self.array.fill(value)
        return self

    def copy_(self, other):
        self.array[...] = other.array
        return self


def foreach_operand(other, i):
    """The i-th operand of a multi-tensor operation: a scalar, or a list's i-th tensor."""
    if isinstance(other, (list, tuple)):
        other = other[i]
    return other.array if isinstance(other, Tensor) else other


def foreach_in_place(operation):
    """torch._foreach_<op>_(tensors, other): tensors[i] = operation(tensors[i], other's i-th)."""
    def apply(tensors, *others, **keywords):
        for i, t in enumerate(tensors):
            t.array[...] = operation(t.array, *(foreach_operand(o, i) for o in others), **keywords)
    return apply


def foreach_copy(operation):
    """torch._foreach_<op>(tensors, other): new tensors, the inputs unchanged."""
    def apply(tensors, *others, **keywords):
        copies = [t.clone() for t in tensors]
        foreach_in_place(operation)(copies, *others, **keywords)
        return copies
    return apply


def add(a, b, alpha=1):
    return a + alpha * b


class Generator:
    def __init__(self, device="cpu"):
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)


class FakeAdamW:
    """torch.optim.AdamW over stand-in tensors: the textbook update, and the implementation
    asked for (foreach or fused) kept for the tests to see."""

    created = []

    def __init__(self, params, lr, betas, eps, weight_decay, foreach=None, fused=None):
        self.params, self.lr, self.betas, self.eps, self.weight_decay = params, lr, betas, eps, weight_decay
        self.implementation = "fused" if fused else "foreach" if foreach else "default"
        self.moments = [(np.zeros_like(p.array), np.zeros_like(p.array)) for p in params]
        self.steps = 0
        FakeAdamW.created.append(self)

    def step(self):
        self.steps += 1
        beta1, beta2 = self.betas
        for p, (m, v) in zip(self.params, self.moments):
            g = p.grad.array
            p.array *= 1 - self.lr * self.weight_decay
            m[...] = beta1 * m + (1 - beta1) * g
            v[...] = beta2 * v + (1 - beta2) * g * g
            m_hat, v_hat = m / (1 - beta1**self.steps), v / (1 - beta2**self.steps)
            p.array -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def make_fake_torch(failing_compile_graph):
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0-stand-in"
    torch.float32, torch.float64, torch.bfloat16, torch.uint8 = float32, float64, bfloat16, uint8
    torch.Generator = Generator
    torch.rand = lambda shape, generator, dtype: Tensor(generator.rng.random(shape), dtype)
    torch.empty = lambda n, dtype, device: Tensor(np.zeros(n), dtype)
    torch.empty_like = lambda t: Tensor(np.zeros_like(t.array), t.dtype)
    torch.exp = lambda t: t._wrap(np.exp(t.array))
    torch.log = lambda t: t._wrap(np.log(t.array))
    torch.rsqrt = lambda t: t._wrap(1.0 / np.sqrt(t.array))
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    torch.linalg = types.SimpleNamespace(vector_norm=lambda t: float(np.linalg.norm(t.array.ravel())))
    erf = np.vectorize(math.erf)
    gelu = lambda t: t._wrap(t.array * 0.5 * (1.0 + erf(t.array / math.sqrt(2.0))))  # noqa: E731

    def group_norm(t, groups, weight, bias, eps):
        a = t.array.astype(np.float64)
        v = a.reshape(a.shape[0], groups, -1)
        v = (v - v.mean(axis=2, keepdims=True)) / np.sqrt(v.var(axis=2, keepdims=True) + eps)
        channel = (1, a.shape[1]) + (1,) * (a.ndim - 2)
        return Tensor(v.reshape(a.shape) * weight.array.reshape(channel) + bias.array.reshape(channel), t.dtype)

    def batch_norm(t, running_mean, running_var, weight, bias, training, eps):
        assert training and running_mean is None and running_var is None
        a = t.array.astype(np.float64)
        axes = (0,) + tuple(range(2, a.ndim))
        v = (a - a.mean(axis=axes, keepdims=True)) / np.sqrt(a.var(axis=axes, keepdims=True) + eps)
        channel = (1, a.shape[1]) + (1,) * (a.ndim - 2)
        return Tensor(v * weight.array.reshape(channel) + bias.array.reshape(channel), t.dtype)

    def instance_norm(t, running_mean, running_var, weight, bias, use_input_stats, eps):
        assert use_input_stats and running_mean is None and running_var is None
        a = t.array.astype(np.float64)
        axes = tuple(range(2, a.ndim))
        v = (a - a.mean(axis=axes, keepdims=True)) / np.sqrt(a.var(axis=axes, keepdims=True) + eps)
        channel = (1, a.shape[1]) + (1,) * (a.ndim - 2)
        return Tensor(v * weight.array.reshape(channel) + bias.array.reshape(channel), t.dtype)

    torch.nn = types.SimpleNamespace(
        functional=types.SimpleNamespace(gelu=gelu, group_norm=group_norm, batch_norm=batch_norm,
                                         instance_norm=instance_norm),
        Parameter=lambda t: t)
    torch.optim = types.SimpleNamespace(AdamW=FakeAdamW)
    torch._foreach_mul_ = foreach_in_place(lambda a, b: a * b)
    torch._foreach_add_ = foreach_in_place(add)
    torch._foreach_addcmul_ = foreach_in_place(lambda a, b, c, value=1: a + value * b * c)
    torch._foreach_div_ = foreach_in_place(lambda a, b: a / b)
    torch._foreach_sqrt_ = foreach_in_place(np.sqrt)
    torch._foreach_div = foreach_copy(lambda a, b: a / b)
    torch._foreach_norm = lambda tensors: [Tensor(np.linalg.norm(t.array.ravel()), t.dtype) for t in tensors]
    torch.stack = lambda tensors: Tensor(np.stack([t.array for t in tensors]), tensors[0].dtype)
    torch.unbind = lambda t: tuple(Tensor(a, t.dtype) for a in t.array)
    torch.ones_like = lambda t: Tensor(np.ones_like(t.array), t.dtype)
    torch.where = lambda c, a, b: Tensor(np.where(c.array, a.array, b.array), a.dtype)

    def compile(fn, dynamic=None, mode=None):
        if fn.__name__ == failing_compile_graph:
            raise RuntimeError("stand-in compiler failure\nsecond line")
        return fn

    torch.compile = compile
    return torch


class TorchBaselineTest(unittest.TestCase):
    def setUp(self):
        self.torch = make_fake_torch("gelu_bias")
        sys.modules["torch"] = self.torch
        import torch_baseline

        self.baseline = torch_baseline
        self.graphs = torch_baseline.torch_graphs(self.torch)

    def tearDown(self):
        sys.modules.pop("torch", None)

    def tensor(self, array, dtype=float32):
        return Tensor(np.asarray(array, dtype=np.float64), dtype)

    def test_normalizations_give_unit_rows(self):
        rng = np.random.default_rng(3)
        x = self.tensor(rng.uniform(-2, 2, (4, 64)))
        ones, zeros = self.tensor(np.ones(64)), self.tensor(np.zeros(64))
        (y,) = self.graphs["layer_norm"](x, ones, zeros)
        np.testing.assert_allclose(y.array.mean(axis=-1), 0, atol=1e-5)
        np.testing.assert_allclose(y.array.var(axis=-1), 1, rtol=1e-3)
        (r,) = self.graphs["rms_norm"](x, ones)
        np.testing.assert_allclose((r.array * r.array).mean(axis=-1), 1, rtol=1e-4)
        bias, residual = self.tensor(rng.uniform(-1, 1, 64)), self.tensor(rng.uniform(-1, 1, (4, 64)))
        y2, h = self.graphs["bias_residual_layer_norm"](x, bias, residual, ones, zeros)
        np.testing.assert_allclose(h.array, x.array + bias.array + residual.array, rtol=1e-6)
        np.testing.assert_allclose(y2.array.mean(axis=-1), 0, atol=1e-5)

    def test_softmaxes_give_probabilities(self):
        rng = np.random.default_rng(4)
        x = self.tensor(rng.uniform(-2, 2, (3, 32)))
        mask = self.tensor(np.zeros((3, 32)))
        (p,) = self.graphs["softmax_scale_mask"](x, mask)
        np.testing.assert_allclose(p.array.sum(axis=-1), 1, rtol=1e-5)
        scaled = x.array * 0.125
        expected = np.exp(scaled) / np.exp(scaled).sum(axis=-1, keepdims=True)
        np.testing.assert_allclose(p.array, expected, rtol=1e-5)
        (lp,) = self.graphs["log_softmax"](x)
        np.testing.assert_allclose(np.exp(lp.array).sum(axis=-1), 1, rtol=1e-5)

    def test_gelu_bias_and_bf16_round_trip(self):
        x = self.tensor([[0.0, 3.0, -3.0]], bfloat16)
        bias = self.tensor([0.0, 0.0, 0.0], bfloat16)
        (y,) = self.graphs["gelu_bias"](x, bias)
        self.assertIs(y.dtype, bfloat16)
        self.assertEqual(y.array[0, 0], 0.0)
        self.assertAlmostEqual(float(y.array[0, 1]), 3.0, delta=0.02)
        self.assertAlmostEqual(float(y.array[0, 2]), 0.0, delta=0.01)

    def test_reductions_sum_over_their_axis(self):
        rng = np.random.default_rng(5)
        dy = self.tensor(rng.uniform(-2, 2, (6, 5)))
        (db,) = self.graphs["bias_grad_column_sum"](dy)
        np.testing.assert_allclose(db.array, dy.array.sum(axis=0), rtol=1e-6)
        x = self.tensor(rng.uniform(-2, 2, (2, 7, 3)), bfloat16)
        (y,) = self.graphs["middle_axis_sum"](x)
        self.assertIs(y.dtype, bfloat16)
        self.assertEqual(y.array.shape, (2, 3))
        np.testing.assert_allclose(y.array, x.array.sum(axis=1), rtol=1e-2)
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("bias_grad_column_sum", 8192, 1024, "bf16", (8192, 1024)), (8192 * 1024 + 1024) * 2)
        self.assertEqual(lb("middle_axis_sum", 64 * 4096, 64, "f32", (64, 4096, 64)), (64 * 4096 * 64 + 64 * 64) * 4)

    def test_norm_backwards_match_their_gradients(self):
        rng = np.random.default_rng(8)
        x, dy = self.tensor(rng.uniform(-2, 2, (4, 6))), self.tensor(rng.uniform(-2, 2, (4, 6)))
        w = self.tensor(rng.uniform(-2, 2, (6,)))
        dx, dgamma, dbeta = self.graphs["layer_norm_backward"](x, dy, w)
        xa, dya, wa = x.array.astype(np.float64), dy.array.astype(np.float64), w.array.astype(np.float64)
        xc = xa - xa.mean(axis=1, keepdims=True)
        rstd = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5)
        xhat = xc * rstd
        # dx of y = xhat * w: its textbook form.
        g = dya * wa
        expected = rstd * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
        np.testing.assert_allclose(dx.array, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(dgamma.array, (dya * xhat).sum(axis=0), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(dbeta.array, dya.sum(axis=0), rtol=1e-5)
        dx, dgamma = self.graphs["rms_norm_backward"](x, dy, w)
        rstd = 1 / np.sqrt((xa * xa).mean(axis=1, keepdims=True) + 1e-6)
        xhat = xa * rstd
        expected = rstd * (g - xhat * (g * xhat).mean(axis=1, keepdims=True))
        np.testing.assert_allclose(dx.array, expected, rtol=1e-4, atol=1e-5)
        self.assertEqual(dgamma.array.shape, (1, 6))
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("rms_norm_backward", 8192, 1024, "bf16", (8192, 1024)), (3 * 8192 * 1024 + 2 * 1024) * 2)

    def test_column_softmax_normalizes_each_column(self):
        rng = np.random.default_rng(6)
        x = self.tensor(rng.uniform(-2, 2, (7, 3)))
        (y,) = self.graphs["column_softmax"](x)
        self.assertEqual(y.array.shape, (7, 3))
        e = np.exp(x.array - x.array.max(axis=0, keepdims=True))
        np.testing.assert_allclose(y.array, e / e.sum(axis=0, keepdims=True), rtol=1e-6)
        # Read once and written once: the output has the input's shape.
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("column_softmax", 4096, 1024, "bf16", (4096, 1024)), 2 * 4096 * 1024 * 2)

    def test_sinkhorn_step_divides_the_row_softmax_by_its_column_sums(self):
        rng = np.random.default_rng(8)
        x = self.tensor(rng.uniform(-2, 2, (6, 4)))
        (z,) = self.graphs["sinkhorn_step"](x)
        self.assertEqual(z.array.shape, (6, 4))
        e = np.exp(x.array - x.array.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(z.array, y / y.sum(axis=0, keepdims=True), rtol=1e-6)
        # Each column of z sums to one.
        np.testing.assert_allclose(z.array.sum(axis=0), np.ones(4), rtol=1e-6)
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("sinkhorn_step", 4096, 1024, "f32", (4096, 1024)), 2 * 4096 * 1024 * 4)

    def test_sinkhorn_iteration_normalizes_the_rows_again(self):
        rng = np.random.default_rng(10)
        x = self.tensor(rng.uniform(-2, 2, (6, 4)))
        (w,) = self.graphs["sinkhorn_iteration"](x)
        e = np.exp(x.array - x.array.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
        z = y / y.sum(axis=0, keepdims=True)
        np.testing.assert_allclose(w.array, z / z.sum(axis=1, keepdims=True), rtol=1e-6)
        # Each row of w sums to one.
        np.testing.assert_allclose(w.array.sum(axis=1), np.ones(6), rtol=1e-6)
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("sinkhorn_iteration", 4096, 1024, "bf16", (4096, 1024)), 2 * 4096 * 1024 * 2)

    def test_sinkhorn_two_iterations_alternate_columns_and_rows_twice(self):
        rng = np.random.default_rng(11)
        x = self.tensor(rng.uniform(-2, 2, (6, 4)))
        (w,) = self.graphs["sinkhorn_two_iterations"](x)
        e = np.exp(x.array - x.array.max(axis=1, keepdims=True))
        z = e / e.sum(axis=1, keepdims=True)
        for _ in range(2):
            z = z / z.sum(axis=0, keepdims=True)
            z = z / z.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(w.array, z, rtol=1e-6)
        np.testing.assert_allclose(w.array.sum(axis=1), np.ones(6), rtol=1e-6)
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("sinkhorn_two_iterations", 4096, 1024, "f32", (4096, 1024)), 2 * 4096 * 1024 * 4)

    def test_group_norm_normalizes_each_group_then_each_channel(self):
        rng = np.random.default_rng(9)
        groups = self.baseline.GROUP_NORM_GROUPS
        x = self.tensor(rng.uniform(-2, 2, (2, 2 * groups, 5)))
        gamma, beta = self.tensor(rng.uniform(0.5, 2, (2 * groups,))), self.tensor(rng.uniform(-1, 1, (2 * groups,)))
        (y,) = self.graphs["group_norm"](x, gamma, beta)
        self.assertEqual(y.array.shape, x.array.shape)
        # Undo the affine per channel: each group of two channels has mean 0 and variance 1.
        xhat = (y.array - beta.array.reshape(1, -1, 1)) / gamma.array.reshape(1, -1, 1)
        per_group = xhat.reshape(2, groups, -1)
        np.testing.assert_allclose(per_group.mean(axis=2), 0, atol=1e-5)
        np.testing.assert_allclose(per_group.var(axis=2), 1, rtol=1e-3)
        # x and y whole, gamma and beta once per channel.
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("group_norm", 0, 0, "bf16", (8, 512, 4096)), (2 * 8 * 512 * 4096 + 2 * 512) * 2)

    def test_lower_bound_counts_inputs_and_outputs(self):
        lb = self.baseline.lower_bound_bytes
        self.assertEqual(lb("layer_norm", 8192, 4096, "bf16"), (2 * 8192 * 4096 + 2 * 4096) * 2)
        # x, residual, y and h are [rows, cols]; bias, gamma and beta are [cols].
        self.assertEqual(lb("bias_residual_layer_norm", 10, 8, "f32"), (4 * 10 * 8 + 3 * 8) * 4)

    def test_cpu_dry_run_records_every_case_and_the_compile_failure(self):
        output = os.path.join(tempfile.mkdtemp(), "torch.json")
        code = self.baseline.main(["--device", "cpu", "--quick", "--shapes", "8x16", "--runs", "2", "--warmup", "1",
                                   "--modes", "eager,compile", "--output", output,
                                   "--reduction-dims",
                                   "bias_grad_column_sum=6x5,middle_axis_sum=2x3x4,column_softmax=5x4,column_softmax_large=6x3,"
                                   "layer_norm_backward=4x6,rms_norm_backward=3x5,group_norm=2x64x3,batch_norm=2x3x4x5,"
                                   "instance_norm=2x3x4x5,sinkhorn_step=5x4,sinkhorn_iteration=5x4,sinkhorn_two_iterations=5x4,"
                                   "adamw_step=2,lamb_step=2"])
        self.assertEqual(code, 0)
        with open(output) as handle:
            doc = json.load(handle)
        # Six graphs and twelve reductions, two dtypes each, and the AdamW and LAMB steps in f32.
        self.assertEqual(len(doc["cases"]), 38)
        optimizers = ("adamw_step", "lamb_step")
        reductions = {(c["graph"], c["dtype"]): c for c in doc["cases"] if "dims" in c and c["graph"] not in optimizers}
        self.assertEqual(sorted(reductions), [("batch_norm", "bf16"), ("batch_norm", "f32"),
                                              ("bias_grad_column_sum", "bf16"), ("bias_grad_column_sum", "f32"),
                                              ("column_softmax", "bf16"), ("column_softmax", "f32"),
                                              ("column_softmax_large", "bf16"), ("column_softmax_large", "f32"),
                                              ("group_norm", "bf16"), ("group_norm", "f32"),
                                              ("instance_norm", "bf16"), ("instance_norm", "f32"),
                                              ("layer_norm_backward", "bf16"), ("layer_norm_backward", "f32"),
                                              ("middle_axis_sum", "bf16"), ("middle_axis_sum", "f32"),
                                              ("rms_norm_backward", "bf16"), ("rms_norm_backward", "f32"),
                                              ("sinkhorn_iteration", "bf16"), ("sinkhorn_iteration", "f32"),
                                              ("sinkhorn_step", "bf16"), ("sinkhorn_step", "f32"),
                                              ("sinkhorn_two_iterations", "bf16"),
                                              ("sinkhorn_two_iterations", "f32")])
        # x and dy read, w read; dx, dgamma and dbeta written.
        self.assertEqual(reductions[("layer_norm_backward", "f32")]["lower_bound_bytes"], (3 * 24 + 3 * 6) * 4)
        column = reductions[("column_softmax", "f32")]
        self.assertEqual(column["lower_bound_bytes"], 2 * 20 * 4)
        middle = reductions[("middle_axis_sum", "f32")]
        self.assertEqual((middle["dims"], middle["rows"], middle["cols"]), ([2, 3, 4], 6, 4))
        self.assertEqual(middle["lower_bound_bytes"], (24 + 8) * 4)
        self.assertEqual(reductions[("group_norm", "f32")]["lower_bound_bytes"], (2 * 384 + 2 * 64) * 4)
        # x, gamma and beta read; y, the mean and the variance of each of the 3 channels written.
        self.assertEqual(reductions[("batch_norm", "f32")]["lower_bound_bytes"], (2 * 120 + 4 * 3) * 4)
        # x, gamma and beta read; y written.
        self.assertEqual(reductions[("instance_norm", "f32")]["lower_bound_bytes"], (2 * 120 + 2 * 3) * 4)
        for case in doc["cases"]:
            self.assertGreater(case["results"]["eager"]["median_us"], 0)
            if case["graph"] == "gelu_bias":
                self.assertIn("stand-in compiler failure", case["results"]["compile"]["error"])
            else:
                self.assertEqual(case["results"]["compile"]["rel_diff_vs_eager"], 0.0)
        self.assertEqual(doc["copy"]["bytes_moved"], 2 * (16 << 20))

    def run_optimizer_step(self, graph):
        """The one case of a CPU run of `graph` over three tensors in eager and compile modes."""
        output = os.path.join(tempfile.mkdtemp(), "torch.json")
        code = self.baseline.main(["--device", "cpu", "--runs", "2", "--warmup", "1", "--graphs", graph,
                                   "--modes", "eager,compile", "--reduction-dims", graph + "=3",
                                   "--output", output])
        self.assertEqual(code, 0)
        with open(output) as handle:
            doc = json.load(handle)
        (case,) = doc["cases"]
        self.assertEqual((case["graph"], case["dims"], case["dtype"]), (graph, [3], "f32"))
        return case

    def test_adamw_step_runs_foreach_fused_and_compiled_from_the_same_start(self):
        FakeAdamW.created = []
        case = self.run_optimizer_step("adamw_step")
        # Three tensors of 768x768, 768 and 3072 elements; seven values of four bytes each.
        self.assertEqual(case["lower_bound_bytes"], 7 * (768 * 768 + 768 + 3072) * 4)
        self.assertEqual(sorted(case["results"]), ["compile", "eager", "fused"])
        for mode in ("fused", "compile"):
            self.assertEqual(case["results"][mode]["rel_diff_vs_eager"], 0.0)
        self.assertGreater(case["results"]["eager"]["median_us"], 0)
        self.assertEqual([o.implementation for o in FakeAdamW.created], ["foreach", "fused", "foreach"])
        self.assertEqual(self.baseline.lower_bound_bytes("adamw_step", 1, 100, "f32", (100,)),
                         7 * 15148800 * 4)

    def test_lamb_step_matches_the_textbook_update(self):
        rng = np.random.default_rng(12)
        sizes = (5, 3, 4)
        p0, g0, m0 = ([rng.uniform(-2, 2, n) for n in sizes] for _ in range(3))
        v0 = [rng.uniform(0, 1, n) for n in sizes]
        p0[1][:] = 0  # a zero parameter: the trust ratio is 1
        state = [[self.tensor(a) for a in arrays] for arrays in (p0, g0, m0, v0)]
        self.baseline.lamb_foreach_step(self.torch, *state)
        lamb = self.baseline.LAMB
        beta1, beta2 = lamb["betas"]
        for i in range(len(sizes)):
            m = beta1 * m0[i] + (1 - beta1) * g0[i]
            v = beta2 * v0[i] + (1 - beta2) * g0[i] ** 2
            u = (m / (1 - beta1**10)) / (np.sqrt(v / (1 - beta2**10)) + lamb["eps"]) + lamb["weight_decay"] * p0[i]
            p_norm, u_norm = np.linalg.norm(p0[i]), np.linalg.norm(u)
            ratio = p_norm / u_norm if p_norm > 0 and u_norm > 0 else 1.0
            np.testing.assert_allclose(state[0][i].array, p0[i] - lamb["lr"] * ratio * u, rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(state[2][i].array, m, rtol=1e-6)
            np.testing.assert_allclose(state[3][i].array, v, rtol=1e-6)
            np.testing.assert_allclose(state[1][i].array, g0[i].astype(np.float32), rtol=0)  # gradients unchanged

    def test_lamb_step_runs_eager_and_compiled_from_the_same_start(self):
        case = self.run_optimizer_step("lamb_step")
        self.assertEqual(case["lower_bound_bytes"], 7 * (768 * 768 + 768 + 3072) * 4)
        # torch has no fused LAMB.
        self.assertEqual(sorted(case["results"]), ["compile", "eager"])
        self.assertEqual(case["results"]["compile"]["rel_diff_vs_eager"], 0.0)
        self.assertGreater(case["results"]["eager"]["median_us"], 0)

    def test_bad_reduction_dims_are_refused(self):
        for bad in ("middle_axis_sum=2x3", "nosuch=2x3", "bias_grad_column_sum=0x4", "bias_grad_column_sum=ax4",
                    "adamw_step=3x4", "adamw_step=0", "lamb_step=0"):
            with self.assertRaises(SystemExit):
                with open(os.devnull, "w") as devnull:
                    saved, sys.stderr = sys.stderr, devnull
                    try:
                        self.baseline.parse_args(["--reduction-dims", bad])
                    finally:
                        sys.stderr = saved

    def test_time_budget_skips_later_modes(self):
        output = os.path.join(tempfile.mkdtemp(), "torch.json")
        self.baseline.main(["--device", "cpu", "--shapes", "4x8", "--runs", "1", "--warmup", "0", "--graphs",
                            "rms_norm", "--modes", "eager", "--time-budget", "1e-9", "--output", output])
        with open(output) as handle:
            doc = json.load(handle)
        self.assertIn("time budget", doc["cases"][0]["results"]["eager"]["error"])


if __name__ == "__main__":
    unittest.main()
