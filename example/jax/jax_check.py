"""Checks the jax plugin's contract and the network it describes; JAX itself
is not involved (Debian has no JAX package).

It reads only the variables the plugin injects and holds them to JAX's own
rules (jax/_src/distributed.py, State.initialize):

- JAX_COORDINATOR_ADDRESS is "<host>:<port>": JAX binds process 0's
  coordination service to "[::]:" + the text after the address's last ":",
  and every process dials the whole address over gRPC (an IPv6 host in
  brackets);
- JAX_NUM_PROCESSES and JAX_PROCESS_ID are integers with
  0 <= process_id < num_processes;
- Kubeflow JAXJob's names agree with Trainer's: COORDINATOR_ADDRESS is the
  host alone and COORDINATOR_PORT the port (JAXJob's programs pass
  f"{COORDINATOR_ADDRESS}:{COORDINATOR_PORT}"), NUM_PROCESSES and PROCESS_ID
  equal JAX_NUM_PROCESSES and JAX_PROCESS_ID; PYTHONUNBUFFERED=1.

Then it starts up as jax.distributed.initialize() does: process 0 serves the
coordinator port on all addresses, and every process, process 0 included,
connects to JAX_COORDINATOR_ADDRESS and registers its process id; the
coordinator releases them once all num_processes ids have registered, as
JAX's coordination service holds its clients until every task connected.
Process 0 reaching itself through the address shows the address is its pod.

Output: process 0 prints "coordinator: registered process <id> of <n> from
<ip> (<hostname>)" per registration and "process 0 of <n>: OK, all <n>
processes registered at <address>"; every other process "process <id> of
<n>: OK, registered with the coordinator at <address>"; exit 0. A line
starting "MISMATCH" and exit 1 when a value breaks the rules or two processes
disagree; exit 2 when the coordinator stays unreachable or not every process
registered within TIMEOUT seconds (default 180).
"""
import os
import re
import secrets
import socket
import sys
import threading
import time

TIMEOUT = float(os.environ.get("TIMEOUT", "180"))
deadline = time.monotonic() + TIMEOUT
DECIMAL = re.compile(r"0|[1-9][0-9]*")


def mismatch(msg):
    print("MISMATCH " + msg, flush=True)
    os._exit(1)


def need(name):
    value = os.environ.get(name)
    if value is None:
        mismatch(f"{name} is not set")
    return value


def integer(name):
    value = need(name)
    if not DECIMAL.fullmatch(value):
        mismatch(f"{name}={value!r} is not a decimal integer")
    return int(value)


def split_address(name, address):
    """(host, port) of a coordinator address as JAX reads it."""
    if ":" not in address:
        mismatch(f"{name}={address!r} has no port: JAX takes the port after the last ':'")
    host, port = address.rsplit(":", 1)
    if not DECIMAL.fullmatch(port) or not 0 < int(port) < 65536:
        mismatch(f"{name}={address!r}: port {port!r} is not a TCP port")
    if not host:
        mismatch(f"{name}={address!r} has no host")
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        mismatch(f"{name}={address!r}: an IPv6 host goes in brackets, anything else has no ':'")
    return host.strip("[]"), int(port)


address = need("JAX_COORDINATOR_ADDRESS")
host, port = split_address("JAX_COORDINATOR_ADDRESS", address)
n = integer("JAX_NUM_PROCESSES")
pid = integer("JAX_PROCESS_ID")
if not 0 <= pid < n:
    mismatch(f"JAX_PROCESS_ID={pid}, JAX_NUM_PROCESSES={n}: JAX wants 0 <= process_id < num_processes")
jaxjob = f'{need("COORDINATOR_ADDRESS")}:{integer("COORDINATOR_PORT")}'
if jaxjob != address:
    mismatch(f"COORDINATOR_ADDRESS:COORDINATOR_PORT is {jaxjob!r}, JAX_COORDINATOR_ADDRESS {address!r}")
for name, want in (("NUM_PROCESSES", n), ("PROCESS_ID", pid)):
    if integer(name) != want:
        mismatch(f"{name}={integer(name)}, JAX_{name}={want}")
if os.environ.get("PYTHONUNBUFFERED") != "1":
    mismatch(f"PYTHONUNBUFFERED={os.environ.get('PYTHONUNBUFFERED')!r}, want '1'")

