"""The lab's life cycle on this machine with a small two-switch lab: a build
that fails halfway is removed again, a half-built lab left behind is removed
by lab_down, a changed layout or a dead daemon makes lab_up rebuild, a
name already taken is refused, and every switch port is read through the
enlarged packet-socket buffer."""

import os
import re
import signal
import subprocess
import time

import pytest
from lab_helpers import processes_mentioning, root_interfaces

from ansible_collections.ethercluster.routing.plugins.module_utils.lab import plan, runner
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import PORT_RECEIVE_BUFFER, lab_layout
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data

pytestmark = pytest.mark.lab

LAB = "pytest-life"
TOPOLOGY = topology_from_data({"name": "pair", "generate": {"kind": "mesh", "dims": [2],
                                                            "hosts_per_switch": 1}})


def small_layout(**options):
    return lab_layout(TOPOLOGY, name=LAB, mgmt_network="203.0.113.224/28",
                      host_network="10.46.0.0/16", **options)


def assert_nothing_left(layout, interfaces_before):
    assert not any(runner.netns_exists(ns) for ns in plan.all_netns(layout))
    assert root_interfaces() == interfaces_before
    assert processes_mentioning(layout["dir"]) == []
    assert not os.path.exists(layout["dir"])


@pytest.fixture
def clean(lab_machine):
    layout = small_layout()
    runner.lab_down(layout["state_root"], LAB)
    before = root_interfaces()
    yield before
    runner.lab_down(layout["state_root"], LAB)


def failing_phases(real):
    """The real build, then a phase that fails once the daemons run."""
    def phases(layout):
        return real(layout) + [plan.Phase("sabotage", [[plan.Command(("false",))]])]
    return phases


def test_a_build_that_fails_halfway_is_removed(clean, monkeypatch):
    layout = small_layout()
    monkeypatch.setattr(runner, "up_phases", failing_phases(plan.up_phases))
    with pytest.raises(plan.LabError, match=r"phase sabotage: `false` failed .*"
                                            r"\(the half-built lab was removed\)"):
        runner.lab_up(layout)
    assert_nothing_left(layout, clean)


def test_a_half_built_lab_left_behind_is_removed_by_lab_down(clean, monkeypatch):
    layout = small_layout()
    monkeypatch.setattr(runner, "up_phases", failing_phases(plan.up_phases))
    with pytest.raises(plan.LabError):
        runner.lab_up(layout, teardown_on_failure=False)
    record = runner.read_record(layout["state_root"], LAB)
    assert record["state"] == "building"
    assert runner.netns_processes(plan.all_netns(layout))  # its daemons run
    monkeypatch.undo()
    # lab_up does not take a half-built lab for a working one: it rebuilds it
    assert runner.lab_up(layout, check_mode=True)["reasons"] == ["the last build did not finish"]
    assert runner.lab_down(layout["state_root"], LAB)["outcome"] == "removed"
    assert_nothing_left(layout, clean)


def test_changed_options_or_a_dead_daemon_make_lab_up_rebuild(clean):
    layout = small_layout()
    assert runner.lab_up(layout)["outcome"] == "created"
    assert runner.lab_up(layout)["outcome"] == "unchanged"
    slower = small_layout(renegotiation_gap=2.0)
    check = runner.lab_up(slower, check_mode=True)
    assert check["changed"] and check["outcome"] == "rebuilt"
    assert runner.read_record(layout["state_root"], LAB)["layout"] == layout  # untouched
    result = runner.lab_up(slower)
    assert result["outcome"] == "rebuilt" and "teardown_old" in result["timings"]
    sw1 = slower["switches"]["sw1"]
    with open(os.path.join(sw1["dir"], "ovs-vswitchd.pid"), encoding="utf-8") as handle:
        pid = int(handle.read())
    os.kill(pid, signal.SIGKILL)
    # SIGKILL is asynchronous: wait until the process has left its namespace
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%d/ns/net" % pid) and time.monotonic() < deadline:
        try:
            os.readlink("/proc/%d/ns/net" % pid)
        except OSError:
            break
        time.sleep(0.05)
    result = runner.lab_up(slower)
    assert result["outcome"] == "rebuilt"
    assert result["reasons"] == ["sw1: ovs-vswitchd is not running"]
    assert runner.health(slower) == []


def test_a_namespace_of_someone_else_is_never_taken_over(clean):
    layout = small_layout()
    taken = layout["switches"]["sw0"]["netns"]
    subprocess.run(["ip", "netns", "add", taken], check=True)
    try:
        with pytest.raises(plan.LabError, match="network namespace %s already exists and is "
                                                "not part of lab %s" % (taken, LAB)):
            runner.lab_up(layout)
        assert runner.netns_exists(taken)
        assert not os.path.exists(layout["dir"])
    finally:
        subprocess.run(["ip", "netns", "delete", taken], check=True)


def test_a_mgmt_network_in_use_is_refused(clean):
    layout = small_layout()
    assert runner.lab_up(layout)["outcome"] == "created"
    other = lab_layout(TOPOLOGY, name=LAB + "-2", mgmt_network="203.0.113.224/28",
                       host_network="10.46.0.0/16")
    with pytest.raises(plan.LabError, match=r"mgmt_network \(-e lab_mgmt_network\) 203.0.113.224/28 overlaps "
                                            "203.0.113.225/32 on ec"):
        runner.lab_up(other)
    assert runner.health(layout) == []


def _port_buffers(layout, name):
    """``{device: receive buffer}`` of the packet sockets in switch ``name``'s namespace."""
    text = subprocess.run(["ip", "netns", "exec", layout["switches"][name]["netns"], "ss", "-0", "-m", "-n"],
                          check=True, capture_output=True, text=True).stdout
    return {found.group(1): int(found.group(2))
            for found in re.finditer(r"\*:(\S+)\s.*?skmem:\([^)]*?rb(\d+)", text)}


def test_every_port_is_read_through_the_enlarged_buffer(clean):
    layout = small_layout()
    result = runner.lab_up(layout)
    assert result["port_buffers"] == {"bytes": PORT_RECEIVE_BUFFER, "switches": 2}
    for name, sw in layout["switches"].items():
        ports = {port["dev"] for port in sw["ports"].values()}
        # the kernel doubles what SO_RCVBUFFORCE asks (socket(7))
        assert {dev: size for dev, size in _port_buffers(layout, name).items() if dev in ports} == \
            {dev: 2 * PORT_RECEIVE_BUFFER for dev in ports}, name
    kernel = small_layout(port_receive_buffer=0)
    assert runner.lab_up(kernel)["port_buffers"] == {"bytes": 0, "not_set": "port_receive_buffer is 0"}
    with open("/proc/sys/net/core/rmem_default", encoding="utf-8") as handle:
        default = int(handle.read())
    assert set(_port_buffers(kernel, "sw0").values()) == {default}
