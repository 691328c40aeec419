"""The persistent compilation cache (tier 2) seen from fresh processes.

Each case runs the same small workload (Strict ops, a Fused training step)
in a new process on one cache directory and compares its results with
CPU's: a warm directory serves every program, and a damaged, truncated,
foreign or colliding entry, an unusable directory or two processes filling
one directory at once cost a recompile, never a crash or a wrong result."""
import json
import os
import subprocess
import sys
import textwrap

import cache_util
import pytest
import torch
from suite import params

CHILD = textwrap.dedent(
    r"""
    import json, sys, torch, torch_tpu
    torch.manual_seed(0)
    x = torch.randn(6, 5)
    w = torch.randn(5, 3, requires_grad=True)
    out = {}
    def work(dev):
        xd = x.to(dev); wd = w.detach().to(dev).requires_grad_()
        y = torch.tanh(xd @ wd).sum(0) * 2.5 + xd[:, :3].mean(0)
        (y.square().sum()).backward()
        return y.cpu(), wd.grad.cpu()
    ref = work("cpu")
    got = work("tpu")
    with torch_tpu.eager_mode("fused"):
        fused = work("tpu")
    ok = all(torch.allclose(a, b, rtol=1e-5, atol=1e-5) for a, b in zip(ref + ref, got + fused))
    s = torch.tpu._get_cache_stats()
    print("RESULT " + json.dumps({"ok": ok, "stats": s}))
    """
)


def run_child(cache_dir, extra_env=None, wait=True, code=CHILD):
    env = dict(os.environ)
    env.pop("TORCH_TPU_DEFER_AND_FUSE", None)
    env.pop("TORCH_TPU_LAUNCH_BLOCKING", None)
    env["TORCH_TPU_DISK_CACHE"] = "1"
    env["TORCH_TPU_CACHE_DIR"] = str(cache_dir)
    env.update(extra_env or {})
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if not wait:
        return p
    return finish(p)


def finish(p):
    return cache_util.finish(p)[0]


def entries(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".ttexec"))


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """A directory filled by one cold process, and that process's stats."""
    d = tmp_path_factory.mktemp("cache")
    s = run_child(d)
    return d, s


def copy_dir(src, dst):
    os.makedirs(dst, exist_ok=True)
    for f in entries(src):
        with open(os.path.join(src, f), "rb") as a, open(os.path.join(dst, f), "wb") as b:
            b.write(a.read())


def test_cold_then_warm(cold, tmp_path):
    d, s = cold
    assert s["disk_dir"] == str(d)
    # two in-memory signatures can give one program text: the second is a disk hit
    assert s["misses"] > 5 and s["disk_hits"] <= 2
    assert s["disk_writes"] == s["misses"]
    assert len(entries(d)) == s["misses"]
    assert s["requests"] == s["memory_hits"] + s["disk_hits"] + s["misses"]
    copy_dir(d, tmp_path)
    w = run_child(tmp_path)
    assert w["misses"] == 0, w
    assert w["disk_hits"] == s["misses"] + s["disk_hits"]
    assert w["disk_rejected"] == 0 and w["disk_errors"] == 0
    assert w["compile_seconds"] == 0


def test_warm_process_loads_its_list_at_start(cold, tmp_path):
    """The entries the last run of the same command line used are loaded while
    the process starts (the start-up list); another command line, a damaged
    list or TORCH_TPU_CACHE_PREFETCH=0 read them when asked: the same hits."""
    d, s = cold
    lists = [f for f in os.listdir(d) if f.endswith(".ttlist")]
    assert len(lists) == 1, os.listdir(d)
    for f in entries(d) + lists:
        with open(os.path.join(d, f), "rb") as a, open(os.path.join(tmp_path, f), "wb") as b:
            b.write(a.read())
    every = s["misses"] + s["disk_hits"]
    w = run_child(tmp_path)
    assert w["misses"] == 0 and w["disk_hits"] == every, w
    # each entry once (two signatures of one program text: the second reads the file)
    assert w["disk_prefetched"] == len(entries(tmp_path)) == s["misses"], w
    other = run_child(tmp_path, code=CHILD + "\n# another command line\n")
    assert other["misses"] == 0 and other["disk_hits"] == every and other["disk_prefetched"] == 0
    off = run_child(tmp_path, {"TORCH_TPU_CACHE_PREFETCH": "0"})
    assert off["disk_hits"] == every and off["disk_prefetched"] == 0
    with open(os.path.join(tmp_path, lists[0]), "wb") as f:
        f.write(b"TTLIST1\n" + os.urandom(40))
    bad = run_child(tmp_path)
    assert bad["disk_hits"] == every and bad["disk_prefetched"] == 0
    again = run_child(tmp_path)  # the damaged list was replaced
    assert again["disk_prefetched"] == s["misses"]
    # one list per command line: this one's and the other's
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".ttlist")]) == 2


@pytest.mark.parametrize("damage", params(["truncate", "empty", "flip_payload", "flip_header", "garbage"],
                                           ["truncate", "flip_header"]))
