"""Checks the contract of the paddle plugin and the network it describes;
PaddlePaddle itself is not involved (Debian has no PaddlePaddle package).

It reads only what the plugin injects, the way Paddle's launcher (python -m
paddle.distributed.launch, python/paddle/distributed/launch/) reads it when it
is given no arguments but the script:

  PADDLE_MASTER  --master      the launcher's HTTP rendezvous, "host:port"
  PADDLE_NNODES  --nnodes      "N", or "N:M" (the launcher then waits for M)
  PADDLE_JOB_ID  --job_id      the key prefix of the rendezvous
  PADDLE_SERVER_NUM, PADDLE_TRAINER_NUM   --server_num, --trainer_num: either
                 one set (non-zero) puts the launcher in parameter-server mode,
                 in which every node runs (value or 1) servers and trainers
  POD_IP         --host        the node's own address, when it has a "."

and then starts up as the launcher does (controllers/master.py, HTTPMaster;
controllers/collective.py; controllers/ps.py):

  - The node whose address is PADDLE_MASTER's host (or where that host is
    127.0.0.1) serves the rendezvous, an HTTP key-value store, on its port:
    GET <prefix> returns the JSON of every key under it, POST <key> stores the
    body, GET /healthy answers {"/healthy": "ok"}.
  - Every node waits until /healthy answers, stores its description under
    /<job id>/info/<key>/-1 (the serving node under the key "aaaaaa", so that
    it sorts first and is rank 0), and polls the prefix until PADDLE_NNODES
    nodes are there; its rank is its place among the sorted keys.
  - Collective mode: each node opens a "candidate" port; every other node
    reaches rank 0's (the launcher's PADDLE_MASTER for the training processes).
  - Parameter-server mode: each node opens its servers' ports; every trainer
    reaches every server of the job, and every server hears from every trainer.

Output: on success one line per node, "paddle <mode> rank <r> of <n> on <host>:
OK, job <id>, rendezvous <host:port> hosted by <host0>, nodes <h0,h1,...>;
<what it reached>", and exit 0; on a variable the launcher would not accept or
a disagreement between nodes a line starting "MISMATCH" and exit 1; exit 2 when
a peer stays unreachable for TIMEOUT seconds (default 180).
"""
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

TIMEOUT = float(os.environ.get("TIMEOUT", "180"))
deadline = time.monotonic() + TIMEOUT
# The pod's hostname, which the container runtime also puts in HOSTNAME.
hostname = os.environ.get("HOSTNAME") or socket.gethostname()


def mismatch(msg):
    print(f"MISMATCH {hostname}: {msg}", flush=True)
    os._exit(1)


def give_up(msg):
    print(f"{hostname}: {msg}", flush=True)
    os._exit(2)


def resolve(host):
    """host's IPv4 address; a pod's DNS name appears shortly after the pod starts."""
    while True:
        try:
            return socket.gethostbyname(host)
        except OSError as err:
            if time.monotonic() > deadline:
                give_up(f"{host} does not resolve: {err}")
            time.sleep(0.5)


# --- The variables, parsed by the launcher's rules -------------------------

env = os.environ
# What makes the launcher ignore the variables below or fall back to its
# legacy launcher (context/__init__.py is_legacy_mode; plugins/__init__.py
# collective_compatible resets --master and --nnodes from PADDLE_TRAINER_ENDPOINTS).
for name in ("DISTRIBUTED_TRAINER_ENDPOINTS", "PADDLE_ELASTIC_JOB_ID", "FLAGS_START_PORT", "PADDLE_TRAINER_ENDPOINTS"):
    if name in env:
        mismatch(f"{name} is set ({env[name]!r}): the launcher would not use PADDLE_MASTER and PADDLE_NNODES as given")

master = env.get("PADDLE_MASTER", "")
if not master:
    mismatch("PADDLE_MASTER is not set: every launcher would start a rendezvous of its own")
if master.startswith("etcd://"):
    mismatch(f"PADDLE_MASTER={master!r} names an etcd server; the plugin injects the launcher's HTTP rendezvous")
parts = master.split(":")
if len(parts) != 2 or not parts[0]:
    # HTTPMaster.lazy_init: ip, port = endpoint.split(':')
    mismatch(f"PADDLE_MASTER={master!r} is not host:port, which the launcher splits on its one ':'")
master_host, port_text = parts
try:
    master_port = int(port_text)
except ValueError:
    mismatch(f"PADDLE_MASTER={master!r}: port {port_text!r} is not an integer")
if not 0 < master_port < 65536:
    mismatch(f"PADDLE_MASTER={master!r}: port {master_port} is out of range")

