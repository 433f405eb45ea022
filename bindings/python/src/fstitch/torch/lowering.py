"""Lowering of one ATen FX graph, at the shapes of one call, to an fstitch graph and fusion.

The FX graph is interpreted with the concrete inputs of a call: symbolic sizes become
integers, every tensor node gets a meta tensor (its dtype and shape, from running the
operation on the meta device), and each operation becomes fstitch builders (aten_ops.py)
or an opaque operation that torch runs through the fusion's callback (opaque_ops.py).
Anything the lowering cannot express raises LoweringError, and the caller runs the FX
graph with torch instead.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx
import torch.utils._pytree as pytree

from ..compile_stats import CompileStats
from ..graph import Graph
from ..value import Value
from .aten_ops import CONVERTERS, VIEW_OPS, AsOpaque
from .opaque_ops import OpaqueRecord, OperandSlot
from .tensors import UnsupportedDtype, fstitch_dtype, to_numpy


aten = torch.ops.aten
_SPLITS = {aten.split.Tensor, aten.split_with_sizes.default}
_RESHAPES = {aten.view.default, aten._unsafe_view.default}


class LoweringError(Exception):
    """The graph cannot run through fstitch; the message says why."""


@dataclass(frozen=True)
class _Placeholder:
    """A tensor input of the FX graph, declared as an fstitch input when first used."""

    position: int


@dataclass(frozen=True)
class _Constant:
    """A tensor known while lowering (a get_attr tensor, a folded factory call)."""

    tensor: torch.Tensor


@dataclass
class Lowered:
    """What lowering made of a graph at one input signature.

    Attributes:
        graph: the fstitch graph.
        fusion: its fusion, or None when no output is computed by fstitch.
        input_positions: the FX placeholder feeding each fstitch input, in input order.
        output_sources: per leaf of the FX output, where it comes from: ("fused", k) the
            k-th fstitch output, ("arg", p) placeholder p itself, ("copy", p) a copy of it,
            ("constant", tensor) a copy of a constant, ("python", v) a non-tensor value.
        output_dtypes: torch dtype of each fstitch output.
        output_spec: the pytree structure of the FX output.
        opaque: opaque records by the handle of their fstitch value.
        aten_ops: how many times each ATen operation occurs.
        opaque_ops: the ATen operations run by torch, in graph order.
        ideal_kernels: memory-intensive regions connected without an opaque operation
            between them (views are free): the kernel count a perfect partition reaches.
        plan_seconds: the time to lower and fuse the graph (planning and code generation).
        device: where the graph's tensors are (the CPU, or one CUDA device).
        first_run_seconds: the time of the plan's first run, which compiles its kernels (or
            loads them from the disk cache) before it runs them; None until it has run.
        compile_stats: what that first run's compile did (fstitch.CompileStats: modules
            compiled and their time, found in memory or on disk); None until it has run.
    """

    graph: Graph
    fusion: Any
    input_positions: list[int]
    output_sources: list[tuple[str, Any]]
    output_dtypes: list[torch.dtype]
    output_spec: Any
    opaque: dict[int, OpaqueRecord]
    aten_ops: Counter = field(default_factory=Counter)
    opaque_ops: list[str] = field(default_factory=list)
    ideal_kernels: int = 0
    plan_seconds: float = 0.0
    device: torch.device = torch.device("cpu")
    first_run_seconds: float | None = None
    compile_stats: CompileStats | None = None


def _op_name(target: Any) -> str:
    return str(target) if isinstance(target, torch._ops.OpOverload) else getattr(target, "__name__", str(target))


def _is_nondeterministic(target: Any) -> bool:
    return torch.Tag.nondeterministic_seeded in getattr(target, "tags", ())


class _Regions:
    """Union-find over the nodes lowered to builders, to count the ideal kernels."""

    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}
        self.computes: set[Any] = set()

    def add(self, node: Any, compute: bool) -> None:
        self.parent[node] = node
        if compute:
            self.computes.add(node)

    def _root(self, node: Any) -> Any:
        while self.parent[node] is not node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def join(self, a: Any, b: Any) -> None:
        if a in self.parent and b in self.parent:
            self.parent[self._root(a)] = self._root(b)

    def count(self) -> int:
        return len({self._root(node) for node in self.computes})


_SIXTEEN_BIT_FLOATS = (torch.float16, torch.bfloat16)


class Lowering:
    """Lowers `gm` with the call arguments `args` into a graph of `context`.

    With `eager_rounding`, every operation computes in its torch result dtype, so an f16 or
    bf16 result is rounded to it after each operation and at each cast, as in eager. Without
    it, such a value is held in f32 inside the graph (the dtype it is computed in) and
    rounded only where it leaves fstitch: at an output and where torch runs an operation on
    it."""

    def __init__(
        self,
        gm: torch.fx.GraphModule,
        args: list[Any],
        context: Any,
        eager_rounding: bool = False,
        device: torch.device = torch.device("cpu"),
    ) -> None:
        self.gm = gm
        self.args = args
        self.eager_rounding = eager_rounding
        self.device = device  # where the graph's tensors are: the CPU, or one CUDA device
        self.graph = Graph(context)
        self.env: dict[torch.fx.Node, Any] = {}
        self.metas: dict[torch.fx.Node, Any] = {}
        self.inputs: dict[int, Value] = {}
        self.input_positions: list[int] = []
        self.opaque: dict[int, OpaqueRecord] = {}
        self.aten_ops: Counter = Counter()
        self.opaque_ops: list[str] = []
        self.regions = _Regions()

    # -- helpers the converters use ---------------------------------------------------------

    def meta(self, node: torch.fx.Node) -> Any:
        return self.metas[node]

    def result_dtype(self, node: torch.fx.Node) -> torch.dtype:
        return self.metas[node].dtype

    def promoted_dtype(self, a: Any, b: Any) -> torch.dtype:
        return torch.result_type(self._metas_of(a), self._metas_of(b))

    def held_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype a value of torch dtype `dtype` is computed and held in inside the graph."""
        if not self.eager_rounding and dtype in _SIXTEEN_BIT_FLOATS:
            return torch.float32
        return dtype

    def as_value(self, x: Any, dtype: torch.dtype | None = None) -> Value:
        """`x` (a lowered tensor or a Python scalar) as an fstitch Value, cast to the dtype a
        value of torch dtype `dtype` is held in (held_dtype)."""
        return self.as_stored(x, None if dtype is None else self.held_dtype(dtype))

    def as_cast(self, x: Any, dtype: torch.dtype) -> Value:
        """`x` cast to `dtype` by a cast of the graph (convert_element_type, _to_copy): a value
        already of exactly `dtype` (an f16 or bf16 input) stays itself, anything else is held
        as held_dtype says."""
        if isinstance(x, _Placeholder):
            x = self._input(x.position)
        if isinstance(x, Value) and x.dtype is fstitch_dtype(dtype):
            return x
        return self.as_value(x, dtype)

    def as_stored(self, x: Any, dtype: torch.dtype | None) -> Value:
        """`x` as an fstitch Value of exactly `dtype` (its own without one): what leaves the
        graph (an output, an operand of an operation torch runs), rounded to it where it is
        held wider."""
        target = None if dtype is None else fstitch_dtype(dtype)
        if isinstance(x, _Placeholder):
            x = self._input(x.position)
        elif isinstance(x, _Constant):
            # The fusion keeps a host copy and uploads it to the device it runs on.
            data = to_numpy(x.tensor.detach().cpu().contiguous())
            x = self.graph.constant_tensor(data, fstitch_dtype(x.tensor.dtype))
        elif isinstance(x, (bool, int, float)):
            if target is None:
                raise LoweringError(f"scalar {x!r} where a tensor was expected")
            return self.graph.constant(x, target)
        if not isinstance(x, Value):
            raise LoweringError(f"{type(x).__name__} where a tensor was expected")
        if target is not None and x.dtype is not target:
            x = x.cast(target)
        return x

    # -- the walk ---------------------------------------------------------------------------

    def lower(self, policy: str, target: int | None) -> Lowered:
        placeholders = 0
        output = None
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self._placeholder(node, placeholders)
                placeholders += 1
            elif node.op == "get_attr":
                value = getattr(self.gm, node.target)
                self.env[node] = _Constant(value) if isinstance(value, torch.Tensor) else value
                self.metas[node] = value.to("meta") if isinstance(value, torch.Tensor) else value
            elif node.op == "call_function":
                self._call(node)
            elif node.op == "output":
                output = node.args[0]
            else:
                raise LoweringError(f"FX node kind {node.op} ({node.target}) is not supported")
        leaves, spec = pytree.tree_flatten(output)
        sources, dtypes = self._outputs(leaves)
        fusion = self.graph.fuse(policy=policy, target=target) if dtypes else None
        return Lowered(
            graph=self.graph,
            fusion=fusion,
            input_positions=self.input_positions,
            output_sources=sources,
            output_dtypes=dtypes,
            output_spec=spec,
            opaque=self.opaque,
            aten_ops=self.aten_ops,
            opaque_ops=self.opaque_ops,
            ideal_kernels=self.regions.count(),
            device=self.device,
        )

    def on_graph_device(self, device: Any) -> bool:
        """Whether `device` (a torch.device or its text; "cuda" meaning the current one) is
        the one the graph runs on."""
        device = torch.device(device)
        if device.type != self.device.type:
            return False
        if device.type != "cuda" or device.index is None:
            return True
        return device.index == self.device.index

    def _placeholder(self, node: torch.fx.Node, position: int) -> None:
        arg = self.args[position]
        if isinstance(arg, torch.Tensor):
            if arg.device != self.device:
                raise LoweringError(f"input {node.name} is on {arg.device}, the graph runs on {self.device}")
            self.env[node] = _Placeholder(position)
            self.metas[node] = torch.empty(tuple(arg.shape), dtype=arg.dtype, device="meta")
        else:
            self.env[node] = arg
            self.metas[node] = arg

    def _input(self, position: int) -> Value:
        if position not in self.inputs:
            tensor = self.args[position]
            value = self.graph.input(f"in{position}", fstitch_dtype(tensor.dtype), tuple(tensor.shape))
            self.inputs[position] = value
            self.input_positions.append(position)
        return self.inputs[position]

    def _metas_of(self, structure: Any) -> Any:
        return torch.fx.node.map_arg(structure, lambda n: self.metas[n])

    def _lowered_of(self, structure: Any) -> Any:
        return torch.fx.node.map_arg(structure, lambda n: self.env[n])

    def _call(self, node: torch.fx.Node) -> None:
        target = node.target
        if target is operator.getitem:
            source, index = node.args
            self.env[node] = self.env[source][index]
            self.metas[node] = self.metas[source][index]
            return
        if not isinstance(target, torch._ops.OpOverload):
            # Size arithmetic (operator.mul, sym_size...) on the concrete sizes of this call.
            value = target(*self._metas_of(node.args), **self._metas_of(node.kwargs))
            if isinstance(value, torch.Tensor):
                raise LoweringError(f"{_op_name(target)} gives a tensor outside ATen")
            self.env[node] = value
            self.metas[node] = value
            return
        name = _op_name(target)
        self.aten_ops[name] += 1
        if target._schema.is_mutable:
            raise LoweringError(f"{name} mutates its operands")
        tensor_args = [n for n in node.all_input_nodes if isinstance(self.metas[n], torch.Tensor)]
        if not tensor_args and not _is_nondeterministic(target):
            self._fold(node)
            return
        self.metas[node] = self._meta_result(node)
        self._check_dtypes(node)
        converter = CONVERTERS.get(target)
        if converter is not None:
            try:
                self.env[node] = self._convert(node, converter)
                return
            except AsOpaque:
                pass
        self._opaque(node)

    def _meta_result(self, node: torch.fx.Node) -> Any:
        kwargs = dict(self._metas_of(node.kwargs))
        if "device" in kwargs:
            kwargs["device"] = "meta"
        try:
            return node.target(*self._metas_of(node.args), **kwargs)
        except Exception as error:  # noqa: BLE001 - any failure means torch must run it
            raise LoweringError(f"{_op_name(node.target)} has no meta kernel at these shapes: {error}") from error

    def _check_dtypes(self, node: torch.fx.Node) -> None:
        for leaf in pytree.tree_leaves(self.metas[node]):
            if isinstance(leaf, torch.Tensor):
                try:
                    fstitch_dtype(leaf.dtype)
                except UnsupportedDtype as error:
                    raise LoweringError(f"{_op_name(node.target)}: {error}") from None

    def _fold(self, node: torch.fx.Node) -> None:
        """A deterministic operation without tensor operands (full, arange...): computed now."""
        value = node.target(*self._metas_of(node.args), **self._metas_of(node.kwargs))
        if isinstance(value, torch.Tensor):
            if value.device.type != "cpu" and not self.on_graph_device(value.device):
                raise LoweringError(f"{_op_name(node.target)} makes a tensor on {value.device}")
            fstitch_dtype(value.dtype)
            self.env[node] = _Constant(value)
            self.metas[node] = value.to("meta")
        else:
            self.env[node] = value
            self.metas[node] = value

    def _convert(self, node: torch.fx.Node, converter: Any) -> Any:
        args = self._lowered_of(node.args)
        kwargs = self._lowered_of(node.kwargs)
        result = converter(self, node, *args, **kwargs)
        meta = self.metas[node]
        results = result if isinstance(result, list) else [result]
        metas = meta if isinstance(meta, (list, tuple)) else [meta]
        for value, expected in zip(results, metas):
            allowed = (fstitch_dtype(expected.dtype), fstitch_dtype(self.held_dtype(expected.dtype)))
            if value.shape != tuple(expected.shape) or value.dtype not in allowed:
                raise LoweringError(
                    f"{_op_name(node.target)} lowered to {value.dtype}{list(value.shape)}; torch "
                    f"gives {expected.dtype}{list(expected.shape)}"
                )
        self.regions.add(node, compute=node.target not in VIEW_OPS)
        for producer in node.all_input_nodes:
            self.regions.join(node, producer)
        return result

    def _opaque(self, node: torch.fx.Node) -> None:
        name = _op_name(node.target)
        self.opaque_ops.append(name)
        leaves, spec = pytree.tree_flatten((node.args, node.kwargs))
        fixed: list[Any] = []
        operand_slots: list[OperandSlot] = []
        operands: list[Value] = []
        for slot, leaf in enumerate(leaves):
            views: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
            if isinstance(leaf, torch.fx.Node):
                leaf, views = self._torch_side_views(leaf)
            lowered = self.env[leaf] if isinstance(leaf, torch.fx.Node) else leaf
            if isinstance(lowered, (_Placeholder, Value)):
                operands.append(self.as_stored(lowered, self.metas[leaf].dtype))
                operand_slots.append(OperandSlot(slot, self.metas[leaf].dtype, views))
                fixed.append(None)
            elif isinstance(lowered, _Constant):
                fixed.append(lowered.tensor)
            elif isinstance(lowered, (list, tuple)) and any(isinstance(x, (Value, _Placeholder)) for x in lowered):
                raise LoweringError(f"{name} takes a list of computed tensors")
            else:
                fixed.append(lowered)
        meta = self.metas[node]
        outputs = [meta] if isinstance(meta, torch.Tensor) else list(meta)
        results: list[Any] = []
        for index, result in enumerate(outputs):
            if not isinstance(result, torch.Tensor):
                results.append(result)
                continue
            value = self.graph.opaque(
                f"{node.name}-{name}", operands, fstitch_dtype(result.dtype), tuple(result.shape)
            )
            self.opaque[value.handle] = OpaqueRecord(
                target=node.target,
                node_name=node.name,
                spec=spec,
                fixed=fixed,
                operand_slots=operand_slots,
                output_index=None if isinstance(meta, torch.Tensor) else index,
                dtype=result.dtype,
            )
            results.append(value)
        self.env[node] = results[0] if isinstance(meta, torch.Tensor) else tuple(results)

    def _torch_side_views(self, node: torch.fx.Node) -> tuple[torch.fx.Node, list[Any]]:
        """The tensor a chain of views of `node` starts from, and the views (first first).

        An opaque operand that is a view (a weight's transpose before a matmul) is made by
        torch from its source in the callback, where it is free, rather than copied by a
        kernel."""
        views = []
        while node.target in VIEW_OPS and node.target not in _SPLITS and isinstance(self.env[node], Value):
            source = node.args[0]
            if not isinstance(source, torch.fx.Node) or not isinstance(self.env[source], (Value, _Placeholder)):
                break
            target = aten.reshape.default if node.target in _RESHAPES else node.target
            views.append((target, tuple(self._metas_of(node.args[1:])), dict(self._metas_of(node.kwargs))))
            node = source
        return node, views[::-1]

    def _outputs(self, leaves: list[Any]) -> tuple[list[tuple[str, Any]], list[torch.dtype]]:
        sources: list[tuple[str, Any]] = []
        dtypes: list[torch.dtype] = []
        by_handle: dict[int, int] = {}
        for leaf in leaves:
            lowered = self.env[leaf] if isinstance(leaf, torch.fx.Node) else leaf
            if isinstance(lowered, _Placeholder):
                sources.append(("arg", lowered.position))
            elif isinstance(lowered, _Constant):
                sources.append(("constant", lowered.tensor))
            elif isinstance(lowered, Value):
                if lowered.name is not None:  # an input unchanged (through clone, a cast to its own dtype)
                    sources.append(("copy", int(lowered.name[2:])))
                    continue
                if lowered.handle not in by_handle:
                    by_handle[lowered.handle] = len(dtypes)
                    dtype = self.metas[leaf].dtype
                    self.graph.output(f"out{len(dtypes)}", self.as_stored(lowered, dtype))
                    dtypes.append(dtype)
                sources.append(("fused", by_handle[lowered.handle]))
            elif isinstance(lowered, (list, tuple)):
                raise LoweringError("an output that is a list of tensors")
            else:
                sources.append(("python", lowered))
        return sources, dtypes
