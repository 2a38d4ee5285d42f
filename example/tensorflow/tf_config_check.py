"""Checks the TF_CONFIG contract and the network it describes; TensorFlow itself
is not involved (Debian has no TensorFlow package).

It reads TF_CONFIG the way TensorFlow's TFConfigClusterResolver does: "cluster"
maps each job name (chief, ps, worker...) to its task addresses, as a list or as
a {"index": address} dict; "task" gives this task's "type" and "index"; an
evaluator is not part of the cluster (it only checks that). It then does what a TensorFlow gRPC
server of the cluster needs: it serves on the port of its own address and
reaches every other task on the address the cluster gives for it. Each
connection exchanges one line: the dialling task says who it is, the served
task answers who it is, and both check the answer against the cluster.

Output: "<type>:<index> serves <address>", "<type>:<index> reached
<type>:<index> at <address>" per peer, then "<type>:<index>: reached N peers,
heard from N peers, cluster {...}" and exit 0; on any disagreement a line
starting "MISMATCH" and exit 1; exit 2 when a peer stays unreachable for
TIMEOUT seconds (default 180).
"""
import json
import os
import socket
import sys
import threading
import time

TIMEOUT = float(os.environ.get("TIMEOUT", "180"))
deadline = time.monotonic() + TIMEOUT


def addresses(cluster):
    """{job: [address, ...]} from TF_CONFIG's cluster, lists or index dicts."""
    out = {}
    for job, tasks in cluster.items():
        if isinstance(tasks, dict):
            tasks = [tasks[k] for k in sorted(tasks, key=int)]
        out[job] = list(tasks)
    return out


def resolve(host):
    """host's address; a pod's DNS name appears shortly after the pod starts."""
    while True:
        try:
            return socket.gethostbyname(host)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def mismatch(msg):
    print("MISMATCH " + msg, flush=True)
    os._exit(1)


config = json.loads(os.environ["TF_CONFIG"])
cluster = addresses(config.get("cluster", {}))
me = f'{config["task"]["type"]}:{int(config["task"]["index"])}'
peers = {f"{job}:{i}": addr for job, addrs in cluster.items() for i, addr in enumerate(addrs)}
if me not in peers and not me.startswith("evaluator:"):
    mismatch(f"{me} is not in the cluster {cluster}")
own = peers.pop(me, None)
heard = set()
done = threading.Event()

if own:
    host, port = own.rsplit(":", 1)
    # The address the cluster gives for this task must be this pod.
    if resolve(host) != resolve(socket.gethostname()):
        mismatch(f"{me}: my address {own} resolves to {resolve(host)}, not to this pod")
    server = socket.create_server(("", int(port)))
    print(f"{me} serves {own}", flush=True)

    def serve():
        while len(heard) < len(peers):
            conn, _ = server.accept()
            with conn:
                who = conn.makefile().readline().strip()
                if not who:
                    continue  # a port probe, e.g. the wait-for-dependencies container
                if who not in peers:
                    mismatch(f"{me}: {who!r} connected, not a task of the cluster")
                conn.sendall((me + "\n").encode())
                heard.add(who)
        done.set()

    threading.Thread(target=serve, daemon=True).start()
else:
    # An evaluator reads checkpoints; no task of the cluster expects it.
    peers = {}
    done.set()

for peer, addr in sorted(peers.items()):
    host, port = addr.rsplit(":", 1)
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as conn:
                conn.sendall((me + "\n").encode())
                answer = conn.makefile().readline().strip()
            break
        except OSError as err:
            if time.monotonic() > deadline:
                print(f"{me}: {peer} at {addr} unreachable: {err}", flush=True)
                sys.exit(2)
            time.sleep(0.5)
    if answer != peer:
        mismatch(f"{me}: {addr} is {peer} in the cluster but answered {answer!r}")
    print(f"{me} reached {peer} at {addr}", flush=True)

if not done.wait(max(deadline - time.monotonic(), 0)):
    print(f"{me}: heard from only {sorted(heard)}", flush=True)
    sys.exit(2)
print(f"{me}: reached {len(peers)} peers, heard from {len(heard)} peers, cluster {json.dumps(cluster, sort_keys=True)}", flush=True)