def test_damaged_entries_recompile(cold, tmp_path, damage):
    d, s = cold
    copy_dir(d, tmp_path)
    names = entries(tmp_path)
    hit = names[::2]  # every other entry damaged
    for f in hit:
        p = os.path.join(tmp_path, f)
        data = bytearray(open(p, "rb").read())
        if damage == "truncate":
            data = data[: len(data) // 2]
        elif damage == "empty":
            data = bytearray()
        elif damage == "flip_payload":
            data[-10] ^= 0x5A
        elif damage == "flip_header":
            data[9] ^= 0x01  # the format version
        else:
            data = bytearray(os.urandom(len(data)))
        open(p, "wb").write(bytes(data))
    w = run_child(tmp_path)
    assert w["misses"] == len(hit), w
    assert w["disk_hits"] == s["misses"] + s["disk_hits"] - len(hit)
    assert w["disk_rejected"] == len(hit)
    # rewritten: the next process is warm again
    w2 = run_child(tmp_path)
    assert w2["misses"] == 0 and w2["disk_hits"] == s["misses"] + s["disk_hits"]


def test_colliding_entry_is_refused(cold, tmp_path):
    """An entry under another entry's name (another key): refused by the key check."""
    d, s = cold
    copy_dir(d, tmp_path)
    names = entries(tmp_path)
    a, b = names[0], names[1]
    data = open(os.path.join(tmp_path, b), "rb").read()
    open(os.path.join(tmp_path, a), "wb").write(data)
    w = run_child(tmp_path)
    assert w["misses"] == 1 and w["disk_rejected"] == 1, w


def test_other_plugin_does_not_take_entries(cold, tmp_path):
    """The older CPU plugin (another identity) on the same directory compiles its own."""
    try:
        import xla_plugins.xla_cpu_pjrt as old
    except ImportError:
        pytest.fail("xla-cpu-pjrt is part of the set-up")
    path = os.path.join(os.path.dirname(old.__file__), "xla_cpu_pjrt.so")
    assert os.path.exists(path)
    d, s = cold
    copy_dir(d, tmp_path)
    n0 = len(entries(tmp_path))
    w = run_child(tmp_path, {"TORCH_TPU_PJRT_PLUGIN": path})
    # it compiles every program (its hits are its own entries, written moments before)
    assert w["misses"] == s["misses"] and w["disk_hits"] == s["disk_hits"], w
    if w["disk_dir"]:  # it serializes too: its entries sit beside the others
        assert len(entries(tmp_path)) == n0 + w["disk_writes"]
    # the first plugin is still warm
    w2 = run_child(tmp_path)
    assert w2["misses"] == 0


def test_unusable_directory(tmp_path):
    f = tmp_path / "file"
    f.write_text("not a directory")
    w = run_child(f / "sub")
    assert w["disk_dir"] is None and w["misses"] > 0 and w["disk_errors"] == 0
    w = run_child(f)
    assert w["disk_dir"] is None


def test_disabled(tmp_path):
    w = run_child(tmp_path / "c", {"TORCH_TPU_DISK_CACHE": "0"})
    assert w["disk_dir"] is None
    assert not (tmp_path / "c").exists()


def test_two_processes_fill_one_directory(tmp_path):
    ps = [run_child(tmp_path, wait=False) for _ in range(2)]
    ss = [finish(p) for p in ps]
    n = len(entries(tmp_path))
    assert n == max(s["misses"] for s in ss) or n == len(entries(tmp_path))
    assert all(s["disk_errors"] == 0 and s["disk_rejected"] == 0 for s in ss)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    w = run_child(tmp_path)
    assert w["misses"] == 0


def test_clear_cache_and_dump_dir(tmp_path):
    code = textwrap.dedent(
        """
        import json, os, sys, torch, torch_tpu
        a = torch.arange(6.0, device="tpu")
        (a * 2 + 1).cpu()
        s0 = torch.tpu._get_cache_stats()
        n0 = len([f for f in os.listdir(s0["disk_dir"]) if f.endswith(".ttexec")])
        torch.tpu._clear_cache()
        n1 = len([f for f in os.listdir(s0["disk_dir"]) if f.endswith(".ttexec")])
        r = (a * 2 + 1).cpu().tolist()
        s1 = torch.tpu._get_cache_stats()
        print("RESULT " + json.dumps({"n0": n0, "n1": n1, "r": r, "s0": s0, "s1": s1}))
        """
    )
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(tmp_path / "c"), TORCH_TPU_DISK_CACHE="1",
               TORCH_TPU_DUMP_DIR=str(tmp_path / "dump"))
    env.pop("TORCH_TPU_DEFER_AND_FUSE", None)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    assert r["n0"] > 0 and r["n1"] == 0
    assert r["r"] == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]
    assert r["s1"]["entries"] < r["s0"]["entries"] + r["s1"]["misses"]
    assert r["s1"]["misses"] > r["s0"]["misses"]  # compiled again: neither tier had it
    dumps = sorted(os.listdir(tmp_path / "dump"))
    assert len(dumps) == r["s1"]["dumped"] and len(dumps) >= r["s1"]["misses"]
    assert all(f.endswith(".mlir") for f in dumps)
    text = open(tmp_path / "dump" / dumps[0]).read()
    assert "func.func" in text and "stablehlo" in text
