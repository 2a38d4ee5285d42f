"""Data-parallel training of a small MLP on scikit-learn's 8x8 digits.

Runs the same under `python3 train_digits.py` in every pod (the pytorch plugin's
MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE) and under `torchrun
train_digits.py` (torchrun sets the same four for the process it starts): both
are init_method="env://", the default of init_process_group.

Output: "rank R of W joined" from every rank; "epoch E loss L" (mean cross
entropy over all ranks' training samples) and "test accuracy A" from rank 0;
then from every rank either "rank R: parameters agree across W ranks
(checksum C)" and exit 0, or "rank R: parameters DIFFER ..." and exit 1.

EPOCHS (default 8) is the number of epochs; EPOCH_PAUSE (seconds, default 0)
is slept after each: the e2e suite's fault specs set it so that a pod can be
lost in the middle of the run.
"""
import os
import signal
import socket
import sys
import time

import torch
import torch.distributed as dist
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

# As PID 1 of its container Python would ignore the kubelet's SIGTERM (the
# kernel drops signals PID 1 has no handler for): a deleted pod, and every pod
# of a restarting Job, would keep training until the grace period (30 s by
# default) ends in SIGKILL.
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

EPOCHS = int(os.environ.get("EPOCHS", "8"))
EPOCH_PAUSE = float(os.environ.get("EPOCH_PAUSE", "0"))

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
print(f"rank {rank} of {world} joined on {socket.gethostname()}", flush=True)

# The same split on every rank; the sampler gives each rank its own shard.
x, y = load_digits(return_X_y=True)
x_train, x_test, y_train, y_test = train_test_split(
    x / 16.0, y, test_size=0.25, random_state=0, stratify=y)
train = TensorDataset(torch.tensor(x_train, dtype=torch.float32), torch.tensor(y_train))
sampler = DistributedSampler(train, num_replicas=world, rank=rank, seed=0)
loader = DataLoader(train, batch_size=32, sampler=sampler)

torch.manual_seed(rank)  # DDP broadcasts rank 0's initial parameters anyway
model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(1, EPOCHS + 1):
    sampler.set_epoch(epoch)
    totals = torch.zeros(2, dtype=torch.float64)  # summed loss, samples
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()  # DDP averages the gradients over all ranks here
        optimizer.step()
        totals += torch.tensor([loss.item() * len(yb), len(yb)], dtype=torch.float64)
    dist.all_reduce(totals)
    if rank == 0:
        print(f"epoch {epoch} loss {(totals[0] / totals[1]).item():.4f}", flush=True)
    time.sleep(EPOCH_PAUSE)

if rank == 0:
    with torch.no_grad():
        pred = model(torch.tensor(x_test, dtype=torch.float32)).argmax(dim=1)
    print(f"test accuracy {(pred == torch.tensor(y_test)).double().mean().item():.4f}", flush=True)

# Every rank must end with the same parameters: compare a position-weighted
# checksum of all of them across ranks.
flat = torch.cat([p.detach().double().flatten() for p in model.parameters()])
mine = (flat * torch.arange(1, flat.numel() + 1, dtype=torch.float64)).sum().reshape(1)
sums = [torch.zeros(1, dtype=torch.float64) for _ in range(world)]
dist.all_gather(sums, mine)
sums = [s.item() for s in sums]
agree = max(sums) - min(sums) <= 1e-9 * max(1.0, abs(sums[0]))
verdict = "agree" if agree else f"DIFFER (checksums {sums})"
print(f"rank {rank}: parameters {verdict} across {world} ranks (checksum {mine.item():.6f})", flush=True)
# Leave together, and without PyTorch's C++ teardown: under torchrun's static
# rendezvous, PyTorch 1.13 aborted a process that had finished ("terminate
# called without an active exception", SIGABRT) in about one run of two.
dist.barrier()
sys.stdout.flush()
sys.stderr.flush()
os._exit(0 if agree else 1)
