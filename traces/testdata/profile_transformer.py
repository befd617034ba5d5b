"""Profile one training step of a small transformer layer with the PyTorch profiler (CPU).

Writes transformer_cpu.json, the fixture ddlest's traces tests import. Run it through
make_fixture.sh, which installs Debian's python3-torch (1.13, CPU-only, built without Kineto, so
the export is the legacy autograd-profiler Chrome trace: a bare JSON array of events).

The step is annotated the way training loops usually are: ProfilerStep#N (the profiler's
schedule), "forward", "backward" and "optimizer" record_function ranges, and one range per layer.
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(1)

HIDDEN, HEADS, SEQ, BATCH, LAYERS = 64, 4, 32, 2, 2
layers = torch.nn.ModuleList(
    [torch.nn.TransformerEncoderLayer(HIDDEN, HEADS, dim_feedforward=4 * HIDDEN, batch_first=True) for _ in range(LAYERS)]
)
head = torch.nn.Linear(HIDDEN, 1)
params = list(layers.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
x = torch.randn(BATCH, SEQ, HIDDEN)
y = torch.randn(BATCH, SEQ, 1)


def step():
    with record_function("forward"):
        h = x
        for i, layer in enumerate(layers):
            with record_function(f"layer_{i}"):
                h = layer(h)
        loss = torch.nn.functional.mse_loss(head(h), y)
    with record_function("backward"):
        loss.backward()
    with record_function("optimizer"):
        opt.step()
        opt.zero_grad()


step()  # warm-up outside the profile
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for n in range(2):
        with record_function(f"ProfilerStep#{n}"):
            step()
out = sys.argv[1] if len(sys.argv) > 1 else "transformer_cpu.json"
prof.export_chrome_trace(out)
print("wrote", out)
