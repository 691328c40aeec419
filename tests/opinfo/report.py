"""docs/op_coverage.md and tests/opinfo/summary.md from the sweep's report.json."""
import collections
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOC = os.path.join(ROOT, "docs", "op_coverage.md")
SUMMARY = os.path.join(HERE, "summary.md")

DTYPES = ["float32", "bfloat16", "float16", "int64", "int32", "bool", "complex64", "float64", "complex128",
          "int16", "int8", "uint8"]
BWD_DTYPES = ["float32", "complex64"]
EXCLUDED = ("cpu-ref-fails", "no-samples")
CELL = {"pass": "ok", "fail": "**WRONG**", "error": "err", "cpu-ref-fails": "cpu-fails",
        "no-samples": "no-samples", "timeout": "**TIMEOUT**", "crash": "**CRASH**"}


def _pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def _index(report):
    """{(op, dtype, variant): record}."""
    return {(r["op"], r["dtype"], r["variant"]): r for r in report["results"]}


def rate(report, variant, dtype="float32"):
    """(passed, counted, counts by status) over OpInfos for one (variant, dtype)."""
    c = collections.Counter(r["status"] for r in report["results"]
                            if r["variant"] == variant and r["dtype"] == dtype)
    counted = sum(n for s, n in c.items() if s not in EXCLUDED)
    return c["pass"], counted, c


def summary(report):
    """The headline figures as a dict."""
    s = {}
    for v in ("fwd", "bwd", "inplace", "out"):
        p, n, c = rate(report, v)
        s[v] = (p, n, c)
    s["dtypes"] = {d: rate(report, "fwd", d) for d in DTYPES}
    s["bwd_complex64"] = rate(report, "bwd", "complex64")
    s["meta_only"] = sum(1 for r in report["results"] if r["variant"] == "fwd"
                         and r["dtype"] == "float32" and r["status"] == "pass"
                         and r.get("meta_only", 0) == r.get("passed", 0) and r.get("passed"))
    return s


def missing_ranking(report):
    """[(aten op, OpInfos blocked, OpInfos where it is the only problem, examples)]."""
    blocks, sole = collections.defaultdict(set), collections.defaultdict(set)
    per_op = collections.defaultdict(set)
    other = collections.defaultdict(set)
    for r in report["results"]:
        for m in r.get("missing", []):
            blocks[m].add(r["op"])
            per_op[r["op"]].add(m)
        for kind, details in r.get("errors", {}).items():
            if kind != "missing-op":
                other[r["op"]].update(details)
    for op, ms in per_op.items():
        if len(ms) == 1 and not other[op]:
            sole[next(iter(ms))].add(op)
    rows = [(m, len(ops), len(sole[m]), sorted(ops)) for m, ops in blocks.items()]
    rows.sort(key=lambda x: (-x[1], -x[2], x[0]))
    return rows


VERDICT_ORDER = {"wrong": 0, "tpu-closer": 1, "near": 2}


def mismatches(report):
    """The failing cases, worst verdict first."""
    rows = [r for r in report["results"] if r["status"] == "fail"]
    rows.sort(key=lambda r: (VERDICT_ORDER.get(r["mismatch"].get("verdict"), 0), r["op"],
                             r["variant"], r["dtype"]))
    return rows


def _ops_by_verdict(report):
    """{verdict: sorted OpInfo names whose worst mismatch has that verdict}."""
    worst = {}
    for r in mismatches(report):
        v = r["mismatch"].get("verdict", "wrong")
        if r["op"] not in worst or VERDICT_ORDER[v] < VERDICT_ORDER[worst[r["op"]]]:
            worst[r["op"]] = v
    out = {v: [] for v in VERDICT_ORDER}
    for op, v in sorted(worst.items()):
        out[v].append(op)
    return out


def other_errors(report):
    """{(kind, detail): [case names]} for tpu errors that are not a missing op."""
    out = collections.defaultdict(list)
    for r in report["results"]:
        for kind, details in r.get("errors", {}).items():
            if kind in ("missing-op", "sample-generation"):
                continue
            for d in details:
                out[(kind, d)].append(f"{r['op']} ({r['dtype']} {r['variant']})")
    return out


def _fmt(x):
    return "" if x is None else (f"{x:.3g}" if isinstance(x, float) else str(x))


