"""PyTorch's device-generic test suite on `tpu` and on CPU: fetch, run, tabulate.

  python tools/conformance.py [--files a.py,b.py] [--fetch-only] [--report-only] ...

For each file of SUITE below (or those named with --files):
1. fetch: the file (and the files it imports from PyTorch's test folder) is put in
   --tests-dir unless it is there already. Sources, in order: --pytorch-src (a
   PyTorch checkout: `git show COMMIT:PATH` where it is a git work tree, else the
   plain file), then the file at its repository and commit on GitHub. The files
   are PyTorch's code: they are fetched at run time and never committed here.
2. run: tools/pytorch_tests.py's runner runs the file on `tpu` and on CPU with the
   same selection (per-test time limit, a crashed child restarts without the
   tests already done).
3. report: the results of every file run so far (docs/conformance.json, merged
   per file) become docs/conformance.md: passed / failed / skipped / crashed and
   wall time per device, each test that fails on `tpu` and passes on CPU with its
   reason (KNOWN below: a test that assumes CPU or CUDA) or as "to fix", and the
   tests that take more than 10x their CPU time.

`make conformance` runs it all (hours on 2 cores); `FILES=test_foreach.py` picks files.
"""
import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import types
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import pytorch_tests  # noqa: E402

DATA = os.path.join(ROOT, "docs", "conformance.json")
PAGE = os.path.join(ROOT, "docs", "conformance.md")

# The dtypes a run selects: a test whose name ends in dtype suffixes runs when all of them are here;
# a test without a dtype suffix always runs.
DTYPES = ("float32", "bfloat16", "int64", "bool", "complex64")

# Versions whose imports match torch 2.13's torch.testing._internal.
_GL3MON = ("GL3MON/pytorch", "cd26606fbe3055d64c3d23b0815b775e36b7f2e1")
_KDROZD = ("kdrozd-dev/pytorch", "81a0cdd28efad45c9f40120bf7768340ebcad641")
_SOUVIK = ("souvikDevloper/pytorch", "b09241fc624febddada28fbf5d2761f28b7a5acd")


def _src(path, repo_commit):
    return {"path": path, "repo": repo_commit[0], "commit": repo_commit[1]}


