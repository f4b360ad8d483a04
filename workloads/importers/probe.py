"""ptxbench's importer probe: runs one task of KernelBench or KernelBenchX and says, as one
JSON line on stdout, the FlashInfer-Trace definition and workloads it becomes, or why it
cannot become one.

The task file is someone else's code: the importer (workloads/importers/importer.h) runs
this script in a process of its own with limits on time, memory and output, and reads
what it prints with the strict definition reader, so a task can make its own import
fail and nothing else.

  python3 probe.py --suite kernelbench|kernelbenchx --task FILE --name NAME

Output: {"ok": true, "definition": {...}, "workloads": [{"axes": {...}}, ...]}
     or {"ok": false, "reason": CODE, "detail": TEXT}. CODE is one of REASONS.

KernelBench: the module is built from get_init_inputs() and run on get_inputs() on
the meta device (shapes only, nothing computed; the real CPU only when an operator has
no meta kernel). Its parameters become inputs; its forward's tensors the other inputs.
KernelBenchX: the test function runs on the CPU (its "cuda" tensors made there) and
every call of the reference function whose tensors came from rand_tensor(mode=
"standard") is a workload; the first such call's other arguments are fixed in run().
"""

import argparse
import inspect
import json
import re
import sys
import types

REASONS = (
    "load-error",         # the task does not load or run as given
    "no-reference",       # no Model / get_inputs, or no reference function called by the test
    "non-literal-init",   # get_init_inputs or a fixed argument is not a plain value
    "unsupported-dtype",  # float64, complex, ...: the harness does not hold it
    "integer-input",      # integer or boolean tensors: their range is the task's own
    "non-tensor-output",  # None, a number, a structure: in-place tasks return nothing
    "in-place",           # writes an input
    "randomness",         # dropout, rand...: no output to compare against
    "data-dependent-shape",  # an output's shape depends on the input's values
    "no-random-case",     # KernelBenchX: no call on rand_tensor(mode="standard") inputs
    "too-large-to-probe",  # an operator without a meta kernel, inputs past the memory limit
)

DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
          "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}
INTEGER_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "bool"}
RANDOM_FUNCTIONS = {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like",
                    "randperm", "bernoulli", "bernoulli_", "multinomial", "normal", "normal_",
                    "poisson", "uniform_", "exponential_", "geometric_", "cauchy_",
                    "log_normal_", "random_", "rrelu", "rrelu_"}


FACTORIES = {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm",
             "arange", "linspace", "logspace", "eye", "tensor", "as_tensor", "empty_strided",
             "normal", "bernoulli"}


class Refused(Exception):
    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def dtype_name(torch, dtype, output=False):
    """The FlashInfer-Trace dtype of a tensor. An input of integers is refused (the
    harness's integers are not the task's indices or counts); booleans (0 or 1) are
    drawn as the task draws them, and any of these is a fine output."""
    name = str(dtype).replace("torch.", "")
    if name in DTYPES:
        return DTYPES[name]
    if name in INTEGER_DTYPES and name != "uint8" and (output or name == "bool"):
        return name
    if name in INTEGER_DTYPES:
        raise Refused("integer-input", f"a {name} tensor: the harness draws integers in "
                      "[-1024, 1024), not the range the task needs")
    raise Refused("unsupported-dtype", f"dtype {name} is not held by the harness")


