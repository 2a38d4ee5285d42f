"""The client of example/dask/dask-digits.yaml: a classifier of the digits
(scikit-learn's bundled 8x8 images, nothing downloaded), ridge regression on
random Fourier features, fitted on a Dask cluster: each of its two workers
computes the features and the normal equations of half the training set.

It is given no address: distributed.Client() finds the scheduler in Dask's
configuration key "scheduler-address", which Dask fills from the
DASK_SCHEDULER_ADDRESS variable the dask plugin sets. It waits for 2 workers,
pins one half of the data and its task to each worker (workers=...), checks
that each half was held and computed where it was pinned, sums the parts,
solves the ridge system, and checks the sums against the same computation
done locally with NumPy. The lines starting "client:" are what the e2e judge
reads; any failure exits non-zero with a line saying why.
"""

import os
import sys
import time

import numpy as np
from distributed import Client, get_worker
from sklearn.datasets import load_digits

WORKERS = 2
FEATURES = 300
RIDGE = 1.0
TRAIN = 1500


def fail(msg):
    print("client: FAILED: " + msg, flush=True)
    sys.exit(1)


def features(pixels, w, b):
    """Random Fourier features of the pixels, with a bias column."""
    phi = np.cos(pixels @ w + b)
    return np.hstack([phi, np.ones((len(phi), 1))])


def normal_equations(part, w, b):
    """Phi^T Phi and Phi^T Y of one part (64 pixel columns, then 10 one-hot
    label columns), and the address of the worker that computed them."""
    phi, y = features(part[:, :64], w, b), part[:, 64:]
    return get_worker().address, phi.T @ phi, phi.T @ y


def main():
    address = os.environ.get("DASK_SCHEDULER_ADDRESS", "")
    if not address:
        fail("DASK_SCHEDULER_ADDRESS is not set")
    # No address: Dask's configuration supplies it.
    client = Client(timeout="60s")
    print("client: connected to the scheduler at %s (DASK_SCHEDULER_ADDRESS=%s)" % (client.scheduler.address, address), flush=True)
    client.wait_for_workers(WORKERS, timeout=180)
    info = client.scheduler_info()["workers"]
    workers = sorted(info)
    if len(workers) != WORKERS:
        fail("%d workers, want %d" % (len(workers), WORKERS))
    print("client: %d workers: %s" % (len(workers), " ".join("%s=%s" % (w, info[w]["name"]) for w in workers)), flush=True)

    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.data))
    pixels, target = digits.data[order] / 16.0, digits.target[order]
    onehot = np.eye(10)[target]
    w = np.random.default_rng(1).normal(0, 0.25, (64, FEATURES))
    b = np.random.default_rng(2).uniform(0, 2 * np.pi, FEATURES)
    halves = np.array_split(np.hstack([pixels[:TRAIN], onehot[:TRAIN]]), WORKERS)

    # One half of the training set, and the task that reduces it, on each
    # worker.
    parts, results = [], []
    for i, worker in enumerate(workers):
        part = client.scatter(halves[i], workers=[worker])
        parts.append(part)
        results.append(client.submit(normal_equations, part, w, b, workers=[worker], allow_other_workers=False, pure=False))
    done = client.gather(results)
    who_has = client.who_has(parts)
    start = 0
    for i, (worker, (ran_on, _, _)) in enumerate(zip(workers, done)):
        held = list(who_has[parts[i].key])
        if ran_on != worker or held != [worker]:
            fail("part %d was pinned to %s but ran on %s and is held by %s" % (i, worker, ran_on, held))
        print("client: part %d (rows %d-%d) held and computed by %s (%s)" % (i, start, start + len(halves[i]) - 1, worker, info[worker]["name"]), flush=True)
        start += len(halves[i])
    if len({r[0] for r in done}) != WORKERS:
        fail("the parts ran on %s, want each of the %d workers" % (sorted({r[0] for r in done}), WORKERS))

    gram = sum(r[1] for r in done)
    moment = sum(r[2] for r in done)
    phi = features(pixels, w, b)
    diff = max(np.abs(gram - phi[:TRAIN].T @ phi[:TRAIN]).max(), np.abs(moment - phi[:TRAIN].T @ onehot[:TRAIN]).max())
    if diff > 1e-9:
        fail("the distributed normal equations differ from the local ones by %g" % diff)
    coef = np.linalg.solve(gram + RIDGE * np.eye(FEATURES + 1), moment)
    accuracy = float((np.argmax(phi[TRAIN:] @ coef, axis=1) == target[TRAIN:]).mean())
    if accuracy < 0.9:
        fail("test accuracy %.4f, want at least 0.9" % accuracy)
    print("client: result OK: the %d workers' normal equations match the local computation (max diff %.1e); "
          "test accuracy %.4f on %d held-out digits" % (WORKERS, diff, accuracy, len(target) - TRAIN), flush=True)
    client.close()


if __name__ == "__main__":
    t0 = time.monotonic()
    main()
    print("client: done in %.1fs" % (time.monotonic() - t0), flush=True)
