"""torch.save/torch.load of tpu tensors and state dicts, storage byte views, torch.autocast("tpu")."""
import io

import pytest
import torch

import torch_tpu  # noqa: F401

DEV = "tpu"


def test_save_load_tensors_and_state_dict():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    md = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).to(DEV)
    md.load_state_dict(m.state_dict())
    x = torch.randn(3, 4)
    buf = io.BytesIO()
    torch.save({"x": x.to(DEV), "view": x.to(DEV)[1:, ::2], "sd": md.state_dict()}, buf)
    buf.seek(0)
    d = torch.load(buf)
    assert d["x"].device.type == DEV and d["sd"]["0.weight"].device.type == DEV
    torch.testing.assert_close(d["x"].cpu(), x)
    torch.testing.assert_close(d["view"].cpu(), x[1:, ::2])
    for k, v in m.state_dict().items():
        torch.testing.assert_close(d["sd"][k].cpu(), v)
    buf.seek(0)
    c = torch.load(buf, map_location="cpu")
    assert c["x"].device.type == "cpu"
    torch.testing.assert_close(c["x"], x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16, torch.bool])
def test_untyped_storage_round_trip(dtype):
    x = (torch.randn(6) * 10).to(dtype)
    s = x.to(DEV).untyped_storage()
    assert s.nbytes() == x.untyped_storage().nbytes()
    assert bytes(s.cpu()) == bytes(x.untyped_storage())


def test_byte_views_read_and_write():
    x = torch.randn(4, 3)
    xd = x.to(DEV)
    torch.testing.assert_close(xd.view(torch.uint8).cpu(), x.view(torch.uint8))
    torch.testing.assert_close(xd.view(torch.int16).cpu(), x.view(torch.int16))
    xd.view(torch.uint8)[0, :4] = 0
    x.view(torch.uint8)[0, :4] = 0
    torch.testing.assert_close(xd.cpu(), x)


def test_autocast_bf16_matches_cpu_autocast():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    md = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).to(DEV)
    md.load_state_dict(m.state_dict())
    x = torch.randn(5, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ref = m(x)
        ref_loss = torch.nn.functional.mse_loss(ref, torch.zeros_like(ref))
    with torch.autocast(DEV, dtype=torch.bfloat16):
        out = md(x.to(DEV))
        loss = torch.nn.functional.mse_loss(out, torch.zeros_like(out))
    assert out.dtype == ref.dtype == torch.bfloat16
    assert loss.dtype == ref_loss.dtype == torch.float32  # mse_loss runs in float32 under autocast
    torch.testing.assert_close(out.cpu(), ref, rtol=2e-2, atol=2e-2)
    loss.backward()
    ref_loss.backward()
    for p, q in zip(md.parameters(), m.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=3e-2, atol=3e-2)
