"""ptxbench's PyTorch reference host: a definition's `reference` (FlashInfer-Trace's
PyTorch source defining run()) behind the harness's host protocol.

The harness starts this script, with the Python the worker was configured with
(--torch-python), for a definition that has no native (cuBLAS / cuDNN) reference,
or when told to use the PyTorch one. It is ptxbench's code and the dataset's, never
a submission's: the candidate runs elsewhere, in its sandbox. The protocol itself
(the channel, the buffers mapped from the harness's descriptors, the bracket's shared
words, the calibration) is the C++ host loop of worker/runner/hosts/host_loop.h, in
libptxbench-host.so, on a thread of its own; serve() asks it for what only this
script can do and answers:

  load(definition)    compile the reference's source and find run();
  workload(request)   the next workload (axes, the values of fixed scalar inputs);
  call(views, keep)   run the reference on the tensors the harness shared: a timing
                      call (keep = 0) drops the result, so the baseline is the
                      reference's own work; a compute call (keep = 1) writes the
                      result into the harness's expected-output buffers.

The Triton candidate host (triton_host.py) shares this plumbing.

The reference follows FlashInfer-Bench's convention: run() takes the inputs in the
definition's order (tensors; a scalar input as a Python number) and returns the
outputs: one tensor, a tuple or list in the definition's order, or a dict by name.

The functions above `TorchHost` need only torch (CPU tests run them with Debian's
python3-torch); `TorchHost` needs CUDA.

  python3 torch_host.py --channel FD --library PATH/libptxbench-host.so
"""

import ctypes
import inspect
import json
import sys
import traceback
import types

# ptxb::DType (worker/kernel_abi/ptxbench/kernel_abi.h), by value: the
# definition's dtype name and how a CUDA array interface describes one element.
# bfloat16 and the float8 types have no array-interface code: they travel as
# integers of their width and are viewed as their type.
PTXB_DTYPES = {
    0: ("float32", "<f4"),
    1: ("float16", "<f2"),
    2: ("bfloat16", "<i2"),
    3: ("float8_e4m3fn", "|u1"),
    4: ("float8_e5m2", "|u1"),
    6: ("int64", "<i8"),
    7: ("int32", "<i4"),
    8: ("int16", "<i2"),
    9: ("int8", "|i1"),
    10: ("bool", "|b1"),
}

MAX_ERROR = 3000  # characters of an error the harness logs


class ReferenceError(Exception):
    """A problem of the definition's reference, said so the user can act on it."""


def torch_dtype(torch, name):
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ReferenceError(f"dtype {name} is not known to torch {torch.__version__}")
    return dtype


def _where(exc):
    """The innermost line of the reference's own source in a traceback."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<reference>"]
    return f" (reference line {frames[-1].lineno})" if frames else ""


def load_run(source):
    """Compiles the reference's source in a module of its own; its run()."""
    if not source.strip():
        raise ReferenceError("the definition has no PyTorch reference")
    try:
        code = compile(source, "<reference>", "exec")
    except SyntaxError as e:
        raise ReferenceError(f"the reference does not compile: {e.msg} (line {e.lineno})") from None
    module = types.ModuleType("ptxbench_reference")
    try:
        exec(code, module.__dict__)
    except Exception as e:  # an import it needs, a top-level error
        raise ReferenceError(
            f"the reference failed while loading: {type(e).__name__}: {e}{_where(e)}") from None
    run = module.__dict__.get("run")
    if not callable(run):
        raise ReferenceError("the reference defines no run() function")
    return run


def arity(run):
    """(required, positional): how many positional arguments run() needs and takes; None
    when that cannot be told (a builtin or wrapped callable, *args): its call says."""
    try:
        params = inspect.signature(run).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return sum(p.default is p.empty for p in positional), len(positional)


