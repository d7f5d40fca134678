"""lit test format: one test per ONNX Attention conformance case (lives in
a module so that lit can pickle it for its worker processes)."""
import os
import subprocess

import lit.formats
import lit.Test


class OnnxConformance(lit.formats.TestFormat):
    def __init__(self, cases_dir, runner):
        self.cases_dir = cases_dir
        self.runner = runner

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if not self.cases_dir:
            # Reported as one failing test rather than silently nothing.
            yield lit.Test.Test(testSuite, path_in_suite + ("missing-conformance-data",),
                                localConfig)
            return
        for case in sorted(os.listdir(self.cases_dir)):
            if os.path.isfile(os.path.join(self.cases_dir, case, "model.onnx")):
                yield lit.Test.Test(testSuite, path_in_suite + (case,), localConfig)

    def execute(self, test, litConfig):
        case = test.path_in_suite[-1]
        if not self.cases_dir:
            return lit.Test.FAIL, "shared/conformance/onnx_attention not found"
        tmp = test.getExecPath() + ".tmp"
        proc = subprocess.run(
            [test.config.python_executable, self.runner,
             os.path.join(self.cases_dir, case), tmp],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            universal_newlines=True, env=test.config.environment)
        return (lit.Test.PASS if proc.returncode == 0 else lit.Test.FAIL), proc.stdout


