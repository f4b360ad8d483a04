"""CPU tests of triton_host.py's own logic (no torch, no Triton needed): how a submission
is imported, how its run() must look, how its failures read. The Triton host on a GPU is
worker/triton_eval_gpu_test.cc's.

    python3 triton_host_test.py
"""

import importlib.util
import os
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("triton_host", os.path.join(HERE, "triton_host.py"))
triton_host = importlib.util.module_from_spec(spec)
spec.loader.exec_module(triton_host)

DEFINITION = {"inputs": {"A": {}, "B": {}}, "outputs": {"C": {}}}


class LoadTest(unittest.TestCase):
    def load(self, source):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(source)
        self.addCleanup(os.unlink, f.name)
        return triton_host.load_run(f.name), f.name

    def test_run_is_found_in_its_own_module(self):
        run, _ = self.load("X = 3\ndef run(A, B, C):\n    return X\n")
        self.assertEqual(run(1, 2, 3), 3)

    def test_a_syntax_error_names_its_line(self):
        with self.assertRaisesRegex(triton_host.KernelError, r"does not compile: .*\(line 2\)"):
            self.load("def run(A, B, C):\n    return (\n")

    def test_a_failing_import_is_said(self):
        with self.assertRaisesRegex(triton_host.KernelError,
                                    "failed while loading: ModuleNotFoundError"):
            self.load("import no_such_module_anywhere\ndef run(A, B, C): pass\n")

    def test_no_run_is_said(self):
        with self.assertRaisesRegex(triton_host.KernelError, "defines no run"):
            self.load("def go(A, B, C): pass\n")


class ArityTest(unittest.TestCase):
    def test_inputs_then_outputs(self):
        triton_host.check_arity(lambda A, B, C: None, DEFINITION)
        triton_host.check_arity(lambda A, B, C, scratch=None: None, DEFINITION)
        triton_host.check_arity(lambda *args: None, DEFINITION)

    def test_a_value_returning_run_is_told_to_write_its_outputs(self):
        with self.assertRaisesRegex(triton_host.KernelError, "seems to return its outputs"):
            triton_host.check_arity(lambda A, B: None, DEFINITION)

    def test_too_many_parameters_are_named(self):
        with self.assertRaisesRegex(triton_host.KernelError,
                                    r"takes 4 parameters; .*2 inputs \(A, B\).*1 outputs \(C\)"):
            triton_host.check_arity(lambda A, B, C, D: None, DEFINITION)


class DescribeTest(unittest.TestCase):
    def test_a_triton_compiler_error_is_a_compile_error(self):
        errors = types.ModuleType("triton.compiler.errors")
        exec("class CompilationError(Exception):\n    pass\n", errors.__dict__)
        text = triton_host.describe(errors.CompilationError("at 11:21: bad dot"), "/k.py")
        self.assertTrue(text.startswith("Triton could not compile the kernel: CompilationError"))

    def test_an_exception_names_the_kernel_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("def run(A, B, C):\n    raise ValueError('no luck')\n")
        self.addCleanup(os.unlink, f.name)
        run = triton_host.load_run(f.name)
        try:
            run(1, 2, 3)
        except ValueError as e:
            self.assertEqual(triton_host.describe(e, f.name), "ValueError: no luck (kernel.py line 2)")

    def test_a_long_message_is_cut(self):
        self.assertEqual(len(triton_host.describe(RuntimeError("x" * 10000), "/k.py")),
                         triton_host.MAX_ERROR)


if __name__ == "__main__":
    unittest.main(verbosity=1)
