"""Data-parallel logistic regression on scikit-learn's 8x8 digits over MPI.

Start it with the launcher of the MPI the job uses, as its documentation says:
`mpirun python3 train_mpi.py` (Open MPI) or `mpiexec python3 train_mpi.py`
(MPICH's Hydra); the hostfile and the ssh settings come from the mpi plugin.

Each rank takes every size-th training sample, computes the gradient of the
softmax cross entropy on its shard, and the ranks sum the gradients with
MPI_Allreduce; every rank applies the same step. At the end rank 0 checks the
result against the same training run on the whole data set in one process.

Output: "rank R of W joined on HOST" from every rank; "epoch E loss L" and
"test accuracy A" from rank 0, then "serial check: max |w - w_serial| D"; from
every rank "rank R: parameters agree across W ranks (checksum C)" or
"rank R: parameters DIFFER ..." and exit 1.

EPOCH_PAUSE (seconds, default 0) is slept after each epoch: the e2e suite's
fault specs set it so that a pod can be lost in the middle of the run.
"""
import ctypes
import os
import socket
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


class HydraMPI:
    """MPI_COMM_WORLD of libmpich through ctypes. Debian builds mpi4py against
    Open MPI only; MPICH's ABI gives its handles fixed values (mpi.h).

    It leaves after a barrier without MPI_Finalize: Debian bookworm's MPICH
    4.0.2 runs over UCX 1.13, whose TCP transport now and then hung in
    MPI_Finalize's teardown (1 of 6 runs on the real node; openucx/ucx#8738),
    one rank spinning while the others waited for it. Hydra takes a rank that
    exits with status 0 as a normal end."""
    COMM_WORLD, DOUBLE, SUM, IN_PLACE = 0x44000000, 0x4C00080B, 0x58000003, -1

    def __init__(self):
        self.lib = ctypes.CDLL("libmpich.so.12")
        self.lib.MPI_Init(None, None)
        n = ctypes.c_int()
        self.lib.MPI_Comm_rank(self.COMM_WORLD, ctypes.byref(n))
        self.rank = n.value
        self.lib.MPI_Comm_size(self.COMM_WORLD, ctypes.byref(n))
        self.size = n.value

    def allreduce_sum(self, a):
        a = np.ascontiguousarray(a, dtype=np.float64)
        self.lib.MPI_Allreduce(ctypes.c_void_p(self.IN_PLACE), a.ctypes.data_as(ctypes.c_void_p),
                               a.size, self.DOUBLE, self.SUM, self.COMM_WORLD)
        return a

    def allgather(self, x):
        out = np.zeros(self.size)
        out[self.rank] = x
        return self.allreduce_sum(out)

    def finalize_and_exit(self, status):
        self.lib.MPI_Barrier(self.COMM_WORLD)
        sys.stdout.flush()
        os._exit(status)


class OpenMPI:
    """MPI_COMM_WORLD through mpi4py."""
    def __init__(self):
        from mpi4py import MPI
        self.mpi, self.comm = MPI, MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()

    def allreduce_sum(self, a):
        a = np.ascontiguousarray(a, dtype=np.float64)
        self.comm.Allreduce(self.mpi.IN_PLACE, a, op=self.mpi.SUM)
        return a

    def allgather(self, x):
        return np.array(self.comm.allgather(x))

    def finalize_and_exit(self, status):
        self.mpi.Finalize()
        sys.exit(status)


# Hydra's proxies hand each rank PMI_FD (or PMI_PORT); Open MPI's ranks get OMPI_*.
mpi = HydraMPI() if ("PMI_FD" in os.environ or "PMI_PORT" in os.environ) else OpenMPI()
rank, world = mpi.rank, mpi.size
print(f"rank {rank} of {world} joined on {socket.gethostname()}", flush=True)

x, y = load_digits(return_X_y=True)
x_train, x_test, y_train, y_test = train_test_split(
    np.c_[x / 16.0, np.ones(len(x))], y, test_size=0.25, random_state=0, stratify=y)
onehot = np.eye(10)[y_train]
EPOCHS, LR = 40, 2.0
EPOCH_PAUSE = float(os.environ.get("EPOCH_PAUSE", "0"))


def gradient(w, xs, ys):
    """Summed gradient and loss of the softmax cross entropy over (xs, ys)."""
    z = xs @ w
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.log(p[ys.astype(bool)]).sum()
    return xs.T @ (p - ys), loss


def train(shard, allreduce, report):
    w = np.zeros((x_train.shape[1], 10))
    for epoch in range(1, EPOCHS + 1):
        g, loss = gradient(w, x_train[shard], onehot[shard])
        total = allreduce(np.append(g.ravel(), loss))
        w -= LR * total[:-1].reshape(w.shape) / len(x_train)
        if report and epoch % 10 == 0:
            print(f"epoch {epoch} loss {total[-1] / len(x_train):.4f}", flush=True)
        time.sleep(EPOCH_PAUSE)
    return w


w = train(slice(rank, None, world), mpi.allreduce_sum, rank == 0)
if rank == 0:
    accuracy = ((x_test @ w).argmax(axis=1) == y_test).mean()
    print(f"test accuracy {accuracy:.4f}", flush=True)
    serial = train(slice(None), lambda a: a, False)
    print(f"serial check: max |w - w_serial| {np.abs(w - serial).max():.3g}", flush=True)

# Every rank must hold the same parameters: compare a position-weighted checksum.
mine = float((w.ravel() * np.arange(1, w.size + 1)).sum())
sums = mpi.allgather(mine)
agree = sums.max() - sums.min() <= 1e-9 * max(1.0, abs(sums[0]))
if rank == 0:
    agree = agree and np.allclose(w, serial, rtol=0, atol=1e-9)
verdict = "agree" if agree else f"DIFFER (checksums {list(sums)})"
print(f"rank {rank}: parameters {verdict} across {world} ranks (checksum {mine:.6f})", flush=True)
mpi.finalize_and_exit(0 if agree else 1)
