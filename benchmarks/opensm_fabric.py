# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run OpenSM's routing engines on one of our topologies, simulated by ibsim.

Used by benchmarks/opensm_compare.py (see its docstring for usage):

* :func:`net_file` writes the topology as an ibsim net file (the
  ibnetdiscover-like format of /usr/share/doc/ibsim-utils/net-examples):
  one InfiniBand switch per switch, one single-port HCA per host, the same
  cabling; it also returns which (switch, IB port) is which channel of ours.
* :func:`run_opensm` starts ``ibsim -s`` on that file, runs
  ``opensm --once -R <engine>,no_fallback`` against it with
  ``LD_PRELOAD=libumad2sim.so``, and reads the unicast forwarding tables
  OpenSM programmed from its ``opensm-lfts.dump`` (written because the log
  level includes ROUTING, 0x40), the engine it reports and its timings.
* :func:`lft_paths` follows those tables from every switch to the HCA on
  every other switch: the switch-to-switch path set our metrics read
  (``{(src, dst): [channel ids]}``), so the loads are counted exactly as
  ours are.

Nothing here needs root; it needs the Debian packages opensm and
ibsim-utils (:func:`missing_tools` says which are missing).
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import signal
import subprocess
import time

UMAD2SIM_PATHS = ("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
                  "/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so",
                  "/usr/lib/umad2sim/libumad2sim.so",
                  "/usr/local/lib/umad2sim/libumad2sim.so")
ROUTING_FAILED = "No routing engine able to successfully configure"
INSTALL_HINT = "apt-get install -y opensm ibsim-utils   (Debian/Ubuntu, as root; 'apt-get update' first)"

_LFT_HEADER = re.compile(r"^Unicast lids \[[^]]*\] of switch Lid (\d+) guid (0x[0-9a-fA-F]+) \('(.*)'\):")
_LFT_ENTRY = re.compile(r"^(0x[0-9a-fA-F]+) (\d+|UNREACHABLE) # (.*?) portguid (0x[0-9a-fA-F]+): '(.*)'")
_LOG_LINE = re.compile(r"^(\w{3} +\d+ \d\d:\d\d:\d\d) (\d{6}) \[[0-9A-Fa-f]+\] 0x[0-9a-fA-F]+ -> (.*)$")


class OpenSMError(Exception):
    """OpenSM or ibsim did not produce a routing."""


def umad2sim_library():
    """The path of libumad2sim.so (package libumad2sim0, pulled in by
    ibsim-utils), or None."""
    for path in UMAD2SIM_PATHS:
        if os.path.exists(path):
            return path
    return None


def missing_tools():
    """What is missing to run OpenSM against ibsim: a list of names (empty
    when everything is there)."""
    missing = [name for name in ("opensm", "ibsim") if shutil.which(name) is None]
    if umad2sim_library() is None:
        missing.append("libumad2sim.so")
    return missing


