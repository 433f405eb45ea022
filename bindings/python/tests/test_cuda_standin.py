"""The CUDA path of the binding against the stand-in driver of tests/cuda (no GPU needed).

The stand-in simulates a device and records every launch with its arguments and stream,
so these tests check what the binding hands the library: device pointers read through the
CUDA Array Interface and DLPack, the chosen stream, workspaces, and every refusal. They
are skipped when the build has no stand-in (BUILD_DIR/tests/cuda/libfstitch_fake_cuda.so,
or $FSTITCH_FAKE_CUDA_LIBRARY).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import pathlib

import numpy as np
import pytest

import fstitch
from fstitch import Status, dlpack

STANDIN = pathlib.Path(
    os.environ.get("FSTITCH_FAKE_CUDA_LIBRARY")
    or pathlib.Path(fstitch.library_path()).resolve().parent
    / "tests"
    / "cuda"
    / "libfstitch_fake_cuda.so"
)

pytestmark = pytest.mark.skipif(
    not STANDIN.exists(), reason=f"no stand-in CUDA driver at {STANDIN}"
)


class LaunchRecord(ctypes.Structure):
    """fake_cuda_launch_record of tests/cuda/fake_cuda.h."""

    _fields_ = [
        ("function", ctypes.c_void_p),
        ("kernel", ctypes.c_char * 128),
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared_bytes", ctypes.c_uint),
        ("stream", ctypes.c_void_p),
        ("cooperative", ctypes.c_int),
        ("context", ctypes.c_void_p),
        ("param_count", ctypes.c_int),
        ("params", ctypes.c_void_p * 32),
        ("call_index", ctypes.c_size_t),
        ("cluster", ctypes.c_uint * 3),
    ]


class StandIn:
    """The stand-in driver's control interface, from the same loaded instance fstitch uses."""

    def __init__(self, path: pathlib.Path) -> None:
        self.lib = ctypes.CDLL(str(path))
        self.lib.fake_cuda_set_param_count.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.fake_cuda_launch_count.restype = ctypes.c_size_t
        self.lib.fake_cuda_launch.argtypes = [ctypes.c_size_t, ctypes.POINTER(LaunchRecord)]
        self.lib.fake_cuda_allocation_count.restype = ctypes.c_size_t
        self.lib.cuStreamCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]

    def record_params(self, fusion) -> None:
        for kernel in fusion.kernels:
            self.lib.fake_cuda_set_param_count(kernel.name.encode(), len(kernel.params))

    def launches(self):
        records = []
        for index in range(self.lib.fake_cuda_launch_count()):
            record = LaunchRecord()
            assert self.lib.fake_cuda_launch(index, ctypes.byref(record)) == 1
            records.append(record)
        return records

    def new_stream(self) -> int:
        stream = ctypes.c_void_p()
        assert self.lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
        return stream.value


@pytest.fixture(scope="module")
def standin():
    return StandIn(STANDIN)


@pytest.fixture(scope="module")
def cuda_ctx(standin, cache_dir):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FSTITCH_CUDA_DRIVER", str(STANDIN))
        standin.lib.fake_cuda_reset()
        context = fstitch.Context(backend="cuda", cache_dir=cache_dir, log_level="error")
    yield context
    context.close()


@pytest.fixture(autouse=True)
def clean_records(standin):
    standin.lib.fake_cuda_clear_records()


# Default addresses of the stand-in arrays, 1 MiB apart: runs refuse overlapping buffers.
_addresses = itertools.count(0x10000000, 0x100000)


class CaiArray:
    """A device array by the CUDA Array Interface (the stand-in never dereferences it)."""

    def __init__(
        self,
        shape,
        typestr="<f4",
        pointer=None,
        stream=None,
        version=3,
        strides=None,
        readonly=False,
        mask=None,
    ):
        if pointer is None:
            pointer = next(_addresses)
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (pointer, readonly),
            "version": version,
            "strides": strides,
            "stream": stream,
        }
        if mask is not None:
            self.__cuda_array_interface__["mask"] = mask


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DLTENSOR = b"dltensor"
_DLTENSOR_VERSIONED = b"dltensor_versioned"


