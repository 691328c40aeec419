"""Run PyTorch's own device-generic test files against the "tpu" device.

  python tools/pytorch_tests.py [options] FILE [FILE ...]

FILE is a path, or a bare name looked up in --tests-dir (PyTorch's test files
are third-party code: they are not part of this repository; see
docs/pytorch-tests.md for how to get them).

Each file runs in a child `python -m pytest` with PYTORCH_TESTING_DEVICE_ONLY_FOR
set (tpu by default) and tools/pytorch_tests_plugin.py loaded before
collection. The plugin records every test's outcome as it finishes. The runner
gives each test a time limit (--timeout): the plugin raises inside a test that
runs past it (the test fails and the run goes on); a test stuck in native code
for --timeout + --grace seconds is killed from here and recorded as failed.
A test that kills the process is recorded as crashed and the file is run
again without the tests already finished (no `pytest --forked`: PJRT's threads
do not survive fork).

Options:
  --device tpu|cpu      device under test (default tpu)
  --compare-cpu         also run each file with PYTORCH_TESTING_DEVICE_ONLY_FOR=cpu
  --timeout S           per-test limit in seconds (default 60)
  --grace S             extra seconds before a stuck child is killed (default 30)
  -k EXPR               pytest -k filter
  --tests-dir DIR       where bare FILE names are found (default /tmp/pyt-tests/test)
  --out DIR             results: <file>.<device>.jsonl, logs, summary.md
                        (default build/pytorch-tests)
  --quiet-failures      print counts only
  --package-root DIR    where torch_tpu is imported from (default: this checkout), e.g. a
                        copy of an older build to compare against
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")

OUTCOMES = ("passed", "failed", "skipped", "crashed")


def _norm_id(nodeid):
    """A test id with the device spelled DEV, so tpu and cpu runs can be matched."""
    nodeid = re.sub(r"(PRIVATEUSE1|TPU|CPU)(?=::|$)", "DEV", nodeid)
    return re.sub(r"_(privateuse1|tpu|cpu)(?=_|$|\[)", "_dev", nodeid)


def _bucket(outcome):
    return {"xpassed": "passed", "xfailed": "skipped"}.get(outcome, outcome)


class FileRun:
    """One test file on one device: children are started until every test has an outcome."""

    def __init__(self, path, device, args, out_dir):
        self.path = path
        self.device = device
        self.args = args
        stem = os.path.splitext(os.path.basename(path))[0]
        self.tag = f"{stem}.{device}"
        self.results_path = os.path.join(out_dir, self.tag + ".jsonl")
        self.exclude_path = os.path.join(out_dir, self.tag + ".done")
        self.log_path = os.path.join(out_dir, self.tag + ".log")
        self.records = collections.OrderedDict()  # nodeid -> record
        self.children = 0
        self.errors = []

    def _env(self):
        env = dict(os.environ)
        env["PYTORCH_TESTING_DEVICE_ONLY_FOR"] = self.device
        env["PTT_RESULTS"] = self.results_path
        env["PTT_EXCLUDE"] = self.exclude_path
        env["PTT_TIMEOUT"] = str(self.args.timeout)
        env["PTT_IMPORT_TPU"] = "1"
        env.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
        paths = [TOOLS, self.args.package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
        return env

    def _cmd(self):
        test_dir = os.path.dirname(self.path)
        cmd = [sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:cacheprovider",
               "-p", "pytorch_tests_plugin", "-c", os.devnull, "--rootdir", test_dir,
               self.path]
        if self.args.k:
            cmd += ["-k", self.args.k]
        return cmd

    def _read_new(self, fh, state):
        for line in fh.readlines():
            if not line.endswith("\n"):
                fh.seek(fh.tell() - len(line))
                break
            rec = json.loads(line)
            ev = rec["event"]
            if ev == "start":
                state["current"], state["t0"] = rec["id"], time.monotonic()
            elif ev == "finish":
                self._finish(rec["id"], rec["outcome"], rec["reason"], rec["seconds"])
                state["current"] = None
                state["progress"] += 1
            elif ev == "collected":
                state["collected"] = rec["n"]
            elif ev == "sessionfinish":
                state["finished"] = True

    def _finish(self, nodeid, outcome, reason, seconds):
        self.records[nodeid] = {"id": nodeid, "outcome": outcome, "reason": reason,
                                "seconds": seconds}
        with open(self.exclude_path, "a") as f:
            f.write(nodeid + "\n")

    def run(self):
        for p in (self.results_path, self.exclude_path, self.log_path):
            if os.path.exists(p):
                os.remove(p)
        open(self.results_path, "w").close()
        t_start = time.monotonic()
        limit = self.args.timeout + self.args.grace if self.args.timeout > 0 else None
        with open(self.results_path) as fh, open(self.log_path, "w") as log:
            while True:
                self.children += 1
                log.write(f"\n===== child {self.children}: {' '.join(self._cmd())}\n")
                log.flush()
                # cwd: the tests' folder, so that `python -m pytest` (which puts the cwd first on
                # sys.path) imports torch_tpu from --package-root, not from a checkout it runs in
                proc = subprocess.Popen(self._cmd(), env=self._env(), stdout=log, cwd=os.path.dirname(self.path),
                                        stderr=subprocess.STDOUT, start_new_session=True)
                state = {"current": None, "t0": None, "progress": 0, "collected": None,
                         "finished": False}
                killed = None
                while proc.poll() is None:
                    time.sleep(0.5)
                    self._read_new(fh, state)
                    if (limit and state["current"] is not None
                            and time.monotonic() - state["t0"] > limit):
                        killed = state["current"]
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                self._read_new(fh, state)
                if state["finished"] and killed is None:
                    break
                stuck = killed or state["current"]
                if stuck is None:
                    self.errors.append(f"child {self.children} exited with {proc.returncode} "
                                       "outside any test (collection or import); see "
                                       + self.log_path)
                    break
                if killed:
                    self._finish(stuck, "failed",
                                 f"killed: still running after {limit:g} s (time limit "
                                 f"{self.args.timeout:g} s not honoured inside native code)",
                                 round(time.monotonic() - state["t0"], 3))
                else:
                    self._finish(stuck, "crashed",
                                 f"process died (exit status {proc.returncode})",
                                 round(time.monotonic() - state["t0"], 3))
                if state["collected"] is not None and state["collected"] <= state["progress"] + 1:
                    break  # the crasher was the last test left
        self.wall = time.monotonic() - t_start
        return self

    def counts(self):
        c = collections.Counter(_bucket(r["outcome"]) for r in self.records.values())
        return {k: c.get(k, 0) for k in OUTCOMES}


def _resolve(name, tests_dir):
    if os.path.exists(name):
        return os.path.abspath(name)
    cand = os.path.join(tests_dir, name if name.endswith(".py") else name + ".py")
    if os.path.exists(cand):
        return cand
    sys.exit(f"pytorch_tests: no such test file: {name} (looked in {tests_dir})")


def _count_line(name, device, run):
    c = run.counts()
    total = sum(c.values())
    extra = f", {len(run.errors)} errors" if run.errors else ""
    return (f"| {name} | {device} | {c['passed']} | {c['failed']} | {c['skipped']} | "
            f"{c['crashed']} | {total} | {run.wall:.0f} s | {run.children}{extra} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--device", default="tpu")
    ap.add_argument("--compare-cpu", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--grace", type=float, default=30.0)
    ap.add_argument("-k", default=None)
    ap.add_argument("--tests-dir", default="/tmp/pyt-tests/test")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "pytorch-tests"))
    ap.add_argument("--quiet-failures", action="store_true")
    ap.add_argument("--package-root", default=ROOT)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    header = ["| file | device | passed | failed | skipped | crashed | total | wall | children |",
              "|---|---|---|---|---|---|---|---|---|"]
    table, details = [], []
    for name in args.files:
        path = _resolve(name, args.tests_dir)
        base = os.path.basename(path)
        run = FileRun(path, args.device, args, args.out).run()
        table.append(_count_line(base, args.device, run))
        print(table[-1], flush=True)
        cpu = None
        if args.compare_cpu and args.device != "cpu":
            cpu = FileRun(path, "cpu", args, args.out).run()
            table.append(_count_line(base, "cpu", cpu))
            print(table[-1], flush=True)
        bad = [r for r in run.records.values() if r["outcome"] in ("failed", "crashed")]
        lines = [f"### {base} ({args.device}): {len(bad)} failed or crashed"]
        cpu_by_id = {}
        if cpu is not None:
            cpu_by_id = {_norm_id(r["id"]): r for r in cpu.records.values()}
        for r in bad:
            note = ""
            other = cpu_by_id.get(_norm_id(r["id"]))
            if other is not None:
                note = f" [cpu: {other['outcome']}]"
            lines.append(f"- {r['outcome'].upper()} {r['id'].split('::', 1)[-1]} "
                         f"({r['seconds']:.1f} s){note}: {r['reason']}")
        for e in run.errors + (cpu.errors if cpu else []):
            lines.append(f"- ERROR {e}")
        details.append("\n".join(lines))
        if not args.quiet_failures:
            print(details[-1], flush=True)

    summary = "\n".join(header + table) + "\n\n" + "\n\n".join(details) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(summary)
    print("\n" + "\n".join(header + table))
    print(f"\nrecords and logs: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
