"""wb_unittest.py - runs a module's unittest cases with the workbook's test protocol: the closing
line "[NAME] test cases: P passed, F failed, S skipped", and, when WB_TEST_SUMMARY names a file,
the line "NAME P F S" appended to it (tools/run_tests.sh adds these up). Returns the exit status."""
import os
import sys
import unittest


def run_module(module_name, name):
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module_name])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped - len(result.expectedFailures)
    print(f"[{name}] test cases: {passed} passed, {failed} failed, {skipped} skipped")
    summary = os.environ.get("WB_TEST_SUMMARY")
    if summary:
        with open(summary, "a") as f:
            f.write(f"{name} {passed} {failed} {skipped}\n")
    return 1 if failed else 0