class DlpackArray:
    """A device array by DLPack only, which records the stream each export was asked for."""

    def __init__(
        self,
        shape,
        code=dlpack.KDL_FLOAT,
        bits=32,
        pointer=None,
        byte_offset=0,
        device=(2, 0),
        strides=None,
        versioned=False,
        readonly=False,
    ):
        self.device = device
        self.streams = []
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides) if strides is not None else None
        tensor = dlpack.DLTensor()
        tensor.data = next(_addresses) if pointer is None else pointer
        tensor.device = dlpack.DLDevice(device[0], device[1])
        tensor.ndim = len(shape)
        tensor.dtype = dlpack.DLDataType(code, bits, 1)
        tensor.shape = self._shape
        tensor.strides = self._strides
        tensor.byte_offset = byte_offset
        self.versioned = versioned
        if versioned:
            self._managed = dlpack.DLManagedTensorVersioned()
            self._managed.version = dlpack.DLPackVersion(1, 0)
            self._managed.flags = 1 if readonly else 0
        else:
            self._managed = dlpack.DLManagedTensor()
        self._managed.dl_tensor = tensor

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        name = _DLTENSOR_VERSIONED if self.versioned else _DLTENSOR
        return _capsule_new(ctypes.addressof(self._managed), name, None)

    def __dlpack_device__(self):
        return self.device


@pytest.fixture(scope="module")
def scaled(cuda_ctx):
    g = cuda_ctx.graph()
    x = g.input("x", "f32", (8, 16))
    w = g.input("w", "f32", 16)
    g.output("y", (x * w).exp())
    return g.fuse()


def run_scaled(standin, fusion, x, w, y, **kwargs):
    standin.record_params(fusion)
    result = fusion.run(x=x, w=w, outputs={"y": y}, **kwargs)
    assert result["y"] is y
    launches = standin.launches()
    assert len(launches) == 1
    return launches[0]


def test_the_context_runs_on_the_stand_in(cuda_ctx, scaled):
    assert cuda_ctx.active_backend is fstitch.Backend.CUDA
    assert cuda_ctx.device_arch == 90
    assert "sm_90" in scaled.plan
    assert scaled.kernels[0].function != 0


def test_cuda_array_interface_pointers_and_stream(standin, scaled):
    stream = standin.new_stream()
    launch = run_scaled(
        standin,
        scaled,
        CaiArray((8, 16), pointer=0x1000, stream=stream),
        CaiArray((16,), pointer=0x2000, stream=stream),
        CaiArray((8, 16), pointer=0x3000),
    )
    kernel = scaled.kernels[0]
    assert launch.kernel.decode() == kernel.name
    assert launch.stream == stream  # the producers' stream
    pointers = {fstitch.ParamKind.INPUT: [0x1000, 0x2000], fstitch.ParamKind.OUTPUT: [0x3000]}
    expected = [pointers[p.kind][p.index] for p in kernel.params]
    assert [launch.params[i] for i in range(launch.param_count)] == expected
    assert tuple(launch.grid) == kernel.launch_config.grid


def test_device_arrays_follow_the_aliasing_contract(standin, scaled):
    x = CaiArray((8, 16), pointer=0x40000)
    w = CaiArray((16,), pointer=0x50000)
    # y = exp(x * w) written into x: an elementwise update in place, queued as asked.
    launch = run_scaled(standin, scaled, x, w, CaiArray((8, 16), pointer=0x40000))
    kernel = scaled.kernels[0]
    output = [i for i, p in enumerate(kernel.params) if p.kind is fstitch.ParamKind.OUTPUT]
    assert [launch.params[i] for i in output] == [0x40000]
    # Part of x, or over w: refused before anything is queued.
    for y, detail in [
        (CaiArray((8, 16), pointer=0x40000 + 64), 'overlaps inputs[0] ("x") in part'),
        (CaiArray((8, 16), pointer=0x50000 - 32), 'overlaps inputs[1] ("w") in part'),
    ]:
        with pytest.raises(fstitch.Error) as excinfo:
            scaled.run(x=x, w=w, outputs={"y": y})
        assert excinfo.value.status is Status.INVALID_ARGUMENT
        assert detail in str(excinfo.value)
    assert len(standin.launches()) == 1


def test_no_stream_anywhere_is_the_default_stream(standin, scaled):
    launch = run_scaled(
        standin,
        scaled,
        CaiArray((8, 16), version=2),
        CaiArray((16,)),
        CaiArray((8, 16), stream=None),
    )
    assert launch.stream is None


def test_interface_stream_1_is_the_legacy_default_stream(standin, scaled):
    launch = run_scaled(
        standin, scaled, CaiArray((8, 16), stream=1), CaiArray((16,), stream=1), CaiArray((8, 16))
    )
    assert launch.stream == 1


