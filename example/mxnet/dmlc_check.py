"""Checks the DMLC_* contract of ps-lite (MXNet's parameter server) and the
network it describes; MXNet itself is not involved (Debian has no MXNet
package).

It follows ps-lite's start-up: the scheduler (DMLC_ROLE=scheduler) listens on
DMLC_PS_ROOT_PORT, on all addresses as ps-lite does with DMLC_USE_KUBERNETES=1;
every server and worker connects to DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT and
registers its role and its own address; once DMLC_NUM_SERVER servers and
DMLC_NUM_WORKER workers have registered, the scheduler gives every node its id
(ps-lite's numbering: servers 8, 10, ..., workers 9, 11, ...) and the list of
all nodes. Each worker then connects to every server and each server checks it
hears from every worker; each tells the scheduler when done.

Output of the scheduler: "scheduler: registered <role> <address>" per node,
then "scheduler: S servers and W workers registered (ids ...); every worker
reached every server" and exit 0. Any disagreement (a node count, a role, a
duplicate DMLC_WORKER_ID) prints a line starting "MISMATCH" and exits 1; a
peer unreachable for TIMEOUT seconds (default 180) exits 2.
"""
import os
import socket
import sys
import time

TIMEOUT = float(os.environ.get("TIMEOUT", "180"))
role = os.environ["DMLC_ROLE"]
root = (os.environ["DMLC_PS_ROOT_URI"], int(os.environ["DMLC_PS_ROOT_PORT"]))
servers, workers = int(os.environ["DMLC_NUM_SERVER"]), int(os.environ["DMLC_NUM_WORKER"])
deadline = time.monotonic() + TIMEOUT


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
    sys.exit(1)


def lines(conn):
    return conn.makefile("r")


def dial(addr):
    while True:
        try:
            return socket.create_connection(addr, timeout=TIMEOUT)
        except OSError as err:
            if time.monotonic() > deadline:
                print(f"{role}: {addr[0]}:{addr[1]} unreachable: {err}", flush=True)
                sys.exit(2)
            time.sleep(0.5)


if role == "scheduler":
    if resolve(root[0]) != resolve(socket.gethostname()):
        mismatch(f"DMLC_PS_ROOT_URI {root[0]} is not this pod")
    listener = socket.create_server(("", root[1]))
    nodes, worker_ids = [], set()
    while len(nodes) < servers + workers:
        conn, _ = listener.accept()
        r = lines(conn)
        fields = r.readline().split()
        if not fields:
            conn.close()  # a port probe, e.g. the wait-for-dependencies container
            continue
        node_role, host, port, worker_id = fields
        nodes.append((node_role, host, port, conn, r))
        if node_role == "worker":
            if worker_id in worker_ids:
                mismatch(f"two workers have DMLC_WORKER_ID {worker_id}")
            worker_ids.add(worker_id)
        print(f"scheduler: registered {node_role} {host}:{port}", flush=True)
    got = sum(n[0] == "server" for n in nodes), sum(n[0] == "worker" for n in nodes)
    if got != (servers, workers):
        mismatch(f"{got[0]} servers and {got[1]} workers registered, want {servers} and {workers}")
    ids = {"server": iter(range(8, 1 << 30, 2)), "worker": iter(range(9, 1 << 30, 2))}
    table = [(next(ids[n[0]]),) + n for n in nodes]
    listing = " ".join(f"{i}:{r}:{h}:{p}" for i, r, h, p, _, _ in table) + "\n"
    for node_id, _, _, _, conn, _ in table:
        conn.sendall(f"{node_id} {listing}".encode())
    for node_id, node_role, _, _, _, r in table:
        if r.readline().strip() != "done":
            mismatch(f"{node_role} {node_id} did not finish")
    print(f"scheduler: {servers} servers and {workers} workers registered "
          f"(ids {' '.join(str(i) for i in sorted(t[0] for t in table))}); every worker reached every server", flush=True)
    # Like ps-lite's Finalize, the nodes leave after the scheduler released them.
    for _, _, _, _, conn, _ in table:
        conn.sendall(b"exit\n")
    sys.exit(0)

if role not in ("server", "worker"):
    mismatch(f"DMLC_ROLE {role!r}")
own_ip = resolve(socket.gethostname())
listener = socket.create_server(("", 0))
sched = dial(root)
sched.sendall(f"{role} {own_ip} {listener.getsockname()[1]} {os.environ.get('DMLC_WORKER_ID', '-')}\n".encode())
from_sched = lines(sched)
me, *listing = from_sched.readline().split()
print(f"{role} {me}: the scheduler listed {len(listing)} nodes", flush=True)
peers = [entry.split(":") for entry in listing]
if role == "server":
    listener.settimeout(TIMEOUT)
    heard = set()
    while len(heard) < workers:
        conn, _ = listener.accept()
        with conn:
            heard.add(lines(conn).readline().strip())
            conn.sendall(f"{me}\n".encode())
    print(f"server {me}: heard from workers {' '.join(sorted(heard))}", flush=True)
else:
    for node_id, node_role, host, port in peers:
        if node_role != "server":
            continue
        with dial((host, int(port))) as conn:
            conn.sendall(f"{me}\n".encode())
            if lines(conn).readline().strip() != node_id:
                mismatch(f"worker {me}: {host}:{port} is not server {node_id}")
        print(f"worker {me} reached server {node_id} at {host}:{port}", flush=True)
sched.sendall(b"done\n")
if from_sched.readline().strip() != "exit":
    mismatch(f"{role} {me}: the scheduler left without releasing the nodes")
