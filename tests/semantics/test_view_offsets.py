"""A view's offset is a runtime value of the program that reads or writes it,
whatever the view (a select or narrow in an inner dim, a column, a strided
slice, a transposed view): a loop over many offsets compiles O(1) programs,
in Strict and in Fused Eager, and computes what the CPU computes."""
import pytest
import torch

import torch_tpu

MODES = ["strict", "fused"]
STEPS = 40


def programs_made():
    s = torch.tpu._get_cache_stats()
    return s["misses"] + s["disk_hits"]  # not found among the programs in memory


def read_select(x, i):
    return x[:, i, :] * 2


def read_narrow(x, i):
    return x.narrow(1, i, 3) + 1


def read_column(x, i):
    return x[:, :, 0][:, i] - 1  # a column of a matrix of strides (288, 6)


def read_step_slice(x, i):
    return x[:, i:i + 5:2, 1] * 3  # a step in an inner dim


def read_transposed(x, i):
    return x.transpose(0, 2)[i % 6].sin()  # a row of the transposed view


def write_select(x, i):
    x[:, i, :] = torch.full((2, 6), float(i), device=x.device)
    return x


def write_add_(x, i):
    x[:, i, :].add_(1)
    return x


def write_column_(x, i):
    x[:, :, i % 6].mul_(0.5)
    return x


CASES = [read_select, read_narrow, read_column, read_step_slice, read_transposed, write_select, write_add_,
         write_column_]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_loop_over_offsets_compiles_o1_programs(mode, fn):
    torch.manual_seed(0)
    base = torch.randn(2, STEPS + 8, 6)
    cpu, dev = base.clone(), base.to("tpu")
    with torch_tpu.eager_mode(mode):
        outs = []
        for i in range(2):  # offset 0 (static), then the first runtime offset
            fn(cpu, i)
            outs.append(fn(dev, i))
        torch.tpu.synchronize()
        before = programs_made()
        for i in range(2, STEPS + 2):
            want = fn(cpu, i)
            got = fn(dev, i)
            outs.append(got)
        torch.tpu.synchronize()
        made = programs_made() - before
    torch.testing.assert_close(got.cpu(), want)
    torch.testing.assert_close(dev.cpu(), cpu)
    # O(1): the offset-0 and first runtime-offset programs are made above; Fused Eager may
    # still settle its cuts on a few programs of the loop body
    assert made <= 4, f"{fn.__name__} in {mode}: {made} programs for {STEPS} offsets"


@pytest.mark.parametrize("mode", MODES)
def test_gru_cell_loop_over_time_steps(mode):
    """A recurrent loop over x[:, t] (the pattern that compiled a program per
    step): the same programs for every step (Fused Eager: a few, where its
    cuts settle)."""
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(8, 16)
    x = torch.randn(3, 24, 8)
    h = torch.zeros(3, 16)
    for t in range(x.shape[1]):
        h = cell(x[:, t], h)
    dcell, dx = cell.to("tpu"), x.to("tpu")
    with torch_tpu.eager_mode(mode):
        dh = torch.zeros(3, 16, device="tpu")
        for t in range(2):
            dh = dcell(dx[:, t], dh)
        torch.tpu.synchronize()
        before = programs_made()
        for t in range(2, x.shape[1]):
            dh = dcell(dx[:, t], dh)
        torch.tpu.synchronize()
        made = programs_made() - before
    assert made <= (0 if mode == "strict" else 4), made
    torch.testing.assert_close(dh.cpu(), h, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_compiled_loop_over_offsets(fn, fresh_dynamo):
    """Under torch.compile(backend="tpu"): dynamo makes one graph whose offset is a
    dynamic int (narrow, slices), or, as on CPU, a graph per offset where an int
    index specializes (x[:, i]); either way the programs are O(1) and the results
    CPU's, across the buckets' power-of-two boundaries (an offset is not a size)."""
    torch.manual_seed(0)
    base = torch.randn(2, STEPS + 8, 6)
    cpu, dev = base.clone(), base.to("tpu")
    cf = torch.compile(fn, backend="tpu")
    with torch._dynamo.config.patch(recompile_limit=STEPS + 8, cache_size_limit=STEPS + 8):
        for i in range(3):
            fn(cpu, i)
            cf(dev, i)
        torch.tpu.synchronize()
        before = programs_made()
        for i in range(3, STEPS + 3):
            want = fn(cpu, i)
            got = cf(dev, i)
            torch.testing.assert_close(got.cpu(), want, msg=lambda m: f"offset {i}: {m}")
        made = programs_made() - before
    torch.testing.assert_close(dev.cpu(), cpu)
    assert made <= 4, f"{fn.__name__} compiled: {made} programs for {STEPS} offsets"
