"""Run the OpInfo sweep and write the report.

    python -m tests.opinfo.run --full            # every OpInfo (make opinfo)
    python -m tests.opinfo.run --ops add,sin     # a few OpInfos (report to --out)
    python -m tests.opinfo.run --full --dtypes complex64   # every OpInfo, complex64 only
    python -m tests.opinfo.run --report-only     # regenerate the markdown from report.json
    python -m tests.opinfo.run --full --compiled --out build/opinfo/compiled.json
                                                 # float32 forward and backward under torch.compile

The sweep runs in worker subprocesses (--jobs in parallel), each over a chunk
of OpInfos; a worker writes a line before and after every (op, dtype, variant)
so that when it dies (segfault, abort, hang past --hang-s) the variant it was
in is recorded as a crash and a fresh worker carries on with the rest.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REPORT = os.path.join(HERE, "report.json")
WORK = os.path.join(ROOT, "build", "opinfo")
# Scratch files of one sweep (tasks, results, worker logs): per process, so
# sweeps running side by side never read or delete each other's files.
SCRATCH = os.path.join(WORK, f"scratch_{os.getpid()}")


# ---- worker (a subprocess) ---------------------------------------------------------

def worker(task_file, result_file):
    import warnings
    warnings.filterwarnings("ignore")
    from . import harness
    by_key = {harness.op_key(op): op for op in harness.load_op_db()}
    with open(task_file) as f:
        tasks = json.load(f)
    with open(result_file, "a", buffering=1) as out:
        for key, variants in tasks:
            op = by_key[key]
            for dtype, variant in variants:
                out.write(json.dumps({"start": [key, dtype, variant]}) + "\n")
                out.flush()
                rec = harness.run_variant(op, dtype, variant)
                out.write(json.dumps({"rec": rec}) + "\n")
                out.flush()


# ---- parent ----------------------------------------------------------------------------

def plan(op_names=None, dtypes=None):
    """[(key, [(dtype, variant), ...], info)] for the OpInfos to sweep (dtypes:
    the dtype names to sweep, default all of harness.DTYPES)."""
    from . import harness
    import torch
    items = []
    for op in harness.load_op_db():
        key = harness.op_key(op)
        if op_names and key not in op_names and op.name not in op_names:
            continue
        try:
            supported = op.supported_dtypes("cpu")
        except Exception:  # noqa: BLE001
            supported = set()
        info = {
            "aten_name": op.aten_name,
            "cpu_dtypes": sorted(str(d).replace("torch.", "") for d in supported),
            "only_other_dtypes": not any(d in supported for d in harness.DTYPES.values()),
            "complex": any(d.is_complex for d in supported),
            "differentiable": bool(op.supports_autograd and torch.float32 in supported),
            "inplace": op.inplace_variant is not None,
            "out": bool(op.supports_out),
        }
        items.append((key, [list(v) for v in harness.variants_of(op, tuple(dtypes or harness.DTYPES))],
                      info))
    return items


_LIVE = {}  # cases finished by the running workers (for the progress line)
CHUNK_OPS = 60  # OpInfos per worker process (bounds its memory; a restart costs ~10 s)


def _run_job(job_id, tasks, hang_s, results, lock, log):
    """Run `tasks` in chunks, each in worker processes until all its cases are
    done or recorded as crashed."""
    os.makedirs(SCRATCH, exist_ok=True)
    tasks = [[k, list(v)] for k, v in tasks if v]
    for c in range(0, len(tasks), CHUNK_OPS):
        if _run_chunk(f"{job_id}_{c // CHUNK_OPS}", tasks[c:c + CHUNK_OPS], hang_s,
                      results, lock, log) is False:
            return


def _run_chunk(job_id, remaining, hang_s, results, lock, log):
    attempt = 0
    while remaining:
        attempt += 1
        task_file = os.path.join(SCRATCH, f"tasks_{job_id}_{attempt}.json")
        res_file = os.path.join(SCRATCH, f"results_{job_id}_{attempt}.jsonl")
        with open(task_file, "w") as f:
            json.dump(remaining, f)
        if os.path.exists(res_file):
            os.remove(res_file)
        open(res_file, "w").close()
        env = dict(os.environ, TORCH_TPU_CPU_FALLBACK="0", PYTHONWARNINGS="ignore")
        with open(os.path.join(SCRATCH, f"worker_{job_id.split('_')[0]}.log"), "a") as errlog:
            proc = subprocess.Popen(
                [sys.executable, "-m", "tests.opinfo.run", "--worker", task_file, res_file],
                cwd=ROOT, env=env, stdout=errlog, stderr=errlog)
            last_size, last_change = -1, time.time()
            while proc.poll() is None:
                time.sleep(1.0)
                size = os.path.getsize(res_file)
                if size != last_size:
                    last_size, last_change = size, time.time()
                    with open(res_file) as f:
                        _LIVE[job_id] = sum(1 for ln in f if ln.startswith('{"rec"'))
                elif time.time() - last_change > hang_s:
                    proc.kill()
                    proc.wait()
                    break
        rc = proc.returncode
        _LIVE[job_id] = 0
        done, current = set(), None
        with open(res_file) as f:
            for line in f:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if "start" in msg:
                    current = tuple(msg["start"])
                elif "rec" in msg:
                    r = msg["rec"]
                    done.add((r["op"], r["dtype"], r["variant"]))
                    with lock:
                        results.append(r)
                    current = None
        if current is not None:
            how = "hang: killed after %d s without progress" % hang_s \
                if rc in (-9,) else f"process died (exit status {rc})"
            with lock:
                results.append({"op": current[0], "dtype": current[1], "variant": current[2],
                                "status": "crash", "samples": 0, "passed": 0, "cpu_failed": 0,
                                "meta_only": 0, "missing": [], "mismatch": None,
                                "errors": {"crash": [how]}})
            done.add(current)
            log(f"[job {job_id}] {current[0]} {current[1]} {current[2]}: {how}")
        elif rc != 0:
            log(f"[job {job_id}] worker exited with {rc} between variants")
            if not done:  # no progress at all: give up on this chunk
                for k, vs in remaining:
                    for d, v in vs:
                        with lock:
                            results.append({"op": k, "dtype": d, "variant": v, "status": "crash",
                                            "samples": 0, "passed": 0, "cpu_failed": 0,
                                            "meta_only": 0, "missing": [], "mismatch": None,
                                            "errors": {"crash": [f"worker failed to start ({rc})"]}})
                return False
        remaining = [[k, [v for v in vs if (k, v[0], v[1]) not in done]] for k, vs in remaining]
        remaining = [[k, vs] for k, vs in remaining if vs]


def sweep(op_names, jobs, hang_s, out_path, write_docs, dtypes=None):
    t0 = time.time()
    if os.path.isdir(SCRATCH):  # a previous sweep's scratch files (same pid)
        shutil.rmtree(SCRATCH)
    items = plan(op_names, dtypes)
    n_cases = sum(len(v) for _, v, _ in items)
    print(f"{len(items)} OpInfos, {n_cases} (op, dtype, variant) cases, "
          f"{jobs} workers", flush=True)
    # Interleave so both workers get a mix of heavy and light ops; chunks keep
    # each worker process short-lived (bounded memory, cheap restarts).
    chunks = [[(k, v) for k, v, _ in items[j::jobs]] for j in range(jobs)]
    results, lock = [], threading.Lock()

    def log(msg):
        print(msg, flush=True)

    def progress():
        while any(t.is_alive() for t in threads):
            time.sleep(30)
            with lock:
                n = len(results) + sum(_LIVE.values())
            print(f"  {n}/{n_cases} cases done, {time.time() - t0:.0f} s", flush=True)

    threads = [threading.Thread(target=_run_job, args=(j, c, hang_s, results, lock, log))
               for j, c in enumerate(chunks)]
    for t in threads:
        t.start()
    mon = threading.Thread(target=progress, daemon=True)
    mon.start()
    for t in threads:
        t.join()
    duration = time.time() - t0
    shutil.rmtree(SCRATCH, ignore_errors=True)

    import torch
    from . import harness, tolerances
    order = {k: i for i, (k, _, _) in enumerate(items)}
    vorder = {"fwd": 0, "bwd": 1, "inplace": 2, "out": 3, "compiled": 4, "compiled_bwd": 5}
    dorder = {d: i for i, d in enumerate(harness.DTYPES)}
    results.sort(key=lambda r: (order.get(r["op"], 1 << 30), vorder[r["variant"]],
                                dorder[r["dtype"]]))
    report = {
        "meta": {
            "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "git": _git_head(),
            "duration_s": round(duration, 1),
            "jobs": jobs,
            "full": not op_names and not dtypes,
            "dtypes": list(dtypes or harness.DTYPES),
            "max_samples": harness.MAX_SAMPLES,
            "tolerances": {str(k).replace("torch.", ""): v for k, v in tolerances.DEFAULT.items()},
            "near_tolerances": {str(k).replace("torch.", ""): v
                                for k, v in harness.NEAR_TOL.items()},
            "overrides": {k: {**v, "dtypes": [str(d).replace("torch.", "") for d in v["dtypes"]]
                              if v.get("dtypes") else None}
                          for k, v in tolerances.OVERRIDES.items()},
        },
        "ops": {k: info for k, _, info in items},
        "results": results,
        "cuda_dtypes": cuda_dtypes_rows() if write_docs else None,
    }
    _write_report(report, out_path)
    print(f"wrote {os.path.relpath(out_path, ROOT)} ({len(results)} cases, {duration:.0f} s)")
    from . import report as rep
    if write_docs:
        rep.write_all(report)
    else:  # a partial sweep: its markdown goes next to its report
        with open(os.path.splitext(out_path)[0] + ".md", "w") as f:
            f.write(rep.markdown(report))
        print("\n".join(rep.summary_lines(report)))


def _write_report(report, out_path):
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:  # one line per case: small diffs between sweeps
        f.write('{"meta": ' + json.dumps(report["meta"], indent=1) + ',\n"ops": {\n')
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in report["ops"].items()))
        f.write('},\n"results": [\n')
        f.write(",\n".join(json.dumps(r) for r in report["results"]))
        f.write("\n]")
        if report.get("cuda_dtypes") is not None:
            f.write(',\n"cuda_dtypes": [\n' + ",\n".join(json.dumps(r) for r in report["cuda_dtypes"]) + "\n]")
        f.write("}\n")


def cuda_dtypes_rows():
    """The dtypes CUDA accepts and CPU refuses (cuda_dtypes.py), one row per (op, dtype, variant)."""
    from . import cuda_dtypes
    with open(os.devnull, "w") as quiet:
        rows = cuda_dtypes.sweep(out=quiet)
    return [{"op": k, "dtype": str(d).replace("torch.", ""), "variant": v, "status": st, "why": why}
            for k, d, v, st, why in rows]


def _git_head():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, timeout=10).stdout.strip()
    except Exception:  # noqa: BLE001
        return ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--full", action="store_true", help="sweep every OpInfo of op_db")
    ap.add_argument("--ops", help="comma-separated OpInfo names (name or name.variant)")
    ap.add_argument("--dtypes", help="comma-separated dtypes to sweep (default: all of "
                    "harness.DTYPES); with --full, e.g. --dtypes complex64 sweeps every OpInfo "
                    "in complex64 only (report to --out; the docs are not rewritten)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes in parallel")
    ap.add_argument("--hang-s", type=int, default=300,
                    help="kill a worker that makes no progress for this long")
    ap.add_argument("--out", default=None, help="report path (default: tests/opinfo/report.json"
                    " for --full, build/opinfo/report_partial.json otherwise)")
    ap.add_argument("--report-only", action="store_true",
                    help="regenerate docs/op_coverage.md and summary.md from the report")
    ap.add_argument("--compiled", action="store_true",
                    help="each OpInfo's float32 forward and backward under torch.compile(backend='tpu') "
                    "against CPU eager (report to --out; the docs are not rewritten)")
    ap.add_argument("--cuda-dtypes", action="store_true",
                    help="with --report-only: rerun the sweep of the dtypes CUDA accepts and CPU refuses "
                    "(cuda_dtypes.py) into the report first")
    ap.add_argument("--worker", nargs=2, metavar=("TASKS", "RESULTS"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(*a.worker)
        return 0
    if a.report_only:
        from . import report as rep
        with open(a.out or REPORT) as f:
            report = json.load(f)
        if a.cuda_dtypes:  # rerun that sweep alone (a minute) into the report
            report["cuda_dtypes"] = cuda_dtypes_rows()
            _write_report(report, a.out or REPORT)
        rep.write_all(report)
        return 0
    if not a.full and not a.ops:
        ap.error("give --full, --ops or --report-only")
    names = None if a.full else set(a.ops.split(","))
    dtypes = a.dtypes.split(",") if a.dtypes else None
    if dtypes:
        from . import harness
        unknown = [d for d in dtypes if d not in harness.DTYPES]
        if unknown:
            ap.error(f"unknown dtypes {unknown} (known: {', '.join(harness.DTYPES)})")
    if a.compiled:
        os.environ["TT_OPINFO_COMPILED"] = "1"  # the workers inherit it
        from . import harness
        harness.COMPILED = True
    complete = a.full and not dtypes and not a.compiled
    out = a.out or (REPORT if complete else os.path.join(WORK, "report_partial.json"))
    sweep(names, max(1, a.jobs), a.hang_s, out, write_docs=complete, dtypes=dtypes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
