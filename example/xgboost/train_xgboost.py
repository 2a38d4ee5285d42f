"""Distributed XGBoost on sklearn's digits, from the xgboost plugin's variables.

Every pod runs this program with no arguments. The master (RANK 0) starts
XGBoost's Rabit tracker on DMLC_TRACKER_PORT and then trains as rank 0, as
Kubeflow's XGBoostJob examples do; the workers (RANK 1..n) join the tracker at
DMLC_TRACKER_URI:DMLC_TRACKER_PORT. Each rank trains on its own shard of the
training digits; xgb.train inside the collective allreduces the quantile
sketches and gradient histograms, so every rank ends with the same model,
which each rank checks against rank 0's. The test digits are held out.

XGBoost 1.7 and 2.0 (Rabit) read DMLC_TRACKER_URI, DMLC_TRACKER_PORT and
DMLC_TASK_ID from the environment when the collective starts
(rabit/src/allreduce_base.cc, AllreduceBase::Init); from 2.1 on they are
arguments of CommunicatorContext. The tracker's n_workers is DMLC_NUM_WORKER.

Lines for the judge (internal/training/judge_xgboost.go):
  rank R of W joined tracker at HOST:PORT
  rank R: test accuracy A on N held-out digits
  rank R: model sha256 H agrees across W ranks
and "MISMATCH ..." (exit 1) when the injected variables contradict each other.
"""

import hashlib
import os
import socket
import sys
import time

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from xgboost import collective
from xgboost.tracker import RabitTracker

ROUNDS = 30
# Rabit and the Python tracker up to 2.0; from 2.1 a C++ tracker and a
# collective that takes its parameters as arguments.
RABIT = tuple(int(x) for x in xgb.__version__.split(".")[:2]) < (2, 1)


def env_int(name):
    return int(os.environ[name])


def check_contract():
    """The plugin's variables, as XGBoostJob and the collective read them, agree."""
    rank, world = env_int("RANK"), env_int("WORLD_SIZE")
    problems = []
    # The master joins its own tracker at its own address (the plugin sets
    # $(POD_IP): the cluster's DNS may not serve its name yet), the others at
    # the master's name.
    tracker = socket.gethostbyname(socket.gethostname()) if rank == 0 else os.environ["MASTER_ADDR"]
    for name, want in [
        ("DMLC_TASK_ID", str(rank)),
        ("DMLC_NUM_WORKER", str(world)),
        ("DMLC_TRACKER_URI", tracker),
        ("DMLC_TRACKER_PORT", os.environ["MASTER_PORT"]),
    ]:
        if os.environ.get(name) != want:
            problems.append("%s=%r, want %r" % (name, os.environ.get(name), want))
    if not 0 <= rank < world:
        problems.append("RANK=%d outside WORLD_SIZE=%d" % (rank, world))
    if world > 1:
        # LightGBM's machine list: one address per worker.
        addrs = os.environ.get("WORKER_ADDRS", "").split(",")
        if len(addrs) != world - 1 or "" in addrs:
            problems.append("WORKER_ADDRS=%r lists %d workers, want %d" % (os.environ.get("WORKER_ADDRS"), len(addrs), world - 1))
    if problems:
        print("MISMATCH rank %d: %s" % (rank, "; ".join(problems)), flush=True)
        sys.exit(1)
    return rank, world


def collective_args():
    """What CommunicatorContext needs beyond the environment."""
    if RABIT:
        return {}  # Rabit reads DMLC_* from the environment itself.
    return {
        "dmlc_tracker_uri": os.environ["DMLC_TRACKER_URI"],
        "dmlc_tracker_port": env_int("DMLC_TRACKER_PORT"),
        "dmlc_task_id": os.environ["DMLC_TASK_ID"],
    }