# name -> {"sources": files to fetch (the first is the test file), "k": pytest -k, "timeout": s}
SUITE = collections.OrderedDict([
    ("test_foreach.py", {"sources": [_src("test/test_foreach.py", _KDROZD)]}),
    ("test_optim.py", {"sources": [
        _src("test/test_optim.py", _KDROZD),
        _src("test/optim/test_optim.py", ("cekkr/pytorch", "33915f865cb9ceec52cce960cc2fb5e5962f338e")),
        _src("test/optim/test_lrscheduler.py", ("filipviz/pytorch", "ece05e49e209615294dec7bbd43df6e5fa3583c7")),
        _src("test/optim/test_swa_utils.py", ("pytorch/pytorch", "57192f9177e450fbebefcd40671a1ecbee55acc7")),
    ]}),
    ("test_tensor_creation_ops.py", {"sources": [_src("test/test_tensor_creation_ops.py", _GL3MON)],
                                     "k": "not test_cat_large_tensor"}),  # needs ~24 GB
    ("test_spectral_ops.py", {"sources": [_src("test/test_spectral_ops.py", _GL3MON)]}),
    ("test_scatter_gather_ops.py", {"sources": [_src("test/test_scatter_gather_ops.py", _KDROZD)]}),
    ("test_complex.py", {"sources": [_src("test/test_complex.py", _SOUVIK)]}),
    ("test_masked.py", {"sources": [_src("test/test_masked.py", _GL3MON)]}),
    ("test_dlpack.py", {"sources": [_src("test/test_dlpack.py",
                                         ("gkanugula-nv/pytorch", "e87d2b0af004c20a5e23f2c8b5baa83dfe3406a0"))]}),
    # no version found yet whose module-level code runs under torch 2.13 (ACCELERATOR_TYPE.value)
    ("test_modules.py", {"sources": [_src("test/test_modules.py", _GL3MON)]}),
    ("test_ops.py", {"sources": [_src("test/test_ops.py",
                                      ("sugowslt/pytorch", "2dff27a7b8a1128e895e28c3420f56e7e2a62dea"))]}),
    ("test_linalg.py", {"sources": [_src("test/test_linalg.py", _GL3MON)]}),
    # imports hypothesis (not a dependency here): the file is skipped where it is missing
    ("test_nn.py", {"sources": [_src("test/test_nn.py",
                                     ("anagnorisis2peripeteia/pytorch", "d880d2dfdf24c6023e7fb6799a214a956e7431cd"))],
                    "k": "DeviceType"}),
    ("test_autograd.py", {"sources": [_src("test/test_autograd.py", _GL3MON)], "k": "DeviceType"}),
    ("test_serialization.py", {"sources": [_src("test/test_serialization.py", _SOUVIK)]}),
    ("test_view_ops.py", {"sources": [_src("test/test_view_ops.py", _GL3MON)]}),
    ("test_shape_ops.py", {"sources": [_src("test/test_shape_ops.py", _GL3MON)]}),
    ("test_sort_and_select.py", {"sources": [_src("test/test_sort_and_select.py", _GL3MON)]}),
    ("test_type_promotion.py", {"sources": [_src("test/test_type_promotion.py",
                                                 ("maggiemoss/pytorch", "4b78f85938a63c12719f266324b57ffe9f3b7581"))]}),
    ("test_indexing.py", {"sources": [_src("test/test_indexing.py",
                                           ("sugowslt/pytorch", "4995d1e10888bd8b8cf693d5536002dc6f2ebced"))]}),
])

# Tests that fail on `tpu` and pass on CPU because they assume CPU or CUDA: (file, regex over the test
# id with the device spelled DEV, as pytorch_tests._norm_id writes it) -> reason.
KNOWN = [
    ("test_indexing.py", r"test_index_put_deterministic_with_optional_tensors",
     "expects CUDA's message \"must match\" (@onlyAccelerator); tpu raises CPU's"),
    ("test_indexing.py", r"test_trivial_fancy_out_of_bounds",
     "out-of-range positions on the device: checking would sync every indexing call (CUDA skips this test)"),
    ("test_view_ops.py", r"test_view_as_(real|complex)|test_flatten|test_ravel",
     "sparse or quantized tensors"),
    ("test_shape_ops.py", r"test_flip_dev_float32", "quantized tensors"),
    ("test_type_promotion.py", r"test_sparse_", "sparse tensors of other layouts than COO"),
    ("test_dlpack.py", r"test_dlpack", "torch 2.13's DLPack names no device type for a PrivateUse1 backend "
     "(Tensor.__dlpack_device__ raises ValueError: Unknown device type)"),
]


def _known(name, test_id):
    for fname, pat, reason in KNOWN:
        if fname == name and re.search(pat, test_id):
            return reason
    return None


# --------------------------------------------------------------------------------------------- fetch

def _fetch_one(src, dest, pytorch_src):
    """Put src at dest; returns where it came from, or raises OSError with the reasons."""
    reasons = []
    if pytorch_src:
        if os.path.isdir(os.path.join(pytorch_src, ".git")) or pytorch_src.endswith(".git"):
            r = subprocess.run(["git", "--git-dir", pytorch_src if pytorch_src.endswith(".git")
                                else os.path.join(pytorch_src, ".git"), "show",
                                f"{src['commit']}:{src['path']}"], capture_output=True)
            if r.returncode == 0:
                _write(dest, r.stdout)
                return f"{pytorch_src} at {src['commit'][:12]}"
            reasons.append(f"git show in {pytorch_src}: {r.stderr.decode(errors='replace').strip()[:120]}")
        plain = os.path.join(pytorch_src, src["path"])
        if os.path.isfile(plain):
            with open(plain, "rb") as f:
                _write(dest, f.read())
            return plain
        reasons.append(f"no {plain}")
    url = f"https://raw.githubusercontent.com/{src['repo']}/{src['commit']}/{src['path']}"
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            _write(dest, r.read())
        return url
    except Exception as e:  # noqa: BLE001  (no network, 404, ...)
        reasons.append(f"{url}: {e}")
    raise OSError("; ".join(reasons))


