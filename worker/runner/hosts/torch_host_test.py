"""CPU tests of the PyTorch reference host's logic (torch_host.py) and of the bundled
definitions' PyTorch references, with any torch (Debian's python3-torch here); with the
host library, the host as a process on its channel (the requests that need no GPU).

  python3 torch_host_test.py DATA_DIR [LIBRARY]   exit 77 (skipped) when torch is missing
"""

import glob
import json
import math
import os
import socket
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_host  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

DATA_DIR = None
LIBRARY = None  # libptxbench-host.so
TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def definition(inputs, outputs, reference):
    return {"inputs": inputs, "outputs": outputs, "reference": reference}


VEC = {"shape": ["n"], "dtype": "float32"}
# The attention definitions' axes at a size for the CPU (the head dimension is
# "D" in the forward definitions and "d" in the backward ones).
CPU_ATTENTION = {"B": 2, "H": 2, "S": 7, "D": 16, "d": 16}


class LoadTest(unittest.TestCase):
    def test_syntax_error_names_the_line(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, r"does not compile: .* \(line 2\)"):
            torch_host.load_run("def run(x):\n  return (x\n")

    def test_no_run(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, "defines no run"):
            torch_host.load_run("import math\nrun = 3\n")

    def test_empty(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, "has no PyTorch reference"):
            torch_host.load_run("  \n")

    def test_failing_import(self):
        with self.assertRaisesRegex(torch_host.ReferenceError,
                                    r"failed while loading: ModuleNotFoundError: .*"
                                    r"no_such_module.* \(reference line 1\)"):
            torch_host.load_run("import no_such_module\ndef run(x): return x\n")

    def test_each_load_is_its_own_module(self):
        a = torch_host.load_run("K = 1\ndef run(x): return K\n")
        b = torch_host.load_run("K = 2\ndef run(x): return K\n")
        self.assertEqual((a(0), b(0)), (1, 2))


class ArityTest(unittest.TestCase):
    d = definition({"x": VEC, "y": VEC}, {"z": VEC}, "")

    def test_value_returning(self):
        torch_host.check_arity(lambda x, y: x, self.d)
        torch_host.check_arity(lambda x, y, alpha=1.0: x, self.d)
        torch_host.check_arity(lambda *args: args[0], self.d)

    def test_destination_passing_is_explained(self):
        def run(x, y, z):
            z.copy_(x)
        with self.assertRaisesRegex(torch_host.ReferenceError,
                                    r"takes 3 parameters; it must take the 2 inputs \(x, y\) .*"
                                    r"return z"):
            torch_host.check_arity(run, self.d)

    def test_too_few(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, "takes 1 parameters"):
            torch_host.check_arity(lambda x: x, self.d)


@unittest.skipIf(torch is None, "no torch")
class OutputsTest(unittest.TestCase):
    d = definition({"x": VEC}, {"a": VEC, "b": {"shape": None, "dtype": "int64"}}, "")

    def test_shapes_of_results(self):
        a, b = torch.zeros(3), torch.tensor(4)
        for result in [(a, b), [a, b], {"b": b, "a": a, "extra": a}]:
            got = torch_host.normalize_outputs(torch, self.d, result)
            self.assertIs(got[0], a)
            self.assertIs(got[1], b)

    def test_python_number_takes_the_output_dtype(self):
        got = torch_host.normalize_outputs(torch, self.d, (torch.zeros(3), 7))
        self.assertEqual(got[1].dtype, torch.int64)
        self.assertEqual(got[1].item(), 7)

    def test_wrong_count(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, r"returned 3 values; .* 2 outputs"):
            torch_host.normalize_outputs(torch, self.d, (1, 2, 3))
        with self.assertRaisesRegex(torch_host.ReferenceError, r"returned one value; .* \(a, b\)"):
            torch_host.normalize_outputs(torch, self.d, torch.zeros(3))
        with self.assertRaisesRegex(torch_host.ReferenceError, "has no output b"):
            torch_host.normalize_outputs(torch, self.d, {"a": torch.zeros(3)})

    def test_not_a_tensor(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, "returned str for output a"):
            torch_host.normalize_outputs(torch, self.d, ("no", 1))

    def test_output_must_match_exactly(self):
        with self.assertRaisesRegex(torch_host.ReferenceError, r"has shape \[2, 3\]; .* \[3, 2\]"):
            torch_host.check_output(torch, "o", torch.zeros(2, 3), [3, 2], "float32")
        with self.assertRaisesRegex(torch_host.ReferenceError, "is torch.float32; .* bfloat16"):
            torch_host.check_output(torch, "o", torch.zeros(2), [2], "bfloat16")
        torch_host.check_output(torch, "o", torch.zeros(2, dtype=torch.bfloat16), [2], "bfloat16")

    def test_scalar_arguments(self):
        d = definition({"x": VEC, "eps": {"shape": None, "dtype": "float32"},
                        "k": {"shape": None, "dtype": "int32"}}, {"y": VEC}, "")
        x = torch.ones(2)
        args = torch_host.call_arguments(d, [x, torch.tensor(0.5), torch.tensor(3)], {"k": 9})
        self.assertIs(args[0], x)
        self.assertEqual(args[1], 0.5)  # drawn: the value of its 0-d tensor
        self.assertIsInstance(args[1], float)
        self.assertEqual(args[2], 9)  # fixed by the workload, as written

    def test_errors_name_the_reference_line(self):
        run = torch_host.load_run("def run(x):\n    return x.no_such_method()\n")
        try:
            run(torch.zeros(1))
        except Exception as e:
            self.assertRegex(torch_host.describe(e),
                             r"raised AttributeError: .*no_such_method.* \(reference line 2\)")
        else:
            self.fail("no error")