def check_arity(run, definition):
    """run() must take the inputs (FlashInfer-Bench's value-returning style)."""
    inputs, outputs = list(definition["inputs"]), list(definition["outputs"])
    counts = arity(run)
    if counts is None or counts[0] <= len(inputs) <= counts[1]:
        return
    positional = counts[1]
    hint = ""
    if positional == len(inputs) + len(outputs):
        hint = (" (it seems to take the outputs too: a reference returns them, "
                f"as in `return {', '.join(outputs)}`)")
    raise ReferenceError(
        f"the reference's run() takes {positional} parameters; it must take the "
        f"{len(inputs)} inputs ({', '.join(inputs)}) in order and return the outputs{hint}")


def normalize_outputs(torch, definition, result):
    """The outputs run() returned, as tensors in the definition's order."""
    specs = definition["outputs"]
    names = list(specs)

    def as_tensor(name, value):
        if isinstance(value, torch.Tensor):
            return value
        if isinstance(value, (bool, int, float)):
            return torch.tensor(value, dtype=torch_dtype(torch, specs[name]["dtype"]))
        raise ReferenceError(
            f"the reference returned {type(value).__name__} for output {name}, not a tensor")

    if isinstance(result, dict):
        missing = [n for n in names if n not in result]
        if missing:
            raise ReferenceError(f"the reference's result has no output {', '.join(missing)}")
        return [as_tensor(n, result[n]) for n in names]
    if isinstance(result, (tuple, list)):
        if len(result) != len(names):
            raise ReferenceError(
                f"the reference returned {len(result)} values; the definition has "
                f"{len(names)} outputs ({', '.join(names)})")
        return [as_tensor(n, v) for n, v in zip(names, result)]
    if len(names) != 1:
        raise ReferenceError(
            f"the reference returned one value; the definition has {len(names)} outputs "
            f"({', '.join(names)}): return a tuple in that order")
    return [as_tensor(names[0], result)]


def check_output(torch, name, tensor, sizes, dtype_name):
    """An output must have the definition's shape and dtype exactly, as FlashInfer-Bench
    requires of a solution: a reference that differs would fail every solution."""
    if list(tensor.shape) != list(sizes):
        raise ReferenceError(f"the reference's output {name} has shape {list(tensor.shape)}; "
                             f"the definition says {list(sizes)}")
    if tensor.dtype != torch_dtype(torch, dtype_name):
        raise ReferenceError(f"the reference's output {name} is {tensor.dtype}; the "
                             f"definition says {dtype_name}")


def call_arguments(definition, tensors, scalars):
    """run()'s arguments: each input's tensor, or, for a scalar input (shape null), the
    value the workload fixes (as the dataset wrote it) or the drawn one."""
    args = []
    for (name, spec), tensor in zip(definition["inputs"].items(), tensors):
        if spec.get("shape") is None:
            args.append(scalars[name] if name in scalars else tensor.item())
        else:
            args.append(tensor)
    return args


def describe(exc):
    if isinstance(exc, ReferenceError):
        return str(exc)[:MAX_ERROR]
    return f"the PyTorch reference raised {type(exc).__name__}: {exc}{_where(exc)}"[:MAX_ERROR]


# ptxb::Tensor (worker/kernel_abi/ptxbench/kernel_abi.h), as the host loop hands it over.
class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("sizes", ctypes.c_int64 * 8),
                ("ndim", ctypes.c_int), ("dtype", ctypes.c_int32)]


# ptxb_host_kind (worker/runner/hosts/host_library.cc).
_ENDED, _LOAD, _WORKLOAD, _CALL = 0, 1, 2, 3