me = f"process {pid} of {n}"
hostname = socket.gethostname()
# Process 0 tells its own registration from another process claiming id 0.
token = secrets.token_hex(8)
released = threading.Event()


def refuse(conn, msg):
    """Tells the registering process why, and fails process 0 with it."""
    conn.sendall(f"mismatch {msg}\n".encode())
    mismatch(f"coordinator: {msg}")


def coordinate(server):
    """Process 0's coordination service: registrations until all n ids."""
    registered = {}
    while len(registered) < n:
        conn, (ip, *_) = server.accept()
        conn.settimeout(10)
        try:
            line = conn.makefile().readline().split()
        except OSError:
            line = []
        if not line:
            conn.close()  # a port probe, e.g. the wait-for-dependencies container
            continue
        if len(line) != 5 or line[0] != "register" or not all(DECIMAL.fullmatch(x) for x in line[1:3]):
            refuse(conn, f"{ip} sent {' '.join(line)!r}, not a registration")
        other, other_n, other_host, other_token = int(line[1]), int(line[2]), line[3], line[4]
        if other_n != n:
            refuse(conn, f"process {other} on {other_host} has JAX_NUM_PROCESSES={other_n}, process 0 has {n}")
        if other >= n:
            refuse(conn, f"{other_host} registered as process {other}, outside 0..{n - 1}")
        if other == 0 and other_token != token:
            refuse(conn, f"{other_host} also has JAX_PROCESS_ID=0")
        if other in registered:
            old, old_host, old_token = registered[other]
            if old_token != other_token:
                refuse(conn, f"{other_host} and {old_host} both have JAX_PROCESS_ID={other}")
            old.close()  # the same process again, after its connection broke
        else:
            ip = ip.removeprefix("::ffff:")
            print(f"coordinator: registered process {other} of {n} from {ip} ({other_host})", flush=True)
        registered[other] = (conn, other_host, other_token)
    for conn, *_ in registered.values():
        conn.sendall(f"ok process 0 of {n}\n".encode())
        conn.close()
    released.set()


if pid == 0:
    try:
        # JAX's default bind address, "[::]:<port>": every address, both families.
        server = socket.create_server(("::", port), family=socket.AF_INET6, dualstack_ipv6=True)
        bind = f"[::]:{port}"
    except (OSError, ValueError):
        try:
            server = socket.create_server(("", port))
        except OSError as err:
            print(f"{me}: cannot serve the coordinator port {port}: {err}", flush=True)
            sys.exit(2)
        bind = f"0.0.0.0:{port}"
    print(f"{me}: coordinator serves {bind} for {address}", flush=True)
    threading.Thread(target=coordinate, args=(server,), daemon=True).start()
else:
    released.set()

answer, registered_once = "", False
while not answer:
    try:
        conn = socket.create_connection((host, port), timeout=5)
    except OSError as err:
        if time.monotonic() > deadline:
            if registered_once:
                print(f"{me}: registered at {address}, but the coordinator went away before all {n} processes did", flush=True)
            else:
                print(f"{me}: the coordinator at {address} unreachable: {err}", flush=True)
            sys.exit(2)
        time.sleep(0.5)
        continue
    with conn:
        try:
            conn.sendall(f"register {pid} {n} {hostname} {token}\n".encode())
            registered_once = True
            # The coordinator answers once every process has registered.
            conn.settimeout(max(deadline - time.monotonic(), 1))
            answer = conn.makefile().readline().strip()
        except socket.timeout:
            print(f"{me}: registered at {address}, but not all {n} processes did within {TIMEOUT:.0f}s", flush=True)
            sys.exit(2)
        except OSError:
            pass  # the connection broke: register again
    if not answer:
        if time.monotonic() > deadline:
            print(f"{me}: the coordinator at {address} hung up without an answer", flush=True)
            sys.exit(2)
        time.sleep(0.5)
if answer.startswith("mismatch "):
    mismatch(f"{me}: the coordinator at {address} refused it: {answer[len('mismatch '):]}")
if answer != f"ok process 0 of {n}":
    mismatch(f"{me}: {address} answered {answer!r}, not process 0 of {n}")
if not released.wait(max(deadline - time.monotonic(), 0)):
    print(f"{me}: not every process registered", flush=True)
    sys.exit(2)
if pid == 0:
    print(f"{me}: OK, all {n} processes registered at {address}", flush=True)
else:
    print(f"{me}: OK, registered with the coordinator at {address}", flush=True)