def opensm_version():
    """OpenSM's version line (e.g. "OpenSM 3.3.23"), or None."""
    try:
        out = subprocess.run(["opensm", "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"OpenSM \S+", out.stdout + out.stderr)
    return found.group(0) if found else None


# ------------------------------------------------------------------ net file
def _port_order(topology, switch):
    """The topology's ports of ``switch`` in the order they get IB port
    numbers 1, 2, ...: hosts first, then links. On a mesh or torus the links
    go by dimension, then direction (-, +), as OpenSM's ``dor`` engine
    expects (it picks the lowest port among the shortest ones); elsewhere
    in the topology's own port order."""
    hosts = [host.port for host in topology.hosts_on(switch)]
    links = []
    for channel in topology.out_channels(switch):
        key = _numeric(channel.src_port)
        here, there = topology.switches[switch].coords, topology.switches[channel.dst].coords
        if here is not None and there is not None and len(here) == len(there):
            dims = [d for d, (a, b) in enumerate(zip(here, there)) if a != b]
            if len(dims) == 1:
                dim = dims[0]
                step = there[dim] - here[dim]
                plus = step == 1 or step < -1  # a torus wrap link goes "+"
                key = (dim, plus, key)
        links.append((key if isinstance(key, tuple) else (-1, False, key), channel.src_port))
    return hosts + [port for _key, port in sorted(links)]


def _numeric(port):
    try:
        return int(port)
    except ValueError:
        return 1 << 20


def net_file(topology):
    """``(text, ports)``: the ibsim net file of ``topology`` and
    ``{(switch, ib_port): channel id}`` for every inter-switch port. Switch
    and HCA node ids are our switch and host names; topologies without
    hosts get one HCA per switch, named ``hca-<switch>``."""
    hosts = list(topology.hosts.values())
    if hosts:
        hca_of = [(host.name, host.switch, host.port) for host in hosts]
    else:
        hca_of = [("hca-%s" % name, name, "hca") for name in topology.switch_names()]
    number = {}
    for name in topology.switch_names():
        own = [port for hca, switch, port in hca_of if switch == name] if not hosts else None
        order = (own or []) + _port_order(topology, name)
        number.update({(name, port): i + 1 for i, port in enumerate(order)})
    ports, lines = {}, []
    for name in topology.switch_names():
        used = [number[key] for key in number if key[0] == name]
        lines.append('Switch\t%d "%s"' % (max(used), name))
        for hca, switch, port in hca_of:
            if switch == name:
                lines.append('[%d]\t"%s"[1]' % (number[(name, port)], hca))
        for channel in topology.out_channels(name):
            mine, theirs = number[(name, channel.src_port)], number[(channel.dst, channel.dst_port)]
            ports[(name, mine)] = channel.id
            lines.append('[%d]\t"%s"[%d]' % (mine, channel.dst, theirs))
        lines.append("")
    for hca, switch, port in hca_of:
        lines += ['Hca\t1 "%s"' % hca, '[1]\t"%s"[%d]' % (switch, number[(switch, port)]), ""]
    return "\n".join(lines), ports, {switch: hca for hca, switch, _port in hca_of}


# ------------------------------------------------------------------ running
def _ibsim_limits(topology):
    nodes = len(topology.switches) + max(len(topology.hosts), len(topology.switches))
    ports = sum(max(sw.ports, 2) + 1 for sw in topology.switches.values()) + 2 * nodes
    return ["-N", str(max(2048, 2 * nodes)), "-S", str(max(256, 2 * len(topology.switches))),
            "-P", str(max(13312, 2 * ports))]


def _start_ibsim(net_path, workdir, limits):
    log = open(os.path.join(workdir, "ibsim.log"), "w", encoding="utf-8")  # pylint: disable=consider-using-with
    command = ["ibsim", "-s", "-n"] + limits + [net_path]
    proc = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                            stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.close()
            raise OpenSMError("ibsim exited (%s): %s" % (proc.returncode, _tail(os.path.join(workdir, "ibsim.log"))))
        with open(os.path.join(workdir, "ibsim.log"), encoding="utf-8", errors="replace") as handle:
            if "simulator ready" in handle.read():
                return proc, log
        time.sleep(0.05)
    _stop(proc, log)
    raise OpenSMError("ibsim did not get ready in 120 s")


def _stop(proc, log):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log.close()


def _tail(path, lines=8):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return " | ".join(handle.read().strip().splitlines()[-lines:])
    except OSError:
        return "(no %s)" % os.path.basename(path)


def run_opensm(topology, engine, workdir, root=None, timeout=600):
    """Route ``topology`` with OpenSM's ``engine`` (updn, minhop, dor, nue, ...)
    in a fresh ibsim; ``root`` names the switch given to updn as its root
    (``--root_guid_file``). Returns a dict: ``lfts`` ({switch: {node id:
    port}}), ``engine_used`` (from the log), ``wall_s`` (the whole
    ``opensm --once`` run: discovery, LIDs, routing, programming the LFTs
    through the simulator), ``routing_s`` (the routing engine alone, from
    the log, see :func:`routing_seconds`), ``log`` (path). Raises
    OpenSMError."""
    shutil.rmtree(workdir, ignore_errors=True)  # umad2sim leaves sys-<pid>/ behind a killed OpenSM
    os.makedirs(workdir)
    text, _ports, _hcas = net_file(topology)
    net_path = os.path.join(workdir, "net")
    with open(net_path, "w", encoding="utf-8") as handle:
        handle.write(text)
    proc, log = _start_ibsim(net_path, workdir, _ibsim_limits(topology))
    try:
        return _opensm_once(topology, engine, workdir, root, timeout)
    finally:
        _stop(proc, log)


def _opensm_once(topology, engine, workdir, root, timeout):
    env = dict(os.environ, LD_PRELOAD=umad2sim_library(), OSM_TMP_DIR=workdir, OSM_CACHE_DIR=workdir,
               SIM_HOST=topology.switch_names()[0])
    log_path = os.path.join(workdir, "opensm.log")
    command = ["opensm", "--once", "-R", "%s,no_fallback" % engine if engine != "minhop" else "minhop",
               "-f", log_path, "-D", "0x47", "--dump_files_dir", workdir, "-s", "0"]
    if root is not None:
        guids = _switch_guids(topology, workdir)
        root_file = os.path.join(workdir, "roots")
        with open(root_file, "w", encoding="utf-8") as handle:
            handle.write("%s\n" % guids[root])
        command += ["--root_guid_file", root_file]
    started = time.perf_counter()
    returncode = _wait_opensm(command, workdir, env, log_path, timeout)
    wall = time.perf_counter() - started
    dump = os.path.join(workdir, "opensm-lfts.dump")
    if returncode != 0 or not os.path.exists(dump):
        raise OpenSMError("%s: rc %s; log: %s" % (" ".join(command), returncode, _tail(log_path)))
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        log_text = handle.read()
    used = re.findall(r"osm_ucast_mgr_process: (\S+) tables configured on all switches", log_text)
    failed = re.findall(r"ERR \w+: .*", log_text)
    with open(dump, encoding="utf-8", errors="replace") as handle:
        lfts = parse_lfts(handle.read())
    return {"lfts": lfts, "engine_used": used[-1] if used else None, "wall_s": wall,
            "routing_s": routing_seconds(log_text), "log": log_path, "errors": failed[:5]}


def _wait_opensm(command, workdir, env, log_path, timeout):
    """Run ``command`` (opensm --once) to its end; its return code. When no
    engine can route, ``--once`` waits for ever: the log is watched for
    that and OpenSM stopped (OpenSMError), as after ``timeout`` seconds."""
    with open(os.path.join(workdir, "opensm.out"), "w", encoding="utf-8") as out:
        proc = subprocess.Popen(command, cwd=workdir, env=env, stdout=out,  # pylint: disable=consider-using-with
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        start = next_check = time.monotonic()
        while proc.poll() is None:
            now, failed = time.monotonic(), False
            if now >= next_check:  # the log grows to megabytes: read it once a second
                failed, next_check = _log_has(log_path, ROUTING_FAILED), now + 1.0
            if failed or now - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                why = "no engine could route" if failed else "did not finish in %d s" % timeout
                raise OpenSMError("opensm: %s; log: %s" % (why, _tail(log_path)))
            time.sleep(0.02)
    return proc.returncode


def _log_has(path, text):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return text in handle.read()
    except OSError:
        return False


def _switch_guids(topology, workdir):
    """{switch name: node GUID} as ibsim gives them (a throw-away minhop
    run of OpenSM against the same simulator reads them off its dump)."""
    probe = os.path.join(workdir, "probe")
    os.makedirs(probe, exist_ok=True)
    env = dict(os.environ, LD_PRELOAD=umad2sim_library(), OSM_TMP_DIR=probe, OSM_CACHE_DIR=probe,
               SIM_HOST=topology.switch_names()[0])
    subprocess.run(["opensm", "--once", "-f", os.path.join(probe, "opensm.log"), "-D", "0x43",
                    "--dump_files_dir", probe, "-s", "0"], cwd=probe, env=env, capture_output=True,
                   timeout=600, check=False)
    guids = {}
    with open(os.path.join(probe, "opensm-lfts.dump"), encoding="utf-8", errors="replace") as handle:
        for line in handle:
            found = _LFT_HEADER.match(line)
            if found:
                guids[found.group(3)] = found.group(2)
    shutil.rmtree(probe)
    return guids


# ------------------------------------------------------------------ parsing
def parse_lfts(text):
    """``{switch node id: {destination node id: port}}`` from an
    ``opensm-lfts.dump``; an unreachable destination gets port None."""
    lfts, current = {}, None
    for line in text.splitlines():
        found = _LFT_HEADER.match(line)
        if found:
            current = lfts.setdefault(found.group(3), {})
            continue
        found = _LFT_ENTRY.match(line)
        if found and current is not None:
            port = found.group(2)
            current[found.group(5)] = None if port == "UNREACHABLE" else int(port)
    return lfts


def _log_time(stamp, micros):
    moment = datetime.datetime.strptime("2000 " + stamp, "%Y %b %d %H:%M:%S")
    return moment.timestamp() + int(micros) / 1e6


def routing_seconds(log_text):
    """Seconds the routing engine took, from OpenSM's log (verbose, 0x04):
    from "ucast_mgr_route: building routing with ..." (or the first line of
    the min-hop matrices) to "... tables configured on all switches" (the
    engine done and the LFT blocks queued). None when the lines are not
    there."""
    start = end = None
    for line in log_text.splitlines():
        found = _LOG_LINE.match(line)
        if not found:
            continue
        moment, message = _log_time(found.group(1), found.group(2)), found.group(3)
        if start is None and ("ucast_mgr_route" in message or "ucast_mgr_build_lid_matrices" in message):
            start = moment
        if "tables configured on all switches" in message:
            end = moment
            break
    return end - start if start is not None and end is not None else None


def lft_paths(topology, lfts, ports, hca_of):
    """The path set of the LFTs: ``{(src, dst): [channel ids]}`` for every
    ordered pair of switches, following each switch's entry for the HCA on
    ``dst`` (``hca_of[dst]``). Raises OpenSMError on a missing entry, a port
    that leads nowhere or a loop."""
    names = topology.switch_names()
    limit = len(names) + 1
    paths = {}
    for dst in names:
        target = hca_of[dst]
        for src in names:
            if src == dst:
                continue
            here, path = src, []
            while here != dst:
                port = lfts.get(here, {}).get(target)
                if port is None:
                    raise OpenSMError("switch %s has no route to %s" % (here, target))
                channel = ports.get((here, port))
                if channel is None:
                    raise OpenSMError("switch %s sends %s out of port %d, which is not an inter-switch link"
                                      % (here, target, port))
                path.append(channel)
                here = topology.channels[channel].dst
                if len(path) > limit:
                    raise OpenSMError("routing loop from %s to %s" % (src, dst))
            paths[(src, dst)] = path
    return paths
