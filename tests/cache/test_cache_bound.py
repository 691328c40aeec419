"""The in-memory executable cache is bounded (TORCH_TPU_CACHE_MAX_PROGRAMS,
csrc/core/runtime/cache.c). The CPU plugin maps a few memory regions for
every program it compiles. Before the cache had a bound, a long process
(the whole pytest suite, or a loop over many shapes) reached the kernel's
vm.max_map_count: compiling then failed ("Failed to materialize symbols")
and the next C++ exception crashed in the unwinder. Beyond the bound, the
least recently used programs are dropped and compiled again if needed.
A program's maps vary from ~3 (elementwise) to ~180 (an SVD), so the cache
also counts the process's maps (TORCH_TPU_CACHE_MAX_MAPS, default half of
vm.max_map_count) and drops programs when they pass that bound."""
import os
import subprocess
import sys
import textwrap

import torch

import torch_tpu  # noqa: F401

SCRIPT = textwrap.dedent(
    r"""
    import torch, torch_tpu
    dev = torch.device("tpu")

    def nmaps():
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)

    # a device-side check still pending while its program is dropped: no
    # host read (which reports it) until synchronize
    x = torch.randn(4, 2).to(dev)
    x.index_select(0, torch.tensor([4]).to(dev))
    kept = [torch.full((n,), 2.0, device=dev) * 3 for n in range(1, 60)]
    assert torch.tpu.memory_stats()["compile_cache.evictions"] > 0
    try:
        torch.tpu.synchronize()
    except IndexError as e:
        assert "index_select" in str(e), e
    else:
        raise AssertionError("the pending index check was lost")
    torch.tpu.synchronize()
    assert all(torch.equal(k.cpu(), torch.full((n,), 6.0)) for n, k in zip(range(1, 60), kept))
    maps = []
    for rnd in range(2):  # the second round recompiles what the first dropped
        for n in range(1, 121):
            a = torch.arange(n, dtype=torch.float32)
            got = (a.to(dev) * 3 + 1).cpu()
            assert torch.equal(got, a * 3 + 1), (rnd, n)
        maps.append(nmaps())
    s = torch.tpu.memory_stats()
    assert s["compile_cache.max_entries"] == 40, s
    assert s["compile_cache.entries"] <= 40, s
    assert s["compile_cache.evictions"] >= 400, s
    # bounded: the second round of ~360 compiles holds no more regions
    assert maps[1] <= maps[0] + 100, maps
    print("OK", s["compile_cache.evictions"], maps)
    """
)


def test_cache_drops_least_recently_used_programs():
    # Strict Eager's one program per op signature (also when the suite runs in Fused)
    env = dict(os.environ, TORCH_TPU_CACHE_MAX_PROGRAMS="40", TORCH_TPU_DEFER_AND_FUSE="0")
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr[-3000:]


def test_default_bound_fits_the_kernel_map_limit():
    s = torch.tpu.memory_stats()
    with open("/proc/sys/vm/max_map_count") as f:
        maps = int(f.read())
    # counted as 32 maps a program (cache.c); the maps themselves have their own bound
    assert 64 <= s["compile_cache.max_entries"] <= max(64, min(4096, maps // 32)), s
    assert s["compile_cache.entries"] <= s["compile_cache.max_entries"]


MAPS_SCRIPT = textwrap.dedent(
    r"""
    import os, torch

    def nmaps():
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)

    # a bound some thousand maps above what the process holds without programs
    budget = nmaps() + 1500
    os.environ["TORCH_TPU_CACHE_MAX_MAPS"] = str(budget)
    import torch_tpu
    dev = torch.device("tpu")
    assert torch.tpu.memory_stats()["compile_cache.max_maps"] == budget
    g = torch.Generator().manual_seed(0)
    peak = 0
    for rnd in range(2):
        for n in range(2, 22):  # an SVD program holds ~180 maps on the CPU plugin
            a = torch.randn(n, n + 1, generator=g)
            s = torch.linalg.svd(a.to(dev))[1].cpu()
            torch.testing.assert_close(s, torch.linalg.svdvals(a), rtol=1e-4, atol=1e-4)
            peak = max(peak, nmaps())
    st = torch.tpu.memory_stats()
    assert st["compile_cache.maps_evictions"] > 0, (st, peak, budget)
    assert st["compile_cache.entries"] < 64, st
    # at most one check interval's programs past the bound
    assert peak <= budget + 1500, (peak, budget)
    # C++ exceptions (the unwinder reads every registered unwind table) still work
    for _ in range(3):
        try:
            torch.linalg.lstsq(torch.randn(5, 3, device=dev), torch.randn(4, 2, device=dev))
        except RuntimeError as e:
            assert "should match" in str(e)
    print("OK", st["compile_cache.maps_evictions"], peak, budget)
    """
)


def test_cache_drops_programs_beyond_the_maps_bound():
    env = dict(os.environ)
    env.pop("TORCH_TPU_CACHE_MAX_MAPS", None)
    r = subprocess.run([sys.executable, "-c", MAPS_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr[-3000:]


def test_default_maps_bound_is_half_the_kernel_limit():
    with open("/proc/sys/vm/max_map_count") as f:
        limit = int(f.read())
    want = int(os.environ.get("TORCH_TPU_CACHE_MAX_MAPS", limit // 2))
    assert torch.tpu.memory_stats()["compile_cache.max_maps"] == want