nnodes_text = env.get("PADDLE_NNODES", "")
try:
    # job/job.py Job.set_replicas: "N", or "N:M" waiting for M.
    bounds = [int(x) for x in nnodes_text.split(":")] if nnodes_text else []
except ValueError:
    bounds = []
if len(bounds) not in (1, 2) or min(bounds) < 1 or bounds[0] > bounds[-1]:
    mismatch(f"PADDLE_NNODES={nnodes_text!r} is neither a positive integer N nor a range N:M")
nnodes = bounds[-1]

job_id = env.get("PADDLE_JOB_ID", "")
if not job_id or "/" in job_id:
    # The launcher keys the rendezvous by /<job id>/info; unset, every job is "default".
    mismatch(f"PADDLE_JOB_ID={job_id!r}: want a job's own name without '/'")


def count(name):
    text = env.get(name)
    if text is None:
        return 0
    try:
        return int(text)  # env_args_mapping converts with int()
    except ValueError:
        mismatch(f"{name}={text!r} is not an integer")


server_num, trainer_num = count("PADDLE_SERVER_NUM"), count("PADDLE_TRAINER_NUM")
ps = bool(server_num or trainer_num)  # controllers/ps.py PSController.enable
mode = "ps" if ps else "collective"
if ps:
    # _build_pod_with_master: server_num or 1, trainer_num or 1.
    server_num, trainer_num = server_num or 1, trainer_num or 1

# context/node.py get_host_ip, replaced by --host (POD_IP) when it has a "."
# (plugins/__init__.py rewrite_host_ip).
pod_ip = env.get("POD_IP", "")
if "." in pod_ip:
    node_ip = pod_ip
else:
    try:
        node_ip = socket.gethostbyname(socket.getfqdn(hostname))
    except OSError:
        node_ip = "127.0.0.1"
main = master_host in ("127.0.0.1", node_ip)


# --- The rendezvous store, served where the launcher would serve it -------