@unittest.skipIf(torch is None, "no torch")
class BundledReferencesTest(unittest.TestCase):
    """Every bundled definition's PyTorch reference follows FlashInfer-Bench's convention
    and computes what its description says, checked against a formula of its own."""

    def load(self, name):
        paths = glob.glob(os.path.join(DATA_DIR, "workloads/data/definitions/*", name + ".json"))
        self.assertEqual(len(paths), 1, name)
        with open(paths[0]) as f:
            d = json.load(f)
        run = torch_host.load_run(d["reference"])
        torch_host.check_arity(run, d)
        return d, run

    def inputs(self, d, axes, seed=0):
        g = torch.Generator().manual_seed(seed)
        values = {name: a["value"] for name, a in d["axes"].items() if a["type"] == "const"}
        values.update(axes)
        out = {}
        for name, spec in d["inputs"].items():
            shape = [values[s] for s in spec["shape"]]
            dtype = torch_host.torch_dtype(torch, spec["dtype"])
            out[name] = torch.randn(shape, generator=g).to(dtype)
        return out, values

    def outputs(self, d, run, inputs, values):
        got = torch_host.normalize_outputs(torch, d, run(*inputs.values()))
        for (name, spec), t in zip(d["outputs"].items(), got):
            torch_host.check_output(torch, name, t, [values[s] for s in spec["shape"]],
                                    spec["dtype"])
        return got

    def test_gemm(self):
        d, run = self.load("gemm_n7168_k5120")
        d["axes"]["N"]["value"], d["axes"]["K"]["value"] = 24, 40  # CPU-sized
        x, values = self.inputs(d, {"M": 5})
        (c,) = self.outputs(d, run, x, values)
        want = (x["A"].float() @ x["B"].float().T).to(torch.bfloat16)
        self.assertTrue(torch.allclose(c.float(), want.float(), atol=1e-2, rtol=1e-2))

    def attention(self, q, k, v, causal):
        scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
        if causal:
            n = scores.shape[-1]
            scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
        return torch.softmax(scores, -1) @ v.float(), torch.logsumexp(scores, -1)

    def check_forward(self, name, causal):
        d, run = self.load(name)
        x, values = self.inputs(d, CPU_ATTENTION)
        o, lse = self.outputs(d, run, x, values)
        want_o, want_lse = self.attention(x["Q"], x["K"], x["V"], causal)
        self.assertTrue(torch.allclose(o.float(), want_o, atol=1e-2, rtol=1e-2), name)
        self.assertTrue(torch.allclose(lse, want_lse, atol=1e-4, rtol=1e-4), name)
        if causal:  # the first query sees only the first key
            self.assertTrue(torch.allclose(o[:, :, 0].float(), x["V"][:, :, 0].float(),
                                           atol=1e-2))

    def check_backward(self, name, causal):
        d, run = self.load(name)
        x, values = self.inputs(d, CPU_ATTENTION)
        q, k, v = (x[n].float().requires_grad_() for n in ("Q", "K", "V"))
        o, lse = self.attention(q, k, v, causal)
        x["O"], x["L"] = o.detach().to(torch.bfloat16), lse.detach()
        o.backward(x["dO"].float())
        dq, dk, dv = self.outputs(d, run, x, values)
        for got, want in ((dq, q.grad), (dk, k.grad), (dv, v.grad)):
            self.assertTrue(torch.allclose(got.float(), want, atol=3e-2, rtol=3e-2), name)

    def test_attention(self):
        for name in os.listdir(os.path.join(DATA_DIR, "workloads/data/definitions/attention")):
            name = name[: -len(".json")]
            causal = name.endswith("_causal")
            with self.subTest(name):
                if name.startswith("mha_bwd"):
                    self.check_backward(name, causal)
                else:
                    self.check_forward(name, causal)


