"""Allocations beyond the device's capacity raise torch.OutOfMemoryError at
once, as on CUDA, naming the sizes, and leave the device working. The
capacity is TORCH_TPU_MEMORY_LIMIT, else the plugin's memory limit, else (CPU
plugin) the host's physical memory (csrc/core/runtime/memory.c)."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_tpu  # noqa: F401

dev = torch.device("tpu")


def _host_memory():
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE")


def test_huge_empty_raises_oom_and_device_keeps_working():
    before = torch.tpu.memory_reserved()
    with pytest.raises(torch.OutOfMemoryError, match=r"Tried to allocate 256\.00 TiB") as e:
        torch.empty(2**46, device=dev)  # float32: 256 TiB
    msg = str(e.value)
    assert "total capacity" in msg and "free" in msg, msg
    assert issubclass(torch.OutOfMemoryError, RuntimeError)
    assert torch.tpu.memory_reserved() == before
    for make in (
        lambda: torch.zeros(2**44, 8, device=dev),
        lambda: torch.ones(2**45, dtype=torch.float64, device=dev),
        lambda: torch.empty(2**40, device=dev).new_empty(2**46),
        lambda: torch.randn(2**23, 2**23, device=dev),
    ):
        with pytest.raises(torch.OutOfMemoryError):
            make()
    assert torch.tpu.memory_reserved() == before
    x = torch.arange(6.0)
    torch.testing.assert_close((x.to(dev) * 2 + 1).cpu(), x * 2 + 1)


def test_resize_beyond_capacity_raises_and_keeps_the_tensor():
    # as on CPU, the sizes change before the storage grows, so x keeps the
    # new shape; its storage and data stay as they were
    x = torch.arange(5.0, device=dev)
    with pytest.raises(torch.OutOfMemoryError):
        x.resize_(2**46)
    assert x.untyped_storage().nbytes() == 20
    x.resize_(5)
    torch.testing.assert_close(x.cpu(), torch.arange(5.0))
    x.resize_(8)  # a growth within capacity still works
    torch.testing.assert_close(x[:5].cpu(), torch.arange(5.0))


def test_mem_get_info_counts_live_storages():
    free0, total = torch.tpu.mem_get_info()
    assert total == _host_memory()  # the CPU plugin: the host's physical memory
    r0 = torch.tpu.memory_reserved()
    a = torch.empty(1 << 20, device=dev)  # 4 MiB, never written: still counted
    free1, total1 = torch.tpu.mem_get_info()
    assert total1 == total
    assert free0 - free1 == 4 << 20
    assert torch.tpu.memory_reserved() - r0 == 4 << 20
    assert torch.tpu.memory_reserved() >= torch.tpu.memory_allocated()
    del a
    assert torch.tpu.mem_get_info()[0] == free0
    assert torch.tpu.memory_reserved() == r0


def _run(code, **env):
    e = dict(os.environ, **env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       env=e, timeout=120)
    return r


def test_env_var_sets_the_capacity():
    r = _run(
        """
        import torch, torch_tpu
        free, total = torch.tpu.mem_get_info()
        assert total == 64 << 20, total
        a = torch.ones(10 << 20, device="tpu")           # 40 MiB
        try:
            b = torch.ones(10 << 20, device="tpu")       # 40 more: beyond 64 MiB
        except torch.OutOfMemoryError as e:
            assert "Tried to allocate 40.00 MiB" in str(e), str(e)
            assert "TORCH_TPU_MEMORY_LIMIT" in str(e), str(e)
        else:
            raise SystemExit("no OutOfMemoryError")
        assert a.sum().item() == 10 << 20                # a is intact
        del a
        b = torch.ones(10 << 20, device="tpu")           # fits once a is gone
        assert b.sum().item() == 10 << 20
        print("ok")
        """,
        TORCH_TPU_MEMORY_LIMIT="64M",
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_malformed_env_var_is_a_clear_error():
    r = _run(
        """
        import torch, torch_tpu
        try:
            torch.ones(2, device="tpu")
        except Exception as e:
            print("raised", e)
        """,
        TORCH_TPU_MEMORY_LIMIT="lots",
    )
    assert "TORCH_TPU_MEMORY_LIMIT=lots" in r.stdout + r.stderr, r.stdout + r.stderr