class TorchLikeStream:
    def __init__(self, handle):
        self.cuda_stream = handle


class CupyLikeStream:
    def __init__(self, handle):
        self.ptr = handle


class ProtocolStream:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


@pytest.mark.parametrize("wrap", [int, TorchLikeStream, CupyLikeStream, ProtocolStream])
def test_explicit_streams(standin, scaled, wrap):
    stream = standin.new_stream()
    other = standin.new_stream()
    # The explicit stream wins over the arrays' own.
    launch = run_scaled(
        standin,
        scaled,
        CaiArray((8, 16), stream=other),
        CaiArray((16,), stream=other),
        CaiArray((8, 16)),
        stream=wrap(stream),
    )
    assert launch.stream == stream


def test_arrays_on_different_streams_are_refused(standin, scaled):
    first, second = standin.new_stream(), standin.new_stream()
    with pytest.raises(fstitch.Error) as caught:
        scaled.run(
            x=CaiArray((8, 16), stream=first),
            w=CaiArray((16,), stream=second),
            outputs=[CaiArray((8, 16))],
        )
    assert caught.value.status is Status.INVALID_ARGUMENT
    assert (
        "input 'x' is on CUDA stream" in caught.value.message
        and "input 'w'" in caught.value.message
    )
    assert standin.launches() == []


def test_dlpack_arrays(standin, scaled):
    x = DlpackArray((8, 16), pointer=0x5000, byte_offset=64)
    w = DlpackArray((16,), pointer=0x6000, versioned=True)
    launch = run_scaled(standin, scaled, x, w, DlpackArray((8, 16), pointer=0x7000))
    assert x.streams == [1] and w.streams == [1]  # the default stream, as DLPack spells it
    params = {p.kind: [] for p in scaled.kernels[0].params}
    for i, p in enumerate(scaled.kernels[0].params):
        params[p.kind].append(launch.params[i])
    assert params[fstitch.ParamKind.INPUT] == [0x5000 + 64, 0x6000]
    assert params[fstitch.ParamKind.OUTPUT] == [0x7000]


def test_dlpack_producers_get_the_run_stream(standin, scaled):
    stream = standin.new_stream()
    x = DlpackArray((8, 16))
    launch = run_scaled(standin, scaled, x, CaiArray((16,), stream=stream), CaiArray((8, 16)))
    assert x.streams == [stream] and launch.stream == stream


def test_bf16_through_dlpack_and_uint16(standin, cuda_ctx):
    g = cuda_ctx.graph()
    x = g.input("x", "bf16", (4, 32))
    g.output("y", (x.cast("f32") * 2).cast("bf16"))
    fusion = g.fuse()
    standin.record_params(fusion)
    fusion.run(
        x=DlpackArray((4, 32), code=dlpack.KDL_BFLOAT, bits=16), outputs=[CaiArray((4, 32), "<u2")]
    )
    assert len(standin.launches()) == 1
    with pytest.raises(
        fstitch.Error, match="input 'x' has elements float16; the graph declares bf16"
    ):
        fusion.run(
            x=DlpackArray((4, 32), code=dlpack.KDL_FLOAT, bits=16),
            outputs=[CaiArray((4, 32), "<u2")],
        )


@pytest.mark.parametrize(
    "x, y, fragment",
    [
        (
            CaiArray((8, 16), "<f8"),
            CaiArray((8, 16)),
            "input 'x' has elements float64; the graph declares f32",
        ),
        (
            CaiArray((16, 8)),
            CaiArray((8, 16)),
            "input 'x' has shape (16, 8); the graph declares (8, 16)",
        ),
        (CaiArray((8, 16), strides=(4, 32)), CaiArray((8, 16)), "input 'x' is not C-contiguous"),
        (DlpackArray((8, 16), strides=(1, 8)), CaiArray((8, 16)), "input 'x' is not C-contiguous"),
        (DlpackArray((8, 16), device=(2, 1)), CaiArray((8, 16)), "input 'x' is on CUDA device 1"),
        (CaiArray((8, 16)), CaiArray((8, 16), readonly=True), "output 'y' is read-only"),
        (
            CaiArray((8, 16)),
            DlpackArray((8, 16), versioned=True, readonly=True),
            "output 'y' is read-only",
        ),
        (CaiArray((8, 16), pointer=0), CaiArray((8, 16)), "input 'x' has a NULL data pointer"),
        (CaiArray((8, 16), mask=CaiArray((8, 16), "|b1")), CaiArray((8, 16)), "masked"),
        (
            np.zeros((8, 16), np.float32),
            CaiArray((8, 16)),
            "input 'x' is a host object (numpy.ndarray)",
        ),
        (DlpackArray((8, 16), device=(1, 0)), CaiArray((8, 16)), "input 'x' is a host object"),
        (CaiArray((8, 16)), np.zeros((8, 16), np.float32), "output 'y' is a host object"),
    ],
)
def test_device_array_refusals(standin, scaled, x, y, fragment):
    with pytest.raises(fstitch.Error) as caught:
        scaled.run(x=x, w=CaiArray((16,)), outputs={"y": y})
    assert fragment in caught.value.message
    assert caught.value.status in (Status.INVALID_ARGUMENT, Status.UNSUPPORTED)
    assert standin.launches() == []