def _write(dest, data):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dest)


def fetch(names, tests_dir, pytorch_src):
    """Returns {name: None if every file is there, else the reason it is not}."""
    missing = {}
    for name in names:
        for src in SUITE[name]["sources"]:
            dest = os.path.join(tests_dir, os.path.relpath(src["path"], "test"))
            if os.path.isfile(dest):
                continue
            try:
                where = _fetch_one(src, dest, pytorch_src)
                print(f"fetched {src['path']} from {where}", flush=True)
            except OSError as e:
                missing[name] = (f"{src['path']} ({src['repo']} {src['commit'][:12]}) not fetched: {e}")
                print(f"conformance: {missing[name]}", flush=True)
                break
    return missing


# ---------------------------------------------------------------------------------------------- run

def _run_file(name, tests_dir, args):
    spec = SUITE[name]
    path = os.path.join(tests_dir, name)
    out = os.path.join(args.out, os.path.splitext(name)[0])
    os.makedirs(out, exist_ok=True)
    ns = types.SimpleNamespace(timeout=args.timeout, grace=args.grace, k=spec.get("k"),
                               package_root=ROOT)
    os.environ["PTT_DTYPES"] = ",".join(args.dtypes)
    row = {"selection": {"k": spec.get("k"), "dtypes": list(args.dtypes), "timeout": args.timeout},
           "date": datetime.date.today().isoformat(), "devices": {}}
    runs = {}
    for device in ("tpu", "cpu"):
        run = runs[device] = pytorch_tests.FileRun(path, device, ns, out).run()
        row["devices"][device] = {"counts": run.counts(), "wall": round(run.wall, 1), "errors": run.errors}
        print(f"{name} {device}: {run.counts()} in {run.wall:.0f} s", flush=True)
    cpu = {pytorch_tests._norm_id(r["id"]): r for r in runs["cpu"].records.values()}
    row["tpu_fails_cpu_passes"], row["slow"] = [], []
    for r in runs["tpu"].records.values():
        other = cpu.get(pytorch_tests._norm_id(r["id"]))
        if other is None or pytorch_tests._bucket(other["outcome"]) != "passed":
            continue
        if r["outcome"] in ("failed", "crashed"):
            row["tpu_fails_cpu_passes"].append([pytorch_tests._norm_id(r["id"]), r["outcome"], r["reason"]])
        elif r["outcome"] == "passed" and r["seconds"] > 2.0 and r["seconds"] > 10 * max(other["seconds"], 0.05):
            row["slow"].append([pytorch_tests._norm_id(r["id"]), r["seconds"], other["seconds"]])
    return row


# ------------------------------------------------------------------------------------------- report

def _load():
    if os.path.exists(DATA):
        with open(DATA) as f:
            return json.load(f)
    return {"files": {}, "not_fetched": {}}