class KV(http.server.BaseHTTPRequestHandler):
    store = {"/healthy": b"ok"}
    lock = threading.Lock()

    def do_GET(self):
        with self.lock:
            found = {k: v.decode() for k, v in self.store.items() if k.startswith(self.path)}
        self.reply(200 if found else 404, json.dumps(found).encode() if found else b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            self.store[self.path] = body
        self.reply(200, b"")

    do_PUT = do_POST

    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if main:
    try:
        store = http.server.ThreadingHTTPServer(("", master_port), KV)
    except OSError as err:
        mismatch(f"PADDLE_MASTER={master!r} names this node ({node_ip}), but its port cannot be served: {err}")
    threading.Thread(target=store.serve_forever, daemon=True).start()
    print(f"{hostname}: serves the rendezvous at {node_ip}:{master_port} (PADDLE_MASTER={master})", flush=True)
else:
    resolve(master_host)

# As the launcher, a loopback rendezvous is reached at the node's address.
endpoint = "http://" + (f"{node_ip}:{master_port}" if master_host == "127.0.0.1" else master)


def kv(method, key, body=None):
    """The store's answer to method on key: decoded JSON, True for a stored
    value, None when it cannot be reached (the launcher's KVClient retries)."""
    req = urllib.request.Request(endpoint + key, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            data = resp.read()
            return json.loads(data) if method == "GET" else True
    except urllib.error.HTTPError as err:
        return {} if err.code == 404 else None
    except (OSError, ValueError):
        return None


while (kv("GET", "/healthy") or {}).get("/healthy") != "ok":
    if time.monotonic() > deadline:
        give_up(f"the rendezvous at {master} never answered")
    time.sleep(0.5)


# --- Each node's own endpoints, as the launcher opens them -----------------

def listener():
    s = socket.create_server(("", 0))
    return s, f"{node_ip}:{s.getsockname()[1]}"


candidate, candidate_ep = listener()
servers = [listener() for _ in range(server_num)]
trainers = [f"{hostname}/trainer{i}" for i in range(trainer_num)]
me = {
    "name": hostname, "ip": node_ip, "main": main, "master": master, "nnodes": nnodes_text,
    "job_id": job_id, "mode": mode, "candidate": candidate_ep,
    "servers": [ep for _, ep in servers], "trainers": trainers,
}
key = f"/{job_id}/info/{'aaaaaa' if main else hostname}/-1"
prefix = f"/{job_id}/info"
while kv("POST", key, json.dumps(me).encode()) is not True:
    if time.monotonic() > deadline:
        give_up(f"could not register at {master}")
    time.sleep(0.5)

while True:
    found = kv("GET", prefix) or {}
    if len(found) > nnodes:
        mismatch(f"{len(found)} nodes registered under {prefix}, PADDLE_NNODES={nnodes_text}")
    if len(found) == nnodes:
        break
    if main:
        # A node with another PADDLE_JOB_ID registers under another prefix
        # and would never be counted: name it.
        for k in kv("GET", "/") or {}:
            if "/info/" in k and not k.startswith(prefix + "/"):
                mismatch(f"a node registered as {k}, outside this node's job {job_id!r}")
    if time.monotonic() > deadline:
        give_up(f"only {len(found)} of {nnodes} nodes registered at {master}: {sorted(found)}")
    time.sleep(0.5)

peers = [json.loads(found[k]) for k in sorted(found)]
rank = [p["name"] for p in peers].index(hostname)
rank0 = peers[0]
if not rank0["main"]:
    mismatch(f"rank 0 is {rank0['name']}, which does not host the rendezvous")
for p in peers:
    for field in ("nnodes", "job_id", "mode"):
        if p[field] != me[field]:
            mismatch(f"{p['name']} has {field}={p[field]!r}, this node {me[field]!r}")
    if p["main"] and p is not rank0:
        mismatch(f"both {rank0['name']} and {p['name']} host the rendezvous")
# The rendezvous a non-main node names must be rank 0.
if not main and resolve(master_host) != rank0["ip"]:
    mismatch(f"PADDLE_MASTER host {master_host} resolves to {resolve(master_host)}, but rank 0 ({rank0['name']}) is {rank0['ip']}")


# --- What the training processes reach --------------------------------------

def serve(sock, expected, what):
    """Accepts until every name of expected has said hello on sock; answers each."""
    heard = set()
    sock.settimeout(1)
    while heard != expected:
        if time.monotonic() > deadline:
            give_up(f"{what}: heard only from {sorted(heard)} of {sorted(expected)}")
        try:
            conn, _ = sock.accept()
        except socket.timeout:
            continue
        with conn:
            conn.settimeout(5)
            try:
                who = conn.makefile().readline().strip()
            except OSError:
                continue
            if not who:
                continue  # a port probe
            if who not in expected:
                mismatch(f"{what}: {who!r} connected, not one of {sorted(expected)}")
            conn.sendall(f"{what}\n".encode())
            heard.add(who)
    return heard


def reach(ep, who, want):
    host, port = ep.rsplit(":", 1)
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as conn:
                conn.sendall(f"{who}\n".encode())
                answer = conn.makefile().readline().strip()
            break
        except OSError as err:
            if time.monotonic() > deadline:
                give_up(f"{who}: {want} at {ep} unreachable: {err}")
            time.sleep(0.5)
    if answer != want:
        mismatch(f"{who}: {ep} is {want} but answered {answer!r}")


threads = []
if not ps:
    # The launcher hands its training processes rank 0's candidate as their
    # PADDLE_MASTER; every other node's processes connect to it.
    if rank == 0:
        others = {p["name"] for p in peers[1:]}
        threads.append(threading.Thread(target=serve, args=(candidate, others, "collective master")))
    extra = (f"{nnodes - 1} nodes reached the collective master {candidate_ep}" if rank == 0
             else f"reached the collective master {rank0['candidate']}")
else:
    all_servers = [ep for p in peers for ep in p["servers"]]
    all_trainers = {t for p in peers for t in p["trainers"]}
    for sock, ep in servers:
        threads.append(threading.Thread(target=serve, args=(sock, all_trainers, f"server {ep}")))
    extra = (f"{len(trainers)} trainers reached all {len(all_servers)} servers, "
             f"{len(servers)} servers heard from all {len(all_trainers)} trainers")
for t in threads:
    t.start()
if not ps and rank > 0:
    reach(rank0["candidate"], hostname, "collective master")
elif ps:
    for trainer in trainers:
        for ep in all_servers:
            reach(ep, trainer, f"server {ep}")
for t in threads:
    t.join()

# Done: tell rank 0, which keeps the store up until every node has read it.
kv("POST", f"/{job_id}/done/{hostname}", b"1")
if main:
    while len(kv("GET", f"/{job_id}/done/") or {}) < nnodes:
        if time.monotonic() > deadline:
            give_up("not every node finished reading the rendezvous")
        time.sleep(0.5)
names = ",".join(p["name"] for p in peers)
print(f"paddle {mode} rank {rank} of {nnodes} on {hostname}: OK, job {job_id}, "
      f"rendezvous {rank0['ip']}:{master_port} hosted by {rank0['name']}, nodes {names}; {extra}", flush=True)
