"""The CUDA backend on a real GPU with torch (and CuPy when installed) arrays.

Skipped unless torch sees a GPU and fstitch opens a CUDA context on it.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import F32_LIMIT, HALF_LIMIT, assert_close, layer_norm, softmax

import fstitch

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")


@pytest.fixture(scope="module")
def gpu_ctx(cache_dir):
    try:
        context = fstitch.Context(backend="cuda", device=0, cache_dir=cache_dir, log_level="error")
    except fstitch.Error as error:
        pytest.skip(f"no CUDA context: {error}")
    yield context
    context.close()


@pytest.fixture(scope="module")
def layer_norm_fusion(gpu_ctx):
    g = gpu_ctx.graph()
    x = g.input("x", "f32", (256, 1024))
    w = g.input("w", "f32", 1024)
    b = g.input("b", "f32", 1024)
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    g.output("y", centered * (variance + 1e-5).rsqrt() * w + b)
    return g, g.fuse()


def torch_inputs(seed=0):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return {
        "x": torch.randn(256, 1024, device="cuda", generator=generator),
        "w": torch.randn(1024, device="cuda", generator=generator),
        "b": torch.randn(1024, device="cuda", generator=generator),
    }


def host(tensors):
    return {name: tensor.cpu().numpy() for name, tensor in tensors.items()}


def test_the_context_is_on_the_gpu(gpu_ctx, layer_norm_fusion):
    assert gpu_ctx.active_backend is fstitch.Backend.CUDA
    major, minor = torch.cuda.get_device_capability(0)
    assert gpu_ctx.device_arch == 10 * major + minor
    _, fusion = layer_norm_fusion
    assert fusion.kernels[0].function != 0


def test_layer_norm_with_torch_tensors(layer_norm_fusion):
    g, fusion = layer_norm_fusion
    inputs = torch_inputs()
    y = fusion.run(**inputs)["y"]
    assert (
        isinstance(y, torch.Tensor)
        and y.is_cuda
        and y.dtype == torch.float32
        and tuple(y.shape) == (256, 1024)
    )
    torch.cuda.synchronize()
    data = host(inputs)
    assert_close(y.cpu().numpy(), layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)
    assert_close(y.cpu().numpy(), g.evaluate(data)["y"], F32_LIMIT)


def test_given_outputs_and_positional_inputs(layer_norm_fusion):
    _, fusion = layer_norm_fusion
    inputs = torch_inputs(1)
    out = torch.full((256, 1024), float("nan"), device="cuda")
    result = fusion.run([inputs["x"], inputs["w"], inputs["b"]], outputs=[out])
    assert result[0] is out
    torch.cuda.synchronize()
    data = host(inputs)
    assert_close(out.cpu().numpy(), layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)


def test_runs_on_the_current_torch_stream(layer_norm_fusion):
    _, fusion = layer_norm_fusion
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        inputs = torch_inputs(2)
        y = fusion.run(**inputs)["y"]
        doubled = y * 2  # ordered after the run on the same stream
    stream.synchronize()
    data = host(inputs)
    assert_close(doubled.cpu().numpy(), 2 * layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)


def test_explicit_stream(layer_norm_fusion):
    _, fusion = layer_norm_fusion
    inputs = torch_inputs(3)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    out = torch.empty(256, 1024, device="cuda")
    fusion.run(**inputs, outputs={"y": out}, stream=stream)
    stream.synchronize()
    data = host(inputs)
    assert_close(out.cpu().numpy(), layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)


def test_cuda_graph_capture(layer_norm_fusion):
    _, fusion = layer_norm_fusion
    inputs = torch_inputs(4)
    out = torch.empty(256, 1024, device="cuda")
    fusion.run(**inputs, outputs=[out])  # loads the kernels before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fusion.run(**inputs, outputs=[out])
    new = torch_inputs(5)
    for name, tensor in inputs.items():
        tensor.copy_(new[name])
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    data = host(new)
    assert_close(out.cpu().numpy(), layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_half_precision_softmax(gpu_ctx, dtype):
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    g = gpu_ctx.graph()
    x = g.input("x", dtype, (128, 512))
    xf = x.cast("f32")
    e = (xf - xf.max(axis=1, keepdims=True)).exp()
    g.output("y", (e / e.sum(axis=1, keepdims=True)).cast(dtype))
    fusion = g.fuse()
    data = torch.randn(128, 512, device="cuda").to(torch_dtype)
    y = fusion.run(x=data)["y"]  # bf16 tensors travel by DLPack
    assert y.dtype == torch_dtype and y.is_cuda
    torch.cuda.synchronize()
    if dtype == "bf16":
        bits = data.view(torch.int16).cpu().numpy().view(np.uint16)
        reference = fstitch.from_bf16_bits(g.evaluate(x=bits)["y"])
        actual = fstitch.from_bf16_bits(y.view(torch.int16).cpu().numpy().view(np.uint16))
        expected = softmax(fstitch.from_bf16_bits(bits))
    else:
        host_data = data.cpu().numpy()
        reference = g.evaluate(x=host_data)["y"].astype(np.float64)
        actual = y.cpu().numpy().astype(np.float64)
        expected = softmax(host_data)
    assert_close(actual, reference, HALF_LIMIT)
    assert_close(actual, expected, HALF_LIMIT)


def test_tensors_that_require_grad_are_read(layer_norm_fusion):
    _, fusion = layer_norm_fusion
    inputs = torch_inputs(6)
    inputs["w"].requires_grad_(True)
    y = fusion.run(**inputs)["y"]
    torch.cuda.synchronize()
    data = {name: tensor.detach().cpu().numpy() for name, tensor in inputs.items()}
    assert_close(y.cpu().numpy(), layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)


def test_refusals(layer_norm_fusion):
    _, fusion = layer_norm_fusion
    inputs = torch_inputs(7)
    cases = [
        (
            {**inputs, "x": torch.randn(128, 1024, device="cuda")},
            "input 'x' has shape (128, 1024)",
        ),
        (
            {**inputs, "x": torch.randn(1024, 256, device="cuda").t()},
            "input 'x' is not C-contiguous",
        ),
        ({**inputs, "w": inputs["w"].double()}, "input 'w' has elements float64"),
        ({**inputs, "b": inputs["b"].cpu()}, "input 'b' is a host object"),
        ({**inputs, "b": inputs["b"].cpu().numpy()}, "input 'b' is a host object"),
    ]
    for arguments, fragment in cases:
        with pytest.raises(fstitch.Error) as caught:
            fusion.run(**arguments)
        assert fragment in caught.value.message


def test_kernels_launched_one_by_one(gpu_ctx):
    g = gpu_ctx.graph()
    x = g.input("x", "f32", (64, 256))
    g.output("y", (x.exp().sum(axis=1, keepdims=True) * x).sin())
    fusion = g.fuse(policy="none")
    data = torch.randn(64, 256, device="cuda")
    expected = fusion.run(x=data)["y"]
    workspace = torch.zeros(fusion.workspace_size, dtype=torch.uint8, device="cuda")
    out = torch.full((64, 256), float("nan"), device="cuda")
    for kernel in fusion.kernels:
        args = []
        for param in kernel.params:
            if param.kind is fstitch.ParamKind.INPUT:
                args.append(data)
            elif param.kind is fstitch.ParamKind.OUTPUT:
                args.append(out)
            else:
                args.append(workspace.data_ptr() + param.index)
        kernel.launch(args)
    torch.cuda.synchronize()
    assert torch.equal(out, expected)


def test_opaque_matmuls_with_torch(gpu_ctx):
    g = gpu_ctx.graph()
    x = g.input("x", "f32", (64, 128))
    w1 = g.input("w1", "f32", (128, 96))
    w2 = g.input("w2", "f32", (96, 128))
    h = g.opaque("matmul", [x * 0.5, w1], "f32", (64, 96))
    g.output("y", g.opaque("matmul", [h.tanh(), w2], "f32", (64, 128)) + x)
    fusion = g.fuse()
    streams = []

    def matmul(call):
        # The work is queued on the run's stream: here torch's current stream, which the
        # run took from the torch inputs.
        streams.append(call.stream)
        a, b = (torch.as_tensor(t, device="cuda") for t in call.operands)
        torch.matmul(a, b, out=torch.as_tensor(call.result, device="cuda"))

    generator = torch.Generator(device="cuda").manual_seed(3)
    inputs = {
        name: torch.randn(*shape, device="cuda", generator=generator) / 8
        for name, shape in (("x", (64, 128)), ("w1", (128, 96)), ("w2", (96, 128)))
    }
    y = fusion.run(inputs, opaque=matmul)["y"]
    torch.cuda.synchronize()
    assert streams == [torch.cuda.current_stream().cuda_stream] * 2
    data = {name: tensor.cpu().numpy() for name, tensor in inputs.items()}
    x64, w1_64, w2_64 = (data[name].astype(np.float64) for name in ("x", "w1", "w2"))
    expected = np.tanh((x64 * 0.5) @ w1_64) @ w2_64 + x64
    # torch may run f32 matmuls in TF32: compare at half-precision accuracy.
    assert_close(y.cpu().numpy(), expected, HALF_LIMIT)


def test_cupy_arrays(layer_norm_fusion):
    cupy = pytest.importorskip("cupy")
    _, fusion = layer_norm_fusion
    rng = np.random.default_rng(8)
    data = {
        "x": rng.standard_normal((256, 1024), dtype=np.float32),
        "w": rng.standard_normal(1024, dtype=np.float32),
        "b": rng.standard_normal(1024, dtype=np.float32),
    }
    y = fusion.run(**{name: cupy.asarray(array) for name, array in data.items()})["y"]
    assert isinstance(y, cupy.ndarray)
    assert_close(cupy.asnumpy(y), layer_norm(data["x"], data["w"], data["b"]), F32_LIMIT)