def literal(value, what):
    """`value` as Python source that rebuilds it, for plain values only."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else f"float({str(value)!r})"
    if isinstance(value, (list, tuple)):
        items = [literal(v, what) for v in value]
        if isinstance(value, tuple):
            return "(" + "".join(i + ", " for i in items) + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return "{" + ", ".join(f"{k!r}: {literal(v, what)}" for k, v in value.items()) + "}"
    raise Refused("non-literal-init", f"{what} holds a {type(value).__name__}, not a plain value")


class Recorder:
    """A TorchFunctionMode that moves "cuda" to the CPU and notes random operators."""

    def __init__(self, torch):
        from torch.overrides import TorchFunctionMode

        recorder = self

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types_, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                name = getattr(func, "__name__", "")
                if recorder.active and name in RANDOM_FUNCTIONS:
                    recorder.random.add(name)
                if recorder.active and "dropout" in name:
                    p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
                    training = kwargs.get("training", args[2] if len(args) > 2 else True)
                    if p and training:
                        recorder.random.add(name)
                if "device" in kwargs and "cuda" in str(kwargs["device"]):
                    kwargs["device"] = "cpu"
                if name in ("cuda",):
                    return args[0]
                if name == "to":
                    args = tuple("cpu" if isinstance(a, (str, torch.device)) and "cuda" in str(a)
                                 else a for a in args)
                return func(*args, **kwargs)

        class MetaMode(TorchFunctionMode):
            # Tensors made while it is on live on the meta device: shapes, no data,
            # so a task's 4 GiB input costs nothing to probe.
            def __torch_function__(self, func, types_, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if getattr(func, "__name__", "") in FACTORIES or "device" in kwargs:
                    kwargs["device"] = "meta"
                return func(*args, **kwargs)

        self.mode = Mode()
        self.meta = MetaMode()
        self.random = set()
        self.active = False


def axes_for(torch, workloads, outputs_per_workload, names_by_value):
    """Axes shared by tensor dimensions that have the same value in every workload.
    workloads: per workload, [(tensor name, shape)] of the inputs. Returns (axes, shapes of
    inputs, shapes of outputs, per workload the var axes' values)."""
    axes = {}        # name -> values per workload
    by_values = {}   # values tuple -> axis name
    used = set()

    def axis(values):
        if values in by_values:
            return by_values[values]
        base = names_by_value.get(values[0]) if len(set(values)) == 1 else None
        name = base if base and base not in used else None
        k = len(axes)
        while name is None or name in used:
            name = f"d{k}"
            k += 1
        used.add(name)
        by_values[values] = name
        axes[name] = values
        return name

    def shapes(per_workload):
        result = []
        for i, (tensor, shape) in enumerate(per_workload[0]):
            dims = []
            for j in range(len(shape)):
                dims.append(axis(tuple(w[i][1][j] for w in per_workload)))
            result.append((tensor, dims))
        return result

    in_shapes = shapes(workloads)
    out_shapes = shapes(outputs_per_workload)
    return axes, in_shapes, out_shapes


def build(torch, name, category, suite, reference, in_specs, out_specs, axes, description):
    """The definition document. in_specs/out_specs: [(name, dims, dtype)]."""
    definition = {
        "name": name,
        "op_type": category,
        "description": description,
        "tags": [f"source:{suite}", f"category:{category}"],
        "axes": {a: ({"type": "const", "value": v[0]} if len(set(v)) == 1 else {"type": "var"})
                 for a, v in axes.items()},
        "inputs": {n: {"shape": d, "dtype": t} for n, d, t in in_specs},
        "outputs": {n: {"shape": d, "dtype": t} for n, d, t in out_specs},
        "reference": reference,
        "constraints": [],
    }
    count = len(next(iter(axes.values()))) if axes else 1
    workloads = [{"axes": {a: v[w] for a, v in axes.items() if len(set(v)) > 1}}
                 for w in range(count)]
    return definition, workloads


def flat_outputs(torch, result):
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)) and result and all(isinstance(r, torch.Tensor) for r in result):
        return list(result)
    raise Refused("non-tensor-output", f"the reference returns {type(result).__name__}, not "
                  "tensors (an in-place task returns nothing)")


def output_names(count):
    return ["output"] if count == 1 else [f"output{i}" for i in range(count)]


def check_reference(torch, reference, inputs, shapes):
    """The reference written is the one probed: it compiles, and its run() on inputs of
    the definition's shapes gives outputs of the definition's shapes."""
    module = types.ModuleType("ptxbench_reference")
    try:
        exec(compile(reference, "<reference>", "exec"), module.__dict__)
        with torch.no_grad():
            got = flat_outputs(torch, module.run(*inputs))
    except Refused:
        raise
    except Exception as e:
        raise Refused("load-error", f"the written reference fails: {type(e).__name__}: {e}")
    if [tuple(o.shape) for o in got] != shapes:
        raise Refused("load-error", f"the written reference gives shapes "
                      f"{[tuple(o.shape) for o in got]}, the probe saw {shapes}")


