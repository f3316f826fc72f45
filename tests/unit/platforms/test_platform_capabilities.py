"""The platform capability table and offline rendering of a whole intent.

* access/trunk-only platforms (cisco_ios) are refused with a message that
  names the switch, says why, and lists the platforms that work;
* check_switch finds too many VLANs, reserved VLANs and unsupported
  speeds, naming the switch (and port);
* render_configs writes configs/<switch>.<ext> for every switch of a
  planned intent, in each switch's platform, and refuses the whole intent
  before rendering anything when one switch cannot be rendered.
"""

from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import (
    dell_os6, huawei_vrp, linux_bridge, ovs)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.capabilities import (
    CAPABILITIES, check_switch, platform_capabilities, renderable_platforms, require_renderable)
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.common import PlatformError
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import render_configs
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.assign.vlans import (
    PLATFORM_PORT_MODES,
    PLATFORM_RESERVED_VLANS,
)


@pytest.fixture(scope="module")
def mesh_intent():
    return plan(topology_from_data({"generate": {"kind": "mesh", "dims": [3, 3], "hosts_per_switch": 1}}),
                engine="dor", assignment="fixed").intent


def with_platforms(intent, platforms):
    """A copy of ``intent`` whose switches get ``platforms[i % len]`` in turn."""
    copy = dict(intent, switches={})
    for number, (name, entry) in enumerate(sorted(intent["switches"].items())):
        copy["switches"][name] = dict(entry, platform=platforms[number % len(platforms)])
    return copy


def test_access_trunk_platform_is_refused_naming_switch_and_working_platforms():
    with pytest.raises(PlatformError) as caught:
        require_renderable("cisco_ios", "leaf3")
    message = str(caught.value)
    assert message.startswith("switch leaf3: platform cisco_ios has access/trunk ports only")
    assert "untagged members of several VLANs" in message
    for platform in ("dell_os6", "huawei_vrp", "linux_bridge", "ovs"):
        assert platform in message


def test_unknown_and_unrendered_platforms_are_refused():
    with pytest.raises(PlatformError, match="switch sw2: unknown platform 'junos'"):
        require_renderable("junos", "sw2")
    with pytest.raises(PlatformError, match="switch sw2: platform h3c could run switch-tagged routing"):
        require_renderable("h3c", "sw2")
    with pytest.raises(PlatformError, match="unknown platform 'junos'; known platforms: "):
        platform_capabilities("junos")


def test_the_plan_reads_port_modes_and_reserved_ids_from_the_table():
    assert PLATFORM_PORT_MODES["dell_os6"] == "general"
    assert PLATFORM_PORT_MODES["huawei_vrp"] == "hybrid"
    assert PLATFORM_PORT_MODES["cisco_ios"] is None
    assert PLATFORM_RESERVED_VLANS["cisco_ios"] == frozenset(range(1002, 1006))
    assert renderable_platforms() == sorted(["dell_os6", "dell_powerconnect", "huawei", "huawei_vrp",
                                             "linux_bridge", "ovs"])
    for row in CAPABILITIES.values():
        assert row.config_extension and row.stp_disable


def test_check_switch_names_switch_port_and_limit(mesh_intent):
    entry = dict(mesh_intent["switches"]["sw0"], platform="dell_os6")
    assert check_switch("sw0", entry) == []
    slow = dict(entry, ports={port: dict(config, speed_mbps=25) for port, config in entry["ports"].items()})
    problems = check_switch("sw0", slow)
    assert problems and all(problem.startswith("switch sw0 port ") and "speed 25 Mb/s" in problem
                            for problem in problems)
    many = dict(entry, vlans=list(range(2, 4097)))
    assert check_switch("sw0", many) == ["switch sw0: 4095 VLANs, platform dell_os6 holds at most 4094"]
    ios = dict(entry, platform="cisco_ios", vlans=[1002])
    assert check_switch("sw0", ios)[0].startswith("switch sw0: platform cisco_ios has access/trunk ports only")


def test_render_configs_writes_every_switch_in_its_platform(mesh_intent):
    mixed = with_platforms(mesh_intent, ["dell_os6", "huawei_vrp", "linux_bridge", "ovs"])
    files = render_configs(mixed)
    expected = set()
    for name, entry in mixed["switches"].items():
        platform = entry["platform"]
        if platform == "linux_bridge":
            expected |= {"configs/%s.sh" % name, "configs/%s.interfaces" % name}
            assert linux_bridge.parse(files["configs/%s.sh" % name]) == linux_bridge.effective_intent(entry)
        elif platform == "ovs":
            expected.add("configs/%s.flows" % name)
            assert ovs.parse_flows(files["configs/%s.flows" % name]) == ovs.render(entry, name)["flows"]
        else:
            expected.add("configs/%s.cfg" % name)
            module = dell_os6 if platform == "dell_os6" else huawei_vrp
            assert files["configs/%s.cfg" % name] == module.render(entry, name)
    assert set(files) == expected
    assert list(files) == sorted(files)


def test_render_configs_uses_interface_maps(mesh_intent):
    dell = with_platforms(mesh_intent, ["dell_os6"])
    files = render_configs(dell, interface_names={"sw4": {"1": "Te1/0/1"}})
    assert "interface Te1/0/1\n" in files["configs/sw4.cfg"]
    assert "interface Gi1/0/1\n" in files["configs/sw0.cfg"]


def test_render_configs_refuses_the_whole_intent_for_one_bad_switch(mesh_intent):
    bad = with_platforms(mesh_intent, ["dell_os6"])
    bad["switches"]["sw7"] = dict(bad["switches"]["sw7"], platform="cisco_ios")
    with pytest.raises(PlatformError, match="switch sw7: platform cisco_ios has access/trunk ports only"):
        render_configs(bad)
    with pytest.raises(PlatformError, match="intent: has no switches mapping"):
        render_configs({"schema": "x"})


def test_docs_show_every_row_of_the_table():
    docs = (Path(__file__).resolve().parents[3] / "docs" / "platforms.md").read_text()
    rows = {line.split("|")[1].strip().strip("`"): [cell.strip() for cell in line.split("|")[1:-1]]
            for line in docs.splitlines() if line.startswith("| `")}
    assert set(rows) == set(CAPABILITIES)
    for name, row in CAPABILITIES.items():
        cells = rows[name]
        assert cells[1] == (row.port_mode or "access/trunk only: refused"), name
        assert cells[2] == str(row.max_vlans), name
        assert cells[8] == (row.renderer or "none"), name
