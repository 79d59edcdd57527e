"""Failures of a run become data: crash, timeout, missing program, bad output."""

import sys
import time

from iotune.execution.runner import parse_result, run_command

PY = sys.executable


def test_ok_result_is_last_json_object():
    code = "print('noise'); print('{\"a\": 1}'); print('{\"kernel\": \"x\", \"v\": 2}')"
    out = run_command([PY, "-c", code], timeout_s=30)
    assert out.ok and out.result == {"kernel": "x", "v": 2}


def test_crash_is_a_failure_with_reason():
    out = run_command([PY, "-c", "import sys; sys.stderr.write('boom: disk full\\n'); sys.exit(3)"],
                      timeout_s=30)
    assert not out.ok
    assert out.reason == "exit code 3: boom: disk full"
    assert out.returncode == 3


def test_timeout_kills_the_process_group():
    start = time.monotonic()
    code = ("import subprocess, sys; "
            "subprocess.run([sys.executable, '-c', 'import time; time.sleep(60)'])")
    out = run_command([PY, "-c", code], timeout_s=1)
    assert not out.ok and out.reason == "timed out after 1 s"
    assert time.monotonic() - start < 30


def test_missing_program():
    out = run_command(["/nonexistent/mpiexec", "-n", "2"], timeout_s=5)
    assert not out.ok and out.reason.startswith("cannot start /nonexistent/mpiexec")


def test_bad_output():
    out = run_command([PY, "-c", "print('hello')"], timeout_s=30)
    assert not out.ok and out.reason == "no JSON result object on stdout"


def test_parse_result_skips_broken_json():
    assert parse_result('{"a": 1}\n{broken\n') == {"a": 1}
    assert parse_result("[1, 2]") is None
