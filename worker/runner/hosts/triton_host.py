"""ptxbench's Triton candidate host: a Triton submission behind the harness's host protocol,
in the candidate's sandbox (docs/SECURITY.md, "Triton candidates").

A Triton submission is one Python module, kernel.py (PTXBench's contract): it imports
torch, triton and triton.language, defines @triton.jit kernels and a destination-passing
run(inputs..., outputs...): the definition's inputs in order (a scalar input as a Python
number), then its outputs, which run() writes. What it returns is ignored.

Two processes run this script per evaluation (worker/runner/hosts/isolation.h), both as the
candidate's uid in its sandbox:
  --jit      the JIT host: the harness makes one call per workload, on inputs no timed
             call gets, so that Triton compiles and autotunes everything the workloads need
             into its cache, which this host may write;
  (default)  the timing host: the same calls, checked and timed, with that cache read-only
             and nothing it may write executable. A kernel variant the JIT did not make
             cannot be compiled here: Triton's attempt to write the cache fails the call.

The protocol is the C++ host loop of libptxbench-host.so (host_loop.h), as for the PyTorch
reference host (torch_host.py, whose plumbing this one shares: serve() and the harness's
buffers as tensors); this script answers its load, workload and call.

  python3 -I triton_host.py --channel FD --library libptxbench-host.so --kernel kernel.py [--jit]
"""

import importlib.util
import json
import os
import sys
import traceback

MAX_ERROR = 3000  # characters of an error the harness logs


def _shared():
    """torch_host.py, beside this script (isolated mode puts no script directory on the path)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_host.py")
    spec = importlib.util.spec_from_file_location("ptxbench_torch_host", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


th = _shared()


class KernelError(Exception):
    """A problem of the submission, said so the model can act on it."""


def _where(exc, path):
    """The innermost line of the submission's own file in a traceback."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return f" (kernel.py line {frames[-1].lineno})" if frames else ""


def describe(exc, path):
    if isinstance(exc, KernelError):
        return str(exc)[:MAX_ERROR]
    kind = type(exc)
    # Triton's compiler errors carry the kernel's source around the fault.
    if any(c.__module__.startswith("triton.compiler") for c in kind.__mro__):
        return f"Triton could not compile the kernel: {kind.__name__}: {exc}"[:MAX_ERROR]
    return f"{kind.__name__}: {exc}{_where(exc, path)}"[:MAX_ERROR]


def load_run(path):
    """kernel.py as a module of its own, imported from its file (Triton reads each
    @triton.jit function's source from there); its run()."""
    spec = importlib.util.spec_from_file_location("ptxbench_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["ptxbench_kernel"] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise KernelError(f"kernel.py does not compile: {e.msg} (line {e.lineno})") from None
    except Exception as e:  # an import it needs, a top-level error
        raise KernelError(f"kernel.py failed while loading: {type(e).__name__}: {e}"
                          f"{_where(e, path)}") from None
    run = getattr(module, "run", None)
    if not callable(run):
        raise KernelError("kernel.py defines no run() function")
    return run


def check_arity(run, definition):
    """run() takes the inputs, then the outputs (destination-passing)."""
    inputs, outputs = list(definition["inputs"]), list(definition["outputs"])
    counts = th.arity(run)
    if counts is None or counts[0] <= len(inputs) + len(outputs) <= counts[1]:
        return
    hint = ""
    if counts[1] == len(inputs):
        hint = " (it seems to return its outputs: a Triton run() is given them and writes them)"
    raise KernelError(
        f"run() takes {counts[1]} parameters; it must take the {len(inputs)} inputs "
        f"({', '.join(inputs)}) and then the {len(outputs)} outputs ({', '.join(outputs)}), "
        f"in that order{hint}")


class TritonHost(th.TorchHost):
    """The reference host's plumbing (buffers as tensors, streams), with a submission's
    run(): imported from its file, and given its outputs to write."""

    def __init__(self, torch, path):
        super().__init__(torch)
        self.path = path

    def load(self, text):
        self.definition = json.loads(text)
        self.run = load_run(self.path)
        check_arity(self.run, self.definition)

    def call(self, views, stream, keep):
        torch = self.torch
        tensors = self.tensors(views)
        n_in = len(self.definition["inputs"])
        with torch.no_grad(), torch.cuda.stream(self.stream(stream)):
            args = th.call_arguments(self.definition, tensors[:n_in], self.scalars)
            self.run(*args, *tensors[n_in:])


def main(argv):
    channel, library, kernel = None, None, None
    args = [a for a in argv[1:] if a != "--jit"]
    for flag, value in zip(args[0::2], args[1::2]):
        if flag == "--channel":
            channel = int(value)
        elif flag == "--library":
            library = value
        elif flag == "--kernel":
            kernel = value
    if channel is None or library is None or kernel is None:
        print("usage: triton_host.py --channel FD --library libptxbench-host.so "
              "--kernel kernel.py [--jit]", file=sys.stderr)
        return 2
    # torch first: the CUDA runtime it loads is the one the library then uses.
    import torch

    return th.serve(library, channel, TritonHost(torch, kernel), lambda e: describe(e, kernel))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