def test_strides_of_unit_dims_do_not_matter(standin, scaled):
    launch = run_scaled(
        standin,
        scaled,
        CaiArray((8, 16), strides=(64, 4)),
        CaiArray((16,), strides=(4,)),
        CaiArray((8, 16)),
    )
    assert launch.param_count == 3
    g = scaled.context.graph()
    v = g.input("v", "f32", (1, 16))
    g.output("y", v.exp())
    fusion = g.fuse()
    standin.record_params(fusion)
    fusion.run(v=CaiArray((1, 16), strides=(999, 4)), outputs=[CaiArray((1, 16))])


def test_outputs_cannot_be_allocated_like_unknown_arrays(scaled):
    with pytest.raises(fstitch.Error) as caught:
        scaled.run(x=CaiArray((8, 16)), w=CaiArray((16,)))
    assert caught.value.status is Status.UNSUPPORTED
    assert "pass outputs=" in caught.value.message and "input 'x'" in caught.value.message


def test_workspaces(standin, cuda_ctx):
    g = cuda_ctx.graph()
    x = g.input("x", "f32", (8, 64))
    g.output("y", (x.exp().sum(axis=1, keepdims=True) * x).sin())
    fusion = g.fuse(policy="none")
    size = fusion.workspace_size
    assert size > 0 and len(fusion.kernels) > 1
    standin.record_params(fusion)
    base = 0x100000
    fusion.run(x=CaiArray((8, 64)), outputs=[CaiArray((8, 64))], workspace=base)
    for launch, kernel in zip(standin.launches(), fusion.kernels):
        for i, param in enumerate(kernel.params):
            if param.kind is fstitch.ParamKind.WORKSPACE:
                assert launch.params[i] == base + param.index
    standin.lib.fake_cuda_clear_records()
    fusion.run(
        x=CaiArray((8, 64)),
        outputs=[CaiArray((8, 64))],
        workspace=CaiArray((size,), "|u1", pointer=base),
    )
    assert len(standin.launches()) == len(fusion.kernels)
    with pytest.raises(fstitch.Error, match=f"the fusion needs {size}"):
        fusion.run(
            x=CaiArray((8, 64)),
            outputs=[CaiArray((8, 64))],
            workspace=CaiArray((size - 1,), "|u1"),
        )
    standin.lib.fake_cuda_clear_records()
    fusion.run(x=CaiArray((8, 64)), outputs=[CaiArray((8, 64))])  # the library allocates it
    assert standin.lib.fake_cuda_allocation_count() >= 1


def test_workspace_bytes_are_exact(standin, cuda_ctx):
    g = cuda_ctx.graph()
    x = g.input("x", "f32", (8, 64))
    g.output("y", (x.exp().sum(axis=1, keepdims=True) * x).sin())
    fusion = g.fuse(policy="none")
    size = fusion.workspace_size
    # 3 * 2^62 bytes: negative in int64, but plenty for the fusion.
    fusion.run(
        x=CaiArray((8, 64)),
        outputs=[CaiArray((8, 64))],
        workspace=CaiArray((2**62, 3), "|u1", pointer=0x100000),
    )
    assert len(standin.launches()) == len(fusion.kernels)
    # Two negative dims multiply to the right size, but describe no array.
    with pytest.raises(fstitch.Error, match="has a negative dim"):
        fusion.run(
            x=CaiArray((8, 64)),
            outputs=[CaiArray((8, 64))],
            workspace=CaiArray((-1, -size), "|u1"),
        )