def serve(library, channel, host, describe):
    """The host loop of `library` on `channel`, `host`'s load/workload/call for its
    requests; each exception becomes the request's failure, in describe()'s words.
    Returns the process's exit code."""
    lib = ctypes.CDLL(library)
    lib.ptxb_host_start.argtypes = [ctypes.c_int]
    lib.ptxb_host_next.argtypes = [
        ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.POINTER(ctypes.POINTER(_Tensor))),
        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int)]
    lib.ptxb_host_answer.argtypes = [ctypes.c_int, ctypes.c_char_p]
    lib.ptxb_host_answer.restype = None
    if lib.ptxb_host_start(channel) != 0:
        return 2
    text, views = ctypes.c_char_p(), ctypes.POINTER(ctypes.POINTER(_Tensor))()
    count, stream, keep = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_int()
    while True:
        kind = lib.ptxb_host_next(ctypes.byref(text), ctypes.byref(views), ctypes.byref(count),
                                  ctypes.byref(stream), ctypes.byref(keep))
        if kind == _ENDED:
            return count.value
        try:
            if kind == _LOAD:
                host.load(text.value.decode("utf-8"))
            elif kind == _WORKLOAD:
                host.workload(text.value.decode("utf-8"))
            else:
                host.call([views[i].contents for i in range(count.value)], stream.value or 0,
                          keep.value)
            lib.ptxb_host_answer(0, b"")
        except Exception as e:
            lib.ptxb_host_answer(1, describe(e).encode("utf-8", "replace")[:MAX_ERROR])


class _CudaArray:
    """A device buffer as torch.as_tensor imports it, without a copy."""

    def __init__(self, pointer, shape, typestr):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (pointer, False), "version": 2, "strides": None}


class TorchHost:
    def __init__(self, torch):
        self.torch = torch
        self.definition = None
        self.run = None
        self.scalars = {}
        self.streams = {}
        self.views = {}  # data pointers -> torch tensors over them

    def load(self, text):
        self.definition = json.loads(text)
        self.run = load_run(self.definition.get("reference", ""))
        check_arity(self.run, self.definition)

    def workload(self, text):
        self.scalars = json.loads(text).get("scalars", {})
        self.views.clear()

    def tensors(self, views):
        """The harness's buffers as torch tensors, without copies (kept per buffer set)."""
        key = tuple(v.data for v in views)
        tensors = self.views.get(key)
        if tensors is None:
            tensors = [as_torch(self.torch, v) for v in views]
            self.views[key] = tensors
        return tensors

    def stream(self, stream):
        if stream not in self.streams:
            self.streams[stream] = self.torch.cuda.ExternalStream(stream)
        return self.streams[stream]

    def call(self, views, stream, keep):
        torch = self.torch
        tensors = self.tensors(views)
        n_in = len(self.definition["inputs"])
        with torch.no_grad(), torch.cuda.stream(self.stream(stream)):
            inputs = tensors[:n_in]
            if keep:
                # The harness's pristine inputs: a reference that writes
                # its inputs must not change what the candidate is given.
                inputs = [t.clone() for t in inputs]
            result = self.run(*call_arguments(self.definition, inputs, self.scalars))
            if keep:
                outputs = normalize_outputs(torch, self.definition, result)
                for (name, spec), got, into in zip(self.definition["outputs"].items(),
                                                   outputs, tensors[n_in:]):
                    check_output(torch, name, got, into.shape, spec["dtype"])
                    into.copy_(got)


def as_torch(torch, view):
    """A ptxb::Tensor of the harness's as a torch tensor over the same memory."""
    name, typestr = PTXB_DTYPES[view.dtype]
    t = torch.as_tensor(_CudaArray(view.data, view.sizes[: view.ndim], typestr), device="cuda")
    dtype = torch_dtype(torch, name)
    return t if t.dtype == dtype else t.view(dtype)


def main(argv):
    channel, library = None, None
    for flag, value in zip(argv[1::2], argv[2::2]):
        if flag == "--channel":
            channel = int(value)
        elif flag == "--library":
            library = value
    if channel is None or library is None:
        print("usage: torch_host.py --channel FD --library libptxbench-host.so", file=sys.stderr)
        return 2
    # torch first: the CUDA runtime it loads is the one the library then uses.
    # CUDA itself starts at the harness's setup request, in the library.
    import torch

    return serve(library, channel, TorchHost(torch), describe)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