def _save(data):
    with open(DATA, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


def _short(test_id):
    return test_id.split("::", 1)[-1]


def report(data):
    lines = [
        "# Conformance: PyTorch's device-generic tests on `tpu` and CPU",
        "",
        "Generated by `tools/conformance.py` (`make conformance`; `make conformance FILES=test_foreach.py` for",
        "some files) from `docs/conformance.json`. Each file runs twice with the same selection, on `tpu` and on",
        "CPU: the tests of the dtypes " + ", ".join(f"`{d}`" for d in DTYPES) + " and every test without a",
        "dtype, a time limit per test, a crashed process restarted without the tests already done. The test files",
        "are PyTorch's, fetched at run time (versions whose imports match torch 2.13): see",
        "[pytorch-tests.md](pytorch-tests.md). Wall times are on the machine that ran them (2 shared cores here).",
        "",
        "| file | selection | tpu: passed / failed / skipped / crashed | CPU: passed / failed / skipped / crashed "
        "| tpu fails, CPU passes: listed / to fix | wall tpu / CPU | run |",
        "|---|---|---|---|---|---|---|",
    ]
    details = []
    for name in SUITE:
        row = data["files"].get(name)
        if row is None:
            why = data.get("not_fetched", {}).get(name, "not run yet")
            lines.append(f"| {name} | | | | | | {why[:60]} |")
            continue
        tpu, cpu = row["devices"]["tpu"], row["devices"]["cpu"]
        sel = row["selection"]
        sel_s = f"`-k {sel['k']}`, " if sel.get("k") else ""
        sel_s += f"{sel['timeout']:g} s/test"

        def counts(d):
            c = d["counts"]
            return f"{c['passed']} / {c['failed']} / {c['skipped']} / {c['crashed']}"

        regress, known = [], []
        for tid, outcome, reason in sorted(row["tpu_fails_cpu_passes"]):
            why = _known(name, tid)
            (known if why else regress).append((tid, outcome, reason, why))
        slow = row["slow"]
        lines.append(f"| {name} | {sel_s} | {counts(tpu)} | {counts(cpu)} | {len(known)} / {len(regress)} | "
                     f"{tpu['wall']:.0f} s / {cpu['wall']:.0f} s | {row['date']} |")
        if regress or known or slow or tpu["errors"]:
            d = [f"### {name}", ""]
            for tid, outcome, reason, _ in regress:
                d.append(f"- to fix: `{_short(tid)}` ({outcome}): {reason}")
            for tid, outcome, reason, why in known:
                d.append(f"- listed: `{_short(tid)}`: {why}")
            for tid, secs, cpu_secs in sorted(slow, key=lambda s: -s[1])[:20]:
                d.append(f"- slow: `{_short(tid)}` {secs:.1f} s on tpu, {cpu_secs:.2f} s on CPU")
            if len(slow) > 20:
                d.append(f"- slow: {len(slow) - 20} more over 10x CPU's time")
            for e in tpu["errors"]:
                d.append(f"- error: {e}")
            details.append("\n".join(d))
    text = "\n".join(lines) + "\n"
    if details:
        text += "\n## Per file\n\nTests named with the device spelled `dev`.\n\n" + "\n\n".join(details) + "\n"
    with open(PAGE, "w") as f:
        f.write(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="", help="comma-separated names of SUITE (default: all)")
    ap.add_argument("--tests-dir", default="/tmp/pyt-tests/test")
    ap.add_argument("--pytorch-src", default=os.environ.get("PYTORCH_SRC"),
                    help="a PyTorch checkout (or its .git) to take the files from")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "conformance"))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--grace", type=float, default=30.0)
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--fetch-only", action="store_true")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    names = [n.strip() for n in args.files.split(",") if n.strip()] or list(SUITE)
    for n in names:
        if n not in SUITE:
            sys.exit(f"conformance: {n} is not in the suite ({', '.join(SUITE)})")
    data = _load()
    if not args.report_only:
        missing = fetch(names, args.tests_dir, args.pytorch_src)
        if not args.fetch_only:
            for name in names:
                if name in missing:
                    if name not in data["files"]:
                        data["not_fetched"][name] = "not fetched (see pytorch-tests.md)"
                    continue
                data["not_fetched"].pop(name, None)
                data["files"][name] = _run_file(name, args.tests_dir, args)
                _save(data)  # after each file: hours of work survive an interruption
    report(data)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