def test_kernel_launch_with_device_arrays(standin, scaled):
    kernel = scaled.kernels[0]
    standin.record_params(scaled)
    stream = standin.new_stream()
    args = {
        fstitch.ParamKind.INPUT: [
            CaiArray((8, 16), pointer=0xA000),
            CaiArray((16,), pointer=0xB000),
        ],
        fstitch.ParamKind.OUTPUT: [CaiArray((8, 16), pointer=0xC000)],
    }
    kernel.launch([args[p.kind][p.index] for p in kernel.params], stream=stream)
    kernel.launch([0xA000, 0xB000, 0xC000])  # raw addresses
    first, second = standin.launches()
    expected = [
        {fstitch.ParamKind.INPUT: [0xA000, 0xB000], fstitch.ParamKind.OUTPUT: [0xC000]}[p.kind][
            p.index
        ]
        for p in kernel.params
    ]
    assert [first.params[i] for i in range(first.param_count)] == expected
    assert first.stream == stream and second.stream is None
    assert [second.params[i] for i in range(second.param_count)] == [0xA000, 0xB000, 0xC000]
    with pytest.raises(fstitch.Error, match="has shape"):
        kernel.launch([CaiArray((8, 15)), 0xB000, 0xC000])


def test_opaque_steps_get_device_tensors_between_the_launches(standin, cuda_ctx):
    g = cuda_ctx.graph()
    x = g.input("x", "f32", (4, 8))
    w = g.input("w", "f32", (8, 6))
    g.output("y", g.opaque("matmul", [x * 0.5, w], "f32", (4, 6)).tanh())
    fusion = g.fuse()
    standin.record_params(fusion)
    op = fusion.opaque_ops[0]
    kernels_before = next(i for i, s in enumerate(fusion.steps) if s.kind == "opaque")
    x_array, w_array, y_array = CaiArray((4, 8)), CaiArray((8, 6)), CaiArray((4, 6))
    base = 0x9000000
    stream = standin.new_stream()
    pointer = lambda array: array.__cuda_array_interface__["data"][0]  # noqa: E731
    addresses = {
        fstitch.ParamKind.INPUT: [pointer(x_array), pointer(w_array)],
        fstitch.ParamKind.OUTPUT: [pointer(y_array)],
    }

    def address(tensor):
        if tensor.kind is fstitch.ParamKind.WORKSPACE:
            return base + tensor.index
        return addresses[tensor.kind][tensor.index]

    calls = []

    def on_device(call):
        calls.append(call)
        assert len(standin.launches()) == kernels_before  # after the kernels before it
        assert call.stream == stream
        assert all(isinstance(t, fstitch.DeviceTensor) for t in call.operands)
        assert [t.pointer for t in call.operands] == [address(t) for t in op.operands]
        assert call.result.pointer == address(op.result)
        interface = call.result.__cuda_array_interface__
        assert interface["shape"] == (4, 6) and interface["typestr"] == "<f4"
        assert interface["data"] == (address(op.result), False)
        assert interface["stream"] == stream and interface["version"] == 3
        assert call.operands[0].__cuda_array_interface__["data"][1] is True  # read-only

    fusion.run(
        x=x_array, w=w_array, outputs=[y_array], workspace=base, stream=stream, opaque=on_device
    )
    assert len(calls) == 1
    assert len(standin.launches()) == len(fusion.kernels)


def test_the_grid_is_sized_from_the_compiled_kernels_occupancy(standin, cuda_ctx):
    g = cuda_ctx.graph()
    x = g.input("x", "f32", (8192, 1024))
    g.output("y", (x * 2.0).exp())
    fusion = g.fuse()
    (kernel,) = fusion.kernels
    block = kernel.launch_config.block[0]
    # The stand-in answers the occupancy calculator as an sm_90 GPU for 32 registers a thread.
    standin.lib.fake_cuda_set_kernel_registers.argtypes = [ctypes.c_char_p, ctypes.c_int]
    standin.lib.fake_cuda_set_kernel_registers(kernel.name.encode(), 32)
    try:
        per_sm = min(65536 // 1024 // ((block + 31) // 32), 2048 // block, 32)
        expected = kernel.grid_for_occupancy(per_sm, 132)
        assert expected != kernel.launch_config.grid  # the estimate was more conservative
        x_array = CaiArray((8192, 1024), pointer=0x100000000)
        fusion.run(x=x_array, outputs={"y": CaiArray((8192, 1024), pointer=0x200000000)})
        (launch,) = standin.launches()
        assert tuple(launch.grid) == expected
    finally:
        standin.lib.fake_cuda_set_kernel_registers(kernel.name.encode(), 0)