def tracker_address(timeout=120.0):
    """DMLC_TRACKER_URI's address, looking the name up until it resolves.

    Rabit looks the name up once and does not retry a lookup that fails: it
    then connects to an unspecified address, which succeeds, and its first
    send fails ("failed in ReconnectLink ... Failed to call send: Broken
    pipe"), which ends the collective. Its connect retry
    (DMLC_WORKER_CONNECT_RETRY) only covers a tracker that refuses. In make
    demo, 11 Jobs starting on 2 cores, a worker's lookup of the master's name
    failed even though its wait container had resolved it. So the name is
    looked up here, once a second up to timeout seconds, and Rabit gets the
    address.
    """
    name = os.environ["DMLC_TRACKER_URI"]
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)[0][4][0]
        except socket.gaierror as err:
            if time.monotonic() > deadline:
                raise
            print("tracker %s does not resolve (%s); looking it up again in 1s" % (name, err), flush=True)
            time.sleep(1)


def start_tracker():
    """Rank 0's tracker on every address of its pod, on DMLC_TRACKER_PORT.

    sortby="task" ranks the workers by DMLC_TASK_ID, so that each trains as
    its RANK (1.7 compares the ids as strings: exact up to 10 ranks).
    """
    n = env_int("DMLC_NUM_WORKER")
    tracker = RabitTracker(host_ip="0.0.0.0", n_workers=n, port=env_int("DMLC_TRACKER_PORT"), sortby="task")
    if RABIT:
        tracker.start(n)
    else:
        tracker.start()
    return tracker


def main():
    rank, world = check_contract()
    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.data, digits.target, test_size=0.25, random_state=0, stratify=digits.target)
    # This rank's shard of the training digits.
    x_mine, y_mine = x_train[rank::world], y_train[rank::world]

    tracker = start_tracker() if rank == 0 else None
    where = "%s:%s" % (os.environ["DMLC_TRACKER_URI"], os.environ["DMLC_TRACKER_PORT"])
    os.environ["DMLC_TRACKER_URI"] = tracker_address()
    with collective.CommunicatorContext(**collective_args()):
        r, w = collective.get_rank(), collective.get_world_size()
        print("rank %d of %d joined tracker at %s" % (r, w, where), flush=True)
        if r != rank or w != world:
            print("MISMATCH rank %d of %d in the collective, injected RANK=%d WORLD_SIZE=%d" % (r, w, rank, world), flush=True)
            sys.exit(1)
        params = {"objective": "multi:softprob", "num_class": 10, "tree_method": "hist",
                  "max_depth": 4, "eta": 0.3, "nthread": 1, "seed": 0}
        bst = xgb.train(params, xgb.DMatrix(x_mine, label=y_mine), num_boost_round=ROUNDS)
        print("rank %d: trained %d rounds on %d of %d training digits" % (r, ROUNDS, len(y_mine), len(y_train)), flush=True)
        pred = bst.predict(xgb.DMatrix(x_test)).argmax(axis=1)
        print("rank %d: test accuracy %.4f on %d held-out digits" % (r, float((pred == y_test).mean()), len(y_test)), flush=True)
        digest = hashlib.sha256(bytes(bst.save_raw("json"))).hexdigest()
        first = collective.broadcast(digest, 0)
        agree = int(collective.allreduce(np.array([int(digest == first)], dtype=np.int32), collective.Op.SUM)[0])
        if agree == w:
            print("rank %d: model sha256 %s agrees across %d ranks" % (r, digest, w), flush=True)
        else:
            print("rank %d: model sha256 %s DIFFERS: %d of %d ranks have rank 0's %s" % (r, digest, agree, w, first), flush=True)
    if tracker is not None:
        # Every worker has shut its link down: their lines are printed.
        if RABIT:
            tracker.join()
        else:
            tracker.wait_for()
        print("master: tracker done, %d ranks shut down" % world, flush=True)
        # Digits' features take few values, so the merged quantile sketch has
        # the cuts one process would find, and the histograms' allreduce makes
        # the split sums of all the training digits: the distributed model is
        # the one a single process trains on them all, which a rank training
        # on its shard alone would not reach.
        serial = xgb.train(params, xgb.DMatrix(x_train, label=y_train), num_boost_round=ROUNDS)
        same = hashlib.sha256(bytes(serial.save_raw("json"))).hexdigest() == digest
        print("master: serial check: the model %s the one a single process trains on all %d training digits"
              % ("equals" if same else "DIFFERS from", len(y_train)), flush=True)
    return 0 if agree == w else 1


if __name__ == "__main__":
    sys.exit(main())