def summary_lines(report):
    s = summary(report)
    m = report["meta"]
    fp, fn, _ = s["fwd"]
    bp, bn, _ = s["bwd"]
    by = _ops_by_verdict(report)
    top = missing_ranking(report)[:5]
    per_dtype = ", ".join(f"{d} {_pct(*s['dtypes'][d][:2])}" for d in DTYPES)
    lines = [
        f"OpInfo conformance (`make opinfo`, {len(report['ops'])} OpInfos of torch "
        f"{m['torch']}'s op_db, {m['date'][:10]}; details: docs/op_coverage.md):",
        "",
        f"- Forward, float32: {fp}/{fn} OpInfos pass on every sample ({_pct(fp, fn)}; "
        f"denominator: OpInfos whose CPU reference runs).",
        f"- Backward, float32: {bp}/{bn} differentiable OpInfos pass ({_pct(bp, bn)}).",
        f"- Forward pass rate per dtype: {per_dtype}.",
        f"- Complex64 (inputs and outputs): forward {s['dtypes']['complex64'][0]}/"
        f"{s['dtypes']['complex64'][1]} ({_pct(*s['dtypes']['complex64'][:2])}), backward "
        f"{s['bwd_complex64'][0]}/{s['bwd_complex64'][1]} ({_pct(*s['bwd_complex64'][:2])}).",
        f"- In-place variants: {_pct(*s['inplace'][:2])} ({s['inplace'][0]}/{s['inplace'][1]}); "
        f"out= variants: {_pct(*s['out'][:2])} ({s['out'][0]}/{s['out'][1]}).",
        f"- Mismatching results (the op runs, the answer differs from CPU): "
        f"{len(by['wrong'])} OpInfos wrong ({', '.join(by['wrong']) or 'none'}); "
        f"{len(by['tpu-closer'])} where the tpu is closer to float64 than CPU (half types: CPU "
        f"rounds intermediates); {len(by['near'])} near misses (within 1e-3). Every other "
        f"failure raises an error (mostly a missing lowering).",
        "- Most wanted lowerings: " + ", ".join(f"`{a}` ({n})" for a, n, _, _ in top) + ".",
    ]
    return lines


def cuda_dtypes_lines(report):
    """The section on the dtypes CUDA accepts and CPU refuses (tests/opinfo/cuda_dtypes.py)."""
    rows = report.get("cuda_dtypes")
    if not rows:
        return []
    count = {}
    for r in rows:
        count[r["status"]] = count.get(r["status"], 0) + 1
    dev = len(rows) - count.get("not-device", 0)
    L = ["## Dtypes CUDA accepts and CPU refuses", "",
         f"{len(rows)} (OpInfo, dtype, forward or backward) pairs where `supported_dtypes(\"cuda\")` (or the "
         "backward's) has a dtype the CPU lacks, compared against the CPU computing in a wider dtype, rounded once "
         f"(`tests/opinfo/cuda_dtypes.py`): **{count.get('pass', 0)} of {dev} compute like CUDA**; "
         f"{count.get('not-device', 0)} are CUDA kernels' entry points or sparse layouts (not swept).", "",
         "| status | pairs |", "|---|---|"]
    L += [f"| {k} | {v} |" for k, v in sorted(count.items())]
    why = {}
    for r in rows:
        if r["status"] not in ("pass", "not-device"):
            why.setdefault(r["why"].split(";")[0][:160], []).append(f"{r['op']} {r['dtype']} {r['variant']}")
    if why:
        L += ["", "Not yet, by reason:", ""]
        for w, ks in sorted(why.items(), key=lambda kv: -len(kv[1])):
            L.append(f"- {w} ({len(ks)}): " + ", ".join(f"`{k}`" for k in ks[:6]) + (" ..." if len(ks) > 6 else ""))
    return L + [""]