# --- KernelBench -----------------------------------------------------------------------

RUN_KERNELBENCH = '''

# ptxbench: the task's Model as FlashInfer-Trace's run(): its parameters are inputs.
_ptxb_init = {init}
_ptxb_params = {params}
_ptxb_model = None


def run({args}):
    global _ptxb_model
    import torch as _ptxb_torch
    if _ptxb_model is None:
        _ptxb_model = Model(*_ptxb_init).to({first}.device)
    if not _ptxb_params:
        return _ptxb_model({forward})
    _call = getattr(getattr(_ptxb_torch, "func", None), "functional_call", None)
    if _call is None:
        from torch.nn.utils.stateless import functional_call as _call
    return _call(_ptxb_model, dict(zip(_ptxb_params, [{param_args}])), ({forward},))
'''


def kernelbench(torch, source, name, category, path):
    module = types.ModuleType("ptxbench_task")
    try:
        exec(compile(source, "<task>", "exec"), module.__dict__)
    except Exception as e:
        raise Refused("load-error", f"the task does not load: {type(e).__name__}: {e}")
    model_class = module.__dict__.get("Model")
    get_inputs = module.__dict__.get("get_inputs")
    get_init_inputs = module.__dict__.get("get_init_inputs")
    if not (isinstance(model_class, type) and callable(get_inputs) and callable(get_init_inputs)):
        raise Refused("no-reference", "no Model class with get_inputs() and get_init_inputs()")
    if "run" in module.__dict__:
        raise Refused("load-error", "the task defines run() itself")
    torch.manual_seed(0)
    recorder = Recorder(torch)
    try:
        init = list(get_init_inputs())
        init_source = literal(init, "get_init_inputs()")
        try:
            with recorder.meta:
                model = model_class(*init)
                inputs = list(get_inputs())
        except Exception:  # a task that needs values to build: for real
            model = model_class(*init)
            try:
                inputs = list(get_inputs())
            except (MemoryError, RuntimeError) as e:
                raise Refused("too-large-to-probe", f"get_inputs() on the CPU: {e}"[:300])
    except Refused:
        raise
    except Exception as e:
        raise Refused("load-error", f"building the task failed: {type(e).__name__}: {e}")
    try:
        forward_names = list(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        forward_names = []
    if len(forward_names) != len(inputs) or any(n.startswith("_") for n in forward_names):
        forward_names = [f"input{i}" for i in range(len(inputs))]
    params = list(model.named_parameters())
    param_names = [re.sub(r"[^A-Za-z0-9_]", "_", n) for n, _ in params]
    if len(set(param_names) | set(forward_names)) != len(param_names) + len(forward_names):
        param_names = [f"param{i}" for i in range(len(params))]

    tensor_inputs = []   # (name, tensor)
    forward_args = []
    for arg, value in zip(forward_names, inputs):
        if isinstance(value, torch.Tensor):
            tensor_inputs.append((arg, value))
            forward_args.append(arg)
        else:
            forward_args.append(literal(value, f"get_inputs() argument {arg}"))
    if not tensor_inputs:
        raise Refused("no-reference", "get_inputs() gives no tensor")
    for arg, t in tensor_inputs + list(zip(param_names, [p for _, p in params])):
        dtype_name(torch, t.dtype)

    result = None
    meta_inputs = [t.to("meta") for _, t in tensor_inputs]
    versions = [t._version for t in meta_inputs]
    try:
        meta_model = model.to("meta")
        args = iter(meta_inputs)
        call_args = [next(args) if isinstance(v, torch.Tensor) else v for v in inputs]
        recorder.active = True
        with recorder.mode:
            result = meta_model(*call_args)
        recorder.active = False
        outputs = flat_outputs(torch, result)
        changed = [n for (n, _), t, v in zip(tensor_inputs, meta_inputs, versions) if t._version != v]
    except Refused:
        raise
    except Exception:
        outputs, changed = None, []
    if outputs is None:
        # No meta kernel for some operator: run it for real, twice, on fresh values.
        model = model_class(*init)
        shapes = []
        for attempt in range(2):
            try:
                real = [torch.randn(t.shape, dtype=t.dtype) if t.is_floating_point() else
                        torch.zeros(t.shape, dtype=t.dtype) for _, t in tensor_inputs]
            except (MemoryError, RuntimeError) as e:
                raise Refused("too-large-to-probe", "an operator without a meta kernel needs "
                              f"the real inputs: {e}"[:300])
            versions = [t._version for t in real]
            args = iter(real)
            call_args = [next(args) if isinstance(v, torch.Tensor) else v for v in inputs]
            recorder.active = True
            try:
                with recorder.mode, torch.no_grad():
                    result = model(*call_args)
            except Exception as e:
                if "can't allocate memory" in str(e) or isinstance(e, MemoryError):
                    raise Refused("too-large-to-probe", "an operator without a meta kernel "
                                  "needs the real tensors, past the probe's memory limit")
                raise Refused("load-error", f"the forward fails: {type(e).__name__}: {e}")
            recorder.active = False
            outputs = flat_outputs(torch, result)
            changed = [n for (n, _), t, v in zip(tensor_inputs, real, versions) if t._version != v]
            shapes.append([tuple(o.shape) for o in outputs])
        if shapes[0] != shapes[1]:
            raise Refused("data-dependent-shape", f"output shapes {shapes[0]} and {shapes[1]} "
                          "for two draws of the same input shapes")
    if recorder.random:
        raise Refused("randomness", "the forward draws random numbers: "
                      + ", ".join(sorted(recorder.random)))
    if changed:
        raise Refused("in-place", "the forward writes its input " + ", ".join(changed))
    out_dtypes = [dtype_name(torch, o.dtype, output=True) for o in outputs]

    names_by_value = {}
    for key, value in module.__dict__.items():
        if isinstance(value, int) and not isinstance(value, bool) and re.fullmatch(r"[A-Za-z_]\w*", key) \
                and not key.startswith("_"):
            names_by_value.setdefault(value, []).append(key)
    names_by_value = {v: k[0] for v, k in names_by_value.items() if len(k) == 1}
    all_inputs = [(n, tuple(t.shape)) for n, t in tensor_inputs] + \
                 [(n, tuple(p.shape)) for n, (_, p) in zip(param_names, params)]
    out_names = output_names(len(outputs))
    axes, in_shapes, out_shapes = axes_for(
        torch, [all_inputs], [[(n, tuple(o.shape)) for n, o in zip(out_names, outputs)]],
        names_by_value)
    in_dtypes = [dtype_name(torch, t.dtype) for _, t in tensor_inputs] + \
                [dtype_name(torch, p.dtype) for _, p in params]
    run_args = [n for n, _ in tensor_inputs] + param_names
    reference = source.rstrip() + "\n" + RUN_KERNELBENCH.format(
        init=init_source, params=literal([n for n, _ in params], "parameters"),
        args=", ".join(run_args), first=tensor_inputs[0][0], forward=", ".join(forward_args),
        param_args=", ".join(param_names))
    with recorder.meta:
        check_reference(torch, reference, [torch.empty(t.shape, dtype=t.dtype) for _, t in tensor_inputs]
                        + [torch.empty(p.shape, dtype=p.dtype) for _, p in params],
                        [tuple(o.shape) for o in outputs])
    doc = (model_class.__doc__ or "").strip().split("\n")[0].strip()
    description = f"KernelBench {category} task {name}" + (f": {doc}" if doc else "") + \
        (f" The module's parameters ({', '.join(n for n, _ in params)}) are inputs, drawn "
         "with the others." if params else "")
    return build(torch, name, category, "kernelbench", reference,
                 [(n, d, t) for (n, d), t in zip(in_shapes, in_dtypes)],
                 [(n, d, t) for (n, d), t in zip(out_shapes, out_dtypes)], axes, description)


# --- KernelBenchX ----------------------------------------------------------------------

SEPARATOR = re.compile(r"^#{20,}\s*$", re.M)

RUN_KERNELBENCHX = '''

# ptxbench: the task's {function}() as FlashInfer-Trace's run(), its other arguments fixed
# as the first random case of the task's test gave them.
def run({args}):
    return {function}({call})
'''


def kernelbenchx(torch, source, name, category, path):
    parts = SEPARATOR.split(source, maxsplit=1)
    if len(parts) != 2:
        raise Refused("no-reference", "no '####' line between the reference and its test")
    reference_source, test_source = parts
    namespace = {"__name__": "ptxbench_task", "__file__": path}
    recorder = Recorder(torch)
    standard = {}  # id(tensor) -> tensor made by rand_tensor(mode="standard")

    def rand_tensor(shape, *, dtype=torch.float32, device="cuda", mode="standard",
                    outlier_prob=0.001, outlier_scale=50.0, low=-1.0, high=1.0):
        x = torch.randn(*shape, dtype=dtype)
        if mode == "uniform":
            x = (high - low) * torch.rand(*shape, dtype=dtype) + low
        elif mode == "outlier":
            mask = torch.rand(*shape) < outlier_prob
            x = x.clone()
            x[mask] = torch.randn(int(mask.sum().item()), dtype=dtype) * outlier_scale
        if mode == "standard":
            standard[id(x)] = x
        return x

    data_utils = types.ModuleType("data_utils")
    data_utils.rand_tensor = rand_tensor
    data_utils.rand_int = lambda shape, *, low, high, device="cuda", dtype=torch.int64: \
        torch.randint(low, high, shape, dtype=dtype)
    data_utils.rand_bool = lambda shape, *, device="cuda": torch.randint(0, 2, shape, dtype=torch.bool)
    sys.modules["data_utils"] = data_utils
    try:
        with recorder.mode:
            exec(compile(reference_source, "<reference>", "exec"), namespace)
    except Exception as e:
        raise Refused("load-error", f"the reference does not load: {type(e).__name__}: {e}")
    functions = {k: v for k, v in namespace.items()
                 if isinstance(v, types.FunctionType) and not k.startswith("_")}
    test_calls = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", test_source))
    called = [k for k in functions if k in test_calls]
    if not called:
        raise Refused("no-reference", "the test calls no function of the reference")
    target = called[-1] if len(called) > 1 and called[-1] == name else called[0]
    if name in called:
        target = name
    original = functions[target]
    calls = []

    def recording(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append((args, kwargs, out))
        return out

    namespace[target] = recording
    test_source = re.sub(r"^test_results\s*=.*$", "", test_source, flags=re.M)
    try:
        with recorder.mode:
            exec(compile(test_source, "<test>", "exec"), namespace)
            tests = [v for k, v in namespace.items() if k.startswith("test_") and callable(v)]
            for test in tests:
                test()
    except Exception as e:
        raise Refused("load-error", f"the test does not run: {type(e).__name__}: {e}")

    def is_standard(args, kwargs):
        values = list(args) + list(kwargs.values())
        return any(isinstance(v, torch.Tensor) and standard.get(id(v)) is v for v in values)

    random_calls = [c for c in calls if is_standard(c[0], c[1])]
    if not random_calls:
        raise Refused("no-random-case", "no call of the reference on rand_tensor(mode="
                      "\"standard\") inputs in the test")

    def signature(args, kwargs):
        fixed = [literal(a, "an argument") if not isinstance(a, torch.Tensor) else
                 f"T{a.dim()}:{a.dtype}" for a in args]
        fixed += [f"{k}=" + (literal(v, "an argument") if not isinstance(v, torch.Tensor) else
                             f"T{v.dim()}:{v.dtype}") for k, v in kwargs.items()]
        return tuple(fixed)

    first = random_calls[0]
    sig = signature(first[0], first[1])
    chosen = [c for c in random_calls if signature(c[0], c[1]) == sig]
    try:
        params = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):
        params = []
    run_args, call = [], []
    for i, a in enumerate(first[0]):
        if isinstance(a, torch.Tensor):
            arg = params[i] if i < len(params) and not params[i].startswith("*") else f"input{i}"
            run_args.append(arg)
            call.append(arg)
        else:
            call.append(literal(a, f"argument {i}"))
    for k, v in first[1].items():
        if isinstance(v, torch.Tensor):
            run_args.append(k)
            call.append(f"{k}={k}")
        else:
            call.append(f"{k}={literal(v, 'argument ' + k)}")
    if len(set(run_args)) != len(run_args) or "run" in run_args:
        raise Refused("load-error", "the reference's arguments have clashing names")

    def tensors(args, kwargs):
        return [a for a in args if isinstance(a, torch.Tensor)] + \
               [v for v in kwargs.values() if isinstance(v, torch.Tensor)]

    for t in tensors(first[0], first[1]):
        dtype_name(torch, t.dtype)
    per_workload, per_outputs, seen = [], [], {}
    for args, kwargs, out in chosen:
        outputs = flat_outputs(torch, out)
        ins = [(n, tuple(t.shape)) for n, t in zip(run_args, tensors(args, kwargs))]
        outs = [(n, tuple(o.shape)) for n, o in zip(output_names(len(outputs)), outputs)]
        key = tuple(ins)
        if key in seen and seen[key] != outs:
            raise Refused("data-dependent-shape", f"output shapes {seen[key]} and {outs} for "
                          "two draws of the same input shapes")
        if key in seen:
            continue
        seen[key] = outs
        per_workload.append(ins)
        per_outputs.append(outs)
    if len({len(o) for o in per_outputs}) != 1:
        raise Refused("non-tensor-output", "the reference returns a varying number of tensors")
    # In place: a call on copies must leave them as they were.
    copies = [t.clone() for t in tensors(first[0], first[1])]
    probe_args = iter(copies)
    args = [next(probe_args) if isinstance(a, torch.Tensor) else a for a in first[0]]
    kwargs = {k: (next(probe_args) if isinstance(v, torch.Tensor) else v)
              for k, v in first[1].items()}
    versions = [t._version for t in copies]
    recorder.active = True
    with recorder.mode, torch.no_grad():
        out = original(*args, **kwargs)
    recorder.active = False
    changed = [n for n, t, v in zip(run_args, copies, versions) if t._version != v]
    if recorder.random:
        raise Refused("randomness", "the reference draws random numbers: "
                      + ", ".join(sorted(recorder.random)))
    if changed:
        raise Refused("in-place", "the reference writes its input " + ", ".join(changed))
    outputs = flat_outputs(torch, out)
    out_dtypes = [dtype_name(torch, o.dtype, output=True) for o in outputs]
    in_dtypes = [dtype_name(torch, t.dtype) for t in tensors(first[0], first[1])]
    axes, in_shapes, out_shapes = axes_for(torch, per_workload, per_outputs, {})
    reference = reference_source.rstrip() + "\n" + RUN_KERNELBENCHX.format(
        function=target, args=", ".join(run_args), call=", ".join(call))
    check_reference(torch, reference, [t.clone() for t in tensors(first[0], first[1])],
                    [tuple(o.shape) for o in outputs])
    description = (f"KernelBenchX {category} task {name}: {target}() on the shapes of its "
                   f"test's standard random cases ({len(per_workload)}).")
    return build(torch, name, category, "kernelbenchx", reference,
                 [(n, d, t) for (n, d), t in zip(in_shapes, in_dtypes)],
                 [(n, d, t) for (n, d), t in zip(out_shapes, out_dtypes)], axes, description)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", required=True, choices=("kernelbench", "kernelbenchx"))
    parser.add_argument("--task", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--category", required=True)
    a = parser.parse_args(argv[1:])
    import torch

    torch.set_num_threads(1)
    try:
        with open(a.task, encoding="utf-8") as f:
            source = f.read()
        sys.argv = [a.task]
        probe = kernelbench if a.suite == "kernelbench" else kernelbenchx
        definition, workloads = probe(torch, source, a.name, a.category, a.task)
        answer = {"ok": True, "definition": definition, "workloads": workloads}
    except Refused as e:
        answer = {"ok": False, "reason": e.reason, "detail": e.detail[:1000]}
    except Exception as e:  # the task's own failure, anywhere
        answer = {"ok": False, "reason": "load-error",
                  "detail": f"{type(e).__name__}: {e}"[:1000]}
    sys.stdout.flush()
    print("\nPTXB-PROBE " + json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