@unittest.skipIf(torch is None, "no torch")
class HostProcessTest(unittest.TestCase):
    """torch_host.py as the harness runs it: its channel on fd 3, the C++ host loop from
    the library, the callbacks through ctypes. Loading and selecting a workload need no
    GPU; the rest is the GPU tests' (worker/dataset_eval_gpu_test.cc)."""

    REPLY = struct.Struct("<III4000s")  # worker/runner/wire/protocol.cc WireReply

    def setUp(self):
        if LIBRARY is None:
            self.skipTest("no host library given")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_host.py")
        self.host = subprocess.Popen(
            [sys.executable, script, "--channel", str(theirs.fileno()), "--library", LIBRARY],
            pass_fds=(theirs.fileno(),))
        theirs.close()
        self.channel = ours

    def tearDown(self):
        self.ask("quit", expect_reply=False)
        self.assertEqual(self.host.wait(timeout=60), 0)
        self.channel.close()

    def ask(self, op, expect_reply=True, **fields):
        request = {"op": op, "sync_bytes": 0, "generation": 0, "spin_ns": 0, "spin_blocks": 1,
                   "spin_threads": 32, "spin_smem": 0, "spin_cluster": 1, "calls": 1,
                   "language": "", "artifact": "", "launch_spec": "", "axis_order": [],
                   "definition": "", "axes": {}, "scalars": {}, "tensors": [],
                   "num_inputs": 0, "set": 0}
        request.update(fields)
        self.channel.send(json.dumps(request).encode())
        if not expect_reply:
            return None
        self.channel.settimeout(60)
        magic, ok, length, text = self.REPLY.unpack(self.channel.recv(self.REPLY.size))
        self.assertEqual(magic, 0x50545852)
        return bool(ok), text[:length].decode()

    def definition(self, reference):
        return json.dumps(definition({"x": VEC, "eps": {"shape": None, "dtype": "float32"}},
                                     {"y": VEC}, reference))

    def test_a_good_reference_loads_and_takes_its_workload(self):
        ok, text = self.ask("load", definition=self.definition(
            "def run(x, eps):\n    return x * eps\n"))
        self.assertTrue(ok, text)
        ok, text = self.ask("workload", axes={"n": 4}, scalars={"eps": "1e-06"})
        self.assertTrue(ok, text)

    def test_a_broken_reference_is_refused_with_its_reason(self):
        ok, text = self.ask("load", definition=self.definition("def run(x):\n  return (x\n"))
        self.assertFalse(ok)
        self.assertRegex(text, r"the reference does not compile: .* \(line 2\)")
        ok, text = self.ask("load", definition=self.definition("def run(x, eps, y):\n  y.copy_(x)\n"))
        self.assertFalse(ok)
        self.assertIn("it seems to take the outputs too", text)
        # Nothing loaded: a workload is refused, the host stays up.
        ok, text = self.ask("workload", axes={"n": 4})
        self.assertFalse(ok)
        self.assertIn("nothing loaded", text)


if __name__ == "__main__":
    if len(sys.argv) > 2 and not sys.argv[-1].startswith("-"):
        LIBRARY = sys.argv.pop()
    if len(sys.argv) > 1 and not sys.argv[-1].startswith("-"):
        DATA_DIR = sys.argv.pop()
    if torch is None:
        print("SKIPPED: torch is not importable by", sys.executable)
        sys.exit(77)
    unittest.main(verbosity=2)
