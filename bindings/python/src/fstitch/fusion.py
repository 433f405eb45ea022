"""fstitch.Fusion and fstitch.Kernel: a fused plan, its kernels and running it."""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

from . import _lib, compile_stats
from ._args import C_INT_RANGE, SIZE_RANGE, UINT32_RANGE, as_int
from ._call import check, decode
from ._handle import OwnedHandle
from ._show import shown
from .compile_stats import CompileStats
from .enums import LaunchKind, ParamKind, Policy, c_value, from_c, parse
from .errors import Error, Status, api
from .opaque import OpaqueOp, Step
from .opaque import opaque_ops as all_opaque_ops
from .opaque import steps as opaque_steps
from .specs import TensorSpec
from .value import Value


class LaunchConfig(NamedTuple):
    """Grid and block dimensions (x, y, z) and dynamic shared memory bytes of a kernel."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int


class Param(NamedTuple):
    """One pointer parameter of a kernel.

    Attributes:
        kind: input, output, workspace or constant.
        index: the input or output index, the byte offset in the workspace, or the index of
            the constant in :attr:`Fusion.constants`.
        handle: the C ``fst_value`` behind it, valid for the graph the fusion came from.
        value: that value as a :class:`Value` while the graph is alive and open, else None.
    """

    kind: ParamKind
    index: int  # type: ignore[assignment]  # the C API's name; shadows tuple.index
    handle: int
    value: Value | None


class EstimatedBytes(NamedTuple):
    """Global-memory bytes one launch of a kernel is estimated to read and write."""

    read: int
    written: int


def _fuse_options(
    policy: Any, target: Any, shared_memory: Any, registers: Any, device: Any = None
) -> Any:
    """New fst_fuse_options holding the arguments; the caller destroys them."""
    lib = _lib.library()
    chosen = parse(Policy, policy, "policy")
    options = _lib.FuseOptionsP()
    check(lib.fst_fuse_options_create(ctypes.byref(options)))
    try:
        check(lib.fst_fuse_options_set_policy(options, c_value(chosen)))
        if target is not None:
            check(
                lib.fst_fuse_options_set_target_arch(
                    options, as_int(target, "target", C_INT_RANGE)
                )
            )
        if shared_memory is not None:
            bytes_ = as_int(shared_memory, "shared_memory", SIZE_RANGE)
            check(lib.fst_fuse_options_set_shared_memory_budget(options, bytes_))
        if registers is not None:
            check(
                lib.fst_fuse_options_set_register_cap(
                    options, as_int(registers, "registers", C_INT_RANGE)
                )
            )
        if device is not None:
            if not isinstance(device, str):
                raise Error(Status.INVALID_ARGUMENT, f"device {shown(device)} is not a str")
            check(lib.fst_fuse_options_set_device_model(options, device.encode()))
    except BaseException:
        lib.fst_fuse_options_destroy(options)
        raise
    return options


class Fusion(OwnedHandle):
    """A graph planned into fused kernels, made by :meth:`Graph.fuse`.

    It keeps the graph's context alive and copies what it needs of the graph (the inputs'
    and outputs' names, dtypes and shapes), so the graph may be closed afterwards.
    Immutable: queries and runs are thread-safe.
    """

    _destroy = "fst_fusion_destroy"

    def __init__(self, pointer: Any, graph: Any) -> None:
        # What can fail comes first: the handle is owned only once the object is complete.
        input_specs: list[TensorSpec] = graph.input_specs()
        output_specs: list[TensorSpec] = graph.output_specs()
        super().__init__(pointer, "fusion")
        self._context = graph.context
        self._graph_ref = weakref.ref(graph)
        self._input_specs = input_specs
        self._output_specs = output_specs
        self._kernels: list[Kernel] | None = None

    @classmethod
    def _create(
        cls,
        graph: Any,
        policy: Any,
        target: Any,
        shared_memory: Any,
        registers: Any,
        device: Any = None,
    ) -> Fusion:
        lib = _lib.library()
        options = _fuse_options(policy, target, shared_memory, registers, device)
        try:
            pointer = _lib.FusionP()
            check(graph._call("fst_fuse", options, ctypes.byref(pointer)))
        finally:
            lib.fst_fuse_options_destroy(options)
        try:
            return cls(pointer, graph)
        except BaseException:
            lib.fst_fusion_destroy(pointer)
            raise

    @property
    def context(self):
        """The context the fusion runs in."""
        return self._context

    @property
    def input_specs(self) -> list[TensorSpec]:
        """Name, dtype and shape of each graph input, in order."""
        return list(self._input_specs)

    @property
    def output_specs(self) -> list[TensorSpec]:
        """Name, dtype and shape of each graph output, in order."""
        return list(self._output_specs)

    @property
    def input_names(self) -> list[str]:
        """The graph's input names, in order."""
        return [spec.name for spec in self._input_specs]

    @property
    def output_names(self) -> list[str]:
        """The graph's output names, in order."""
        return [spec.name for spec in self._output_specs]

    @property
    def plan(self) -> str:
        """The plan in words: kernels, operations, schedules, buffers, estimates, boundaries."""
        lib = _lib.library()
        text = ctypes.c_char_p()
        check(self._call("fst_fusion_dump", ctypes.byref(text)))
        try:
            return decode(text.value)
        finally:
            lib.fst_string_free(text)

    @property
    def constants(self) -> list[bytes]:
        """The tensor constants the plan reads, in ``constant`` parameter index order: a copy
        of each one's data (row-major, in its dtype's storage format), for a framework that
        launches the kernels itself and uploads the constants."""
        count = ctypes.c_size_t()
        check(self._call("fst_fusion_constant_count", ctypes.byref(count)))
        out = []
        for index in range(count.value):
            data = ctypes.c_void_p()
            size = ctypes.c_size_t()
            check(self._call("fst_fusion_constant", index, ctypes.byref(data), ctypes.byref(size), None))
            out.append(ctypes.string_at(data.value, size.value))
        return out

    def _constant_address(self, index: int) -> int:
        """Where the fusion keeps constant `index` on the host."""
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        check(self._call("fst_fusion_constant", index, ctypes.byref(data), ctypes.byref(size), None))
        return int(data.value or 0)

    @property
    def workspace_size(self) -> int:
        """Bytes of workspace a run needs for intermediates between kernels."""
        size = ctypes.c_size_t()
        check(self._call("fst_fusion_workspace_size", ctypes.byref(size)))
        return size.value

    @api("Fusion.compile_stats")
    def compile_stats(self) -> CompileStats:
        """What compiling this fusion's kernels did so far: nothing before its first run (or
        PTX request), then each kernel compiled or found in memory or on disk."""
        return compile_stats.read(self._call, "fst_fusion_compile_stat")

    def _planned(self) -> tuple[int, int]:
        planned = ctypes.c_uint64()
        lower = ctypes.c_uint64()
        check(
            self._call("fst_fusion_planned_bytes", ctypes.byref(planned), ctypes.byref(lower))
        )
        return planned.value, lower.value

    @property
    def planned_bytes(self) -> int:
        """Global-memory bytes the plan moves."""
        return self._planned()[0]

    @property
    def lower_bound_bytes(self) -> int:
        """The least any plan moves: each input read once, each output written once."""
        return self._planned()[1]

    @property
    def kernels(self) -> list[Kernel]:
        """The kernels in launch order."""
        self._handle  # noqa: B018 - raises when the fusion is closed
        if self._kernels is None:
            count = ctypes.c_size_t()
            check(self._call("fst_fusion_kernel_count", ctypes.byref(count)))
            kernels = []
            for index in range(count.value):
                pointer = _lib.KernelP()
                check(self._call("fst_fusion_kernel", index, ctypes.byref(pointer)))
                kernels.append(Kernel(self, pointer, index))
            self._kernels = kernels
        return list(self._kernels)

    @property
    def steps(self) -> list[Step]:
        """The steps in the order a run takes them: each launches a kernel or runs an
        opaque operation, after everything that produces what it reads."""
        self._handle  # noqa: B018 - raises when the fusion is closed
        return opaque_steps(self)

    @property
    def opaque_ops(self) -> list[OpaqueOp]:
        """The opaque operations in graph order, with where the plan puts their operands
        and results."""
        self._handle  # noqa: B018 - raises when the fusion is closed
        return all_opaque_ops(self)

    @api("Fusion.run")
    def run(
        self,
        *args: Any,
        outputs: Any = None,
        workspace: Any = None,
        stream: Any = None,
        opaque: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Runs every kernel of the plan on the context's backend.

        Inputs by name (``run(x=a, w=b)`` or ``run({"x": a, "w": b})``) give a dict of
        outputs by name; a list (``run([a, b])`` or ``run(a, b)``) gives a list in output
        order. Host backend: numpy arrays, checked against the graph's dtypes and shapes.
        CUDA backend: device arrays (``__cuda_array_interface__`` or DLPack), see the
        package documentation for streams and output allocation.

        Args:
            outputs: arrays to write, as a list in output order or a dict by name; None
                allocates them (numpy on host, like the first input on CUDA).
            workspace: at least :attr:`workspace_size` bytes (an array or an address), or
                None to let the library allocate it for the run.
            stream: the CUDA stream (an int handle, or an object with ``.cuda_stream`` or
                ``.ptr``); ignored by the host backend.
            opaque: a callable run for each opaque step with an :class:`OpaqueCall` (its
                operands, the result to fill, the stream); required when the plan has
                opaque operations. An exception it raises stops the run, which then raises
                :class:`Error` naming the operation, chained to that exception.
        """
        from .run import run_fusion

        return run_fusion(self, args, kwargs, outputs, workspace, stream, opaque)

    def __repr__(self) -> str:
        if self.closed:
            return "<fstitch.Fusion closed>"
        return (
            f"<fstitch.Fusion kernels={len(self.kernels)} inputs={self.input_names} "
            f"outputs={self.output_names}>"
        )


class Kernel:
    """One kernel of a fusion, owned by it (it keeps the fusion alive)."""

    def __init__(self, fusion: Fusion, pointer: Any, index: int) -> None:
        self._fusion = fusion
        self._kernel = pointer
        self._index = index

    @property
    def _handle(self) -> Any:
        self._fusion._handle  # noqa: B018 - raises when the fusion is closed
        return self._kernel

    def _call(self, function: str, *args: Any) -> Any:
        """Calls the library's `function` with this kernel first, holding its fusion in use."""
        with self._fusion._in_use():
            return getattr(_lib.library(), function)(self._kernel, *args)

    @property
    def fusion(self) -> Fusion:
        """The fusion this kernel belongs to."""
        return self._fusion

    @property
    def index(self) -> int:
        """Position in launch order."""
        return self._index

    def _text(self, function: str) -> str:
        text = ctypes.c_char_p()
        check(self._call(function, ctypes.byref(text)))
        return decode(text.value)

    @property
    def name(self) -> str:
        """The entry point's name in the source."""
        return self._text("fst_kernel_name")

    @property
    def source(self) -> str:
        """The complete CUDA C program of the kernel (prelude and definition)."""
        return self._text("fst_kernel_source")

    @property
    def ptx(self) -> str:
        """The PTX for the fusion's target; the first request compiles the fusion with NVRTC.

        Raises:
            Error: NO_COMPILER without NVRTC, COMPILE when compilation fails.
        """
        return self._text("fst_kernel_ptx")

    @property
    def cubin(self) -> bytes:
        """The CUBIN for the fusion's target, compiled as for :attr:`ptx`."""
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        check(self._call("fst_kernel_cubin", ctypes.byref(data), ctypes.byref(size)))
        if size.value == 0 or not data.value:
            return b""
        return ctypes.string_at(data.value, size.value)

    @property
    def launch_config(self) -> LaunchConfig:
        """Planned grid, block and dynamic shared memory bytes.

        The CUDA backend's launches use the same block and shared memory, and the grid
        :meth:`grid_for_occupancy` gives at the compiled kernel's occupancy.
        """
        grid = (ctypes.c_uint32 * 3)()
        block = (ctypes.c_uint32 * 3)()
        shared = ctypes.c_size_t()
        check(
            self._call("fst_kernel_launch_config", grid, block, ctypes.byref(shared))
        )
        return LaunchConfig(tuple(grid), tuple(block), shared.value)  # type: ignore[arg-type]

    def grid_for_occupancy(
        self, blocks_per_multiprocessor: int, multiprocessors: int
    ) -> tuple[int, int, int]:
        """The grid fstitch's CUDA launcher uses at this occupancy, for launching it yourself.

        ``blocks_per_multiprocessor`` is what the driver's occupancy calculator reports for
        the compiled kernel at ``launch_config``'s block and shared memory, ``multiprocessors``
        the device's count. The grid is one wave of resident blocks, or the kernel's work units
        when there are fewer, at least one block; :attr:`launch_config` holds the planned grid.
        Raises :class:`Error` (INVALID_ARGUMENT) for 0 or a value outside 1 .. 2**32 - 1.
        """
        blocks = as_int(blocks_per_multiprocessor, "blocks_per_multiprocessor", UINT32_RANGE)
        sms = as_int(multiprocessors, "multiprocessors", UINT32_RANGE)
        grid = (ctypes.c_uint32 * 3)()
        check(self._call("fst_kernel_grid_for_occupancy", blocks, sms, grid))
        return tuple(grid)  # type: ignore[return-value]

    @property
    def params(self) -> list[Param]:
        """The pointer parameters in order."""
        count = ctypes.c_size_t()
        check(self._call("fst_kernel_param_count", ctypes.byref(count)))
        graph = self._fusion._graph_ref()
        params = []
        for index in range(count.value):
            kind = ctypes.c_int()
            position = ctypes.c_size_t()
            handle = _lib.fst_value()
            check(
                self._call(
                    "fst_kernel_param",
                    index,
                    ctypes.byref(kind),
                    ctypes.byref(position),
                    ctypes.byref(handle),
                )
            )
            # Scratch in the workspace (a split reduction's partials or counters) holds no value.
            value = (
                Value(graph, handle.value)
                if graph is not None and not graph.closed and handle.value != 0
                else None
            )
            params.append(
                Param(from_c(ParamKind, kind.value), position.value, handle.value, value)
            )
        return params

    @property
    def estimated_bytes(self) -> EstimatedBytes:
        """Estimated global-memory bytes read and written by one launch."""
        read = ctypes.c_uint64()
        written = ctypes.c_uint64()
        check(
            self._call("fst_kernel_estimated_bytes", ctypes.byref(read), ctypes.byref(written))
        )
        return EstimatedBytes(read.value, written.value)

    @property
    def zeroed_workspace(self) -> tuple[int, int]:
        """(offset, bytes) of the workspace that must be zero when the kernel starts.

        bytes is 0 when there is none. Fusion.run and Kernel.launch clear it themselves; a
        framework that launches the kernel function itself must clear it first.
        """
        offset = ctypes.c_size_t()
        size = ctypes.c_size_t()
        check(
            self._call("fst_kernel_zeroed_workspace", ctypes.byref(offset), ctypes.byref(size))
        )
        return offset.value, size.value

    @property
    def launch_kind(self) -> LaunchKind:
        """REGULAR (cuLaunchKernel), COOPERATIVE (all blocks resident at once) or CLUSTER
        (cuLaunchKernelEx with clusters of cluster_blocks blocks along x)."""
        kind = ctypes.c_int()
        check(self._call("fst_kernel_launch_kind", ctypes.byref(kind)))
        return from_c(LaunchKind, kind.value)

    @property
    def cluster_blocks(self) -> int:
        """Blocks per thread-block cluster of a CLUSTER kernel (consecutive in blockIdx.x); 1
        for every other kernel."""
        blocks = ctypes.c_uint32()
        check(self._call("fst_kernel_cluster_blocks", ctypes.byref(blocks)))
        return blocks.value

    @property
    def function(self) -> int:
        """The kernel's CUfunction in the current CUDA context (loads it on first use).

        Raises:
            Error: UNSUPPORTED on the host backend.
        """
        function = ctypes.c_void_p()
        check(self._call("fst_kernel_function", ctypes.byref(function)))
        return function.value or 0

    @api("Kernel.launch")
    def launch(self, args: Sequence[Any], stream: Any = None) -> None:
        """Launches this kernel alone with one buffer per parameter, in :attr:`params` order.

        Input and output parameters take arrays (numpy on host, device arrays on CUDA),
        checked like run()'s, or raw addresses (ints); workspace parameters take the
        address of the workspace base plus their offset (an int) or an array there.
        Constant parameters take None on the host backend (the fusion's own copy of the
        data) or an address; on CUDA a device copy of :attr:`Fusion.constants` the caller
        uploaded.
        On CUDA the call only queues the launch on `stream`.
        """
        from .run import launch_kernel

        launch_kernel(self, list(args), stream)

    def __repr__(self) -> str:
        if self._fusion.closed:
            return "<fstitch.Kernel of a closed fusion>"
        config = self.launch_config
        return (
            f"<fstitch.Kernel {self.name} grid={config.grid} block={config.block} "
            f"shared={config.shared}>"
        )
