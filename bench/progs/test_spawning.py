# A Python test suite whose tests run programs (as suites of tools and native extensions do):
# each test starts a child; the triage tree figure runs it with `python3 -m unittest`.
import os
import subprocess
import unittest

PROG = os.environ.get("SPAWN_PROG", "/bin/true")


class Spawning(unittest.TestCase):
    def test_run_program(self):
        self.assertEqual(subprocess.run([PROG, "2000"], stdout=subprocess.DEVNULL).returncode, 0)

    def test_run_shell(self):
        out = subprocess.run(["/bin/sh", "-c", "echo one; echo two"], capture_output=True, text=True).stdout
        self.assertEqual(out.split(), ["one", "two"])

    def test_run_several(self):
        for n in range(5):
            self.assertEqual(subprocess.run([PROG, str(1000 + n)], stdout=subprocess.DEVNULL).returncode, 0)


if __name__ == "__main__":
    unittest.main()