def markdown(report):
    m = report["meta"]
    s = summary(report)
    idx = _index(report)
    n_cases = len(report["results"])
    L = ["# OpInfo coverage of the tpu device", "",
         f"Generated by `make opinfo` (`tests/opinfo/run.py --full`) from `tests/opinfo/report.json`: "
         f"{m['date']}, torch {m['torch']}, git {m['git'] or '?'}, {len(report['ops'])} OpInfos, "
         f"{n_cases} (op, dtype, variant) cases, {m['duration_s']:.0f} s with {m['jobs']} workers.",
         "",
         "Each OpInfo of `torch.testing._internal.common_methods_invocations.op_db` makes its "
         "samples on CPU (seeded); the op runs on CPU and on copies moved to `tpu`; outputs are "
         "compared (values, dtypes, shapes; NaN equals NaN). Variants: forward in every dtype of "
         f"{', '.join(m['dtypes'])} the OpInfo supports on CPU; backward (gradients of "
         "sum(out * w), w a fixed random CPU tensor; complex outputs through their real view) "
         "in float32 and complex64; in-place and `out=` in float32. "
         f"Samples per case are capped ({', '.join(f'{k}: {v}' for k, v in m['max_samples'].items())}). "
         "Ops whose CPU output differs between two seeds (random ops) or is uninitialized "
         "(`empty*`) are compared by shape and dtype only.",
         "",
         "Statuses: **ok** every sample agrees; **WRONG** / mismatch (tpu-closer) / mismatch "
         "(near): a sample gives a different answer (see the verdicts below); "
         "**err** tpu raised (usually a missing lowering); "
         "cpu-fails: the CPU reference itself raises on every sample, so the case is excluded; "
         "no-samples: nothing to run (excluded); TIMEOUT / CRASH: the case hung or killed "
         "its process. complex64 is swept like the real dtypes (complex128 and complex32 are "
         "not); complex outputs of float inputs (fft, eig-type linalg) are compared like "
         "float32. "
         "OpInfos whose CPU dtypes are all outside the swept set (e.g. complex-only, float64-only) "
         "have no cases.",
         "",
         "Tolerances (rtol, atol): " + ", ".join(f"{k} {tuple(v)}" for k, v in m["tolerances"].items())
         + "; integers and bool exact. A mismatch inside "
         + ", ".join(f"{k} {tuple(v)}" for k, v in m["near_tolerances"].items())
         + " is marked *near* (likely rounding or summation order; PyTorch's own "
         "test_compare_cpu allows 1e-3).",
         ""]
    if m.get("overrides"):
        L += ["Per-op tolerance overrides:", ""]
        for k, v in sorted(m["overrides"].items()):
            L.append(f"- `{k}` ({', '.join(v['dtypes']) if v.get('dtypes') else 'all floats'}): "
                     f"rtol {v.get('rtol')}, atol {v.get('atol')} — {v['reason']}")
        L.append("")

    L += ["## Summary", ""]
    L += summary_lines(report)[2:]
    L += ["", "| variant | dtype | ok | mismatch | err | timeout/crash | cpu-fails | no-samples "
          "| pass rate |",
          "|---|---|---|---|---|---|---|---|---|"]
    for v, dts in (("fwd", DTYPES), ("bwd", BWD_DTYPES), ("inplace", ["float32"]),
                   ("out", ["float32"])):
        for d in dts:
            p, n, c = rate(report, v, d)
            L.append(f"| {v} | {d} | {c['pass']} | {c['fail']} | {c['error']} | "
                     f"{c['timeout'] + c['crash']} | {c['cpu-ref-fails']} | {c['no-samples']} | "
                     f"{_pct(p, n)} |")
    n_only_other = sum(1 for i in report["ops"].values() if i.get("only_other_dtypes"))
    n_complex = sum(1 for i in report["ops"].values() if i.get("complex"))
    L += ["", f"{s['meta_only']} float32 forward passes compare shapes and dtypes only (random or "
          f"uninitialized outputs). {n_only_other} OpInfos have no dtype in the swept set; "
          f"{n_complex} OpInfos support complex dtypes on CPU.", ""]

    L += cuda_dtypes_lines(report)
    mism = mismatches(report)
    L += ["## Mismatches (wrong answers)", "",
          "Listed first because they are the worst failures: the op runs and returns a "
          "different result. Verdict: **wrong** (values, dtype or shape differ and the tpu is "
          "not closer to the truth); *tpu-closer* (beyond tolerance, but the tpu result is at "
          "least as close to a float64 CPU run as CPU's own: CPU rounds intermediates to the "
          "half type, the tpu computes in f32 and rounds once); *near* (within the near "
          "tolerance: summation order or rounding). err vs f64: max |result - float64 result| "
          "for tpu / CPU.", ""]
    if mism:
        L += ["| op | dtype | variant | verdict | max abs | max rel | err vs f64 (tpu / cpu) "
              "| worst mismatch (sample #) |", "|---|---|---|---|---|---|---|---|"]
        for r in mism:
            mm = r["mismatch"]
            v = mm.get("verdict", "wrong")
            f64 = mm.get("f64")
            L.append(f"| `{r['op']}` | {r['dtype']} | {r['variant']} | "
                     f"{'**wrong**' if v == 'wrong' else '*' + v + '*'} | {_fmt(mm.get('max_abs'))} | "
                     f"{_fmt(mm.get('max_rel'))} | "
                     f"{_fmt(f64[0]) + ' / ' + _fmt(f64[1]) if f64 else ''} | "
                     f"{mm['message'].replace('|', '/')} (#{mm['sample']}) |")
    else:
        L.append("None.")
    L.append("")

    rank = missing_ranking(report)
    L += ["## Missing ATen ops, by OpInfos blocked", "",
          "An ATen op blocks an OpInfo when some case of it raised "
          "\"aten::X is not supported on the tpu device yet\". *alone*: OpInfos where it is the "
          "only problem met (implementing it may unblock them, unless the next op is missing too).",
          "", "| # | ATen op | OpInfos | alone | examples |", "|---|---|---|---|---|"]
    for i, (a, n, alone, ops) in enumerate(rank, 1):
        ex = ", ".join(f"`{o}`" for o in ops[:6]) + (" …" if len(ops) > 6 else "")
        L.append(f"| {i} | `{a}` | {n} | {alone} | {ex} |")
    L.append("")

    other = other_errors(report)
    L += ["## Other tpu errors", "",
          "Errors that are not a missing lowering: unsupported dtypes/arguments, and failures "
          "inside a lowering or the runtime (bugs until shown otherwise).", ""]
    if other:
        L += ["| kind | error | cases |", "|---|---|---|"]
        for (kind, d), cases in sorted(other.items(), key=lambda x: (x[0][0], -len(x[1]), x[0][1])):
            ex = ", ".join(cases[:5]) + (f" … ({len(cases)})" if len(cases) > 5 else "")
            L.append(f"| {kind} | {d.replace('|', '/')[:200]} | {ex} |")
    else:
        L.append("None.")
    L.append("")

    crashed = [r for r in report["results"] if r["status"] in ("crash", "timeout")]
    L += ["## Crashes and timeouts", ""]
    L += [f"- `{r['op']}` {r['dtype']} {r['variant']}: {r['status']} "
          f"({'; '.join(sum(r.get('errors', {}).values(), []))[:200]})" for r in crashed] or ["None."]
    L.append("")
    excl = [r for r in report["results"] if r["status"] == "cpu-ref-fails"]
    L += ["## Excluded: the CPU reference fails", "",
          "Cases where PyTorch CPU itself raises on every sample (nothing to compare; not counted "
          "in the rates). Single samples that fail on CPU are skipped the same way "
          f"({sum(r.get('cpu_failed', 0) for r in report['results'])} samples in all).", ""]
    L.append(", ".join(f"`{r['op']}` ({r['dtype']} {r['variant']})" for r in excl) or "None.")
    L.append("")

    L += ["## Per-op results", "",
          "Columns: forward per dtype, then float32 backward / in-place / out=, complex64 "
          "backward. `·` = not applicable (dtype or variant not supported by the OpInfo).", "",
          "| op | " + " | ".join(DTYPES) + " | bwd | inplace | out | bwd complex64 | missing ATen ops |",
          "|---|" + "---|" * (len(DTYPES) + 5)]
    for key in report["ops"]:
        cells = []
        missing = set()
        for d, v in ([(d, "fwd") for d in DTYPES] + [("float32", x) for x in ("bwd", "inplace", "out")]
                     + [("complex64", "bwd")]):
            r = idx.get((key, d, v))
            if r is None:
                cells.append("·")
                continue
            missing.update(r.get("missing", []))
            if r["status"] == "fail":
                v = r["mismatch"].get("verdict", "wrong")
                cells.append("**WRONG**" if v == "wrong" else f"mismatch ({v})")
            else:
                cells.append(CELL.get(r["status"], r["status"]))
        if all(c == "·" for c in cells):
            continue
        L.append(f"| `{key}` | " + " | ".join(cells) + " | "
                 + ", ".join(f"`{x}`" for x in sorted(missing)) + " |")
    L.append("")
    return "\n".join(L)


def write_all(report):
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    with open(DOC, "w") as f:
        f.write(markdown(report))
    lines = summary_lines(report)
    with open(SUMMARY, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {os.path.relpath(DOC, ROOT)} and {os.path.relpath(SUMMARY, ROOT)}")
