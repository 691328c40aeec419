"""Small models shared by the model and compile tests: a ResNet-style CNN with BatchNorm, a
GPT-style transformer (SDPA, LayerNorm, GELU, tied embeddings), a UNet-like model with
ConvTranspose2d, an LSTM and a GRU (their fused cells, as non-CPU devices run them); `_data(name)`
makes a batch for each."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu  # noqa: F401

DEV = "tpu"


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.block = ResBlock(8)
        self.head = nn.Linear(8, 5)

    def forward(self, x, y):
        h = self.block(self.stem(x))
        return F.cross_entropy(self.head(F.adaptive_avg_pool2d(h, 1).flatten(1)), y)


class GPT(nn.Module):
    def __init__(self, vocab=32, d=16, heads=2, ctx=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.02)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        # no bias: the key bias has an exactly-zero gradient, and Adam turns its rounding noise
        # into lr-sized steps that differ between platforms
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads = heads

    def forward(self, idx, y):
        b, t = idx.shape
        x = self.tok(idx) + self.pos[:t]
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
        sh = lambda z: z.view(b, t, self.heads, -1).transpose(1, 2)  # noqa: E731
        a = F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        x = x + self.mlp(self.ln2(x))
        logits = self.lnf(x) @ self.tok.weight.t()  # tied embeddings
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


class RNN(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(6, 12, batch_first=True, num_layers=1)
        self.head = nn.Linear(12, 3)

    def forward(self, x, y):
        out, _ = self.rnn(x)
        return F.cross_entropy(self.head(out[:, -1]), y)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.mid = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.out = nn.Conv2d(4 + 2, 1, 1)

    def forward(self, x, y):
        h = self.up(self.mid(self.down(x)))
        return F.mse_loss(self.out(torch.cat([h, x], dim=1)), y)


def _data(name):
    g = torch.Generator().manual_seed(1)
    if name == "resnet":
        return torch.randn(4, 3, 8, 8, generator=g), torch.randint(0, 5, (4,), generator=g)
    if name == "gpt":
        return torch.randint(0, 32, (2, 8), generator=g), torch.randint(0, 32, (2, 8), generator=g)
    if name in ("lstm", "gru"):
        return torch.randn(3, 5, 6, generator=g), torch.randint(0, 3, (3,), generator=g)
    return torch.randn(2, 2, 8, 8, generator=g), torch.randn(2, 1, 8, 8, generator=g)


MODELS = {
    "resnet": ResNet,
    "gpt": GPT,
    "unet": UNet,
    "lstm": lambda: RNN(nn.LSTM),
    "gru": lambda: RNN(nn.GRU),
}
