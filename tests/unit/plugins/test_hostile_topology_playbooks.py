"""The reported injections, end to end: the inventory plugin, show_topology.yml
and plan.yml refuse a hostile topology file naming the field, and the plan
writes no configuration (run through the real command-line tools, see
tests/unit/plugins/conftest.py)."""

import json
import re

import pytest
import yaml

HOSTILE = {
    "interface_pattern": ("switches.sw0.interface_pattern",
                          lambda d: d["switches"]["sw0"].update(interface_pattern="Gi1/0/{port}\nreload")),
    "interface_names CR": ("switches.sw1.interface_names.1",
                           lambda d: d["switches"]["sw1"].update(interface_names={1: "Te1/0/1\rreload"})),
    "switch name": ("switches.'sw2\\nreload'",
                    lambda d: d["switches"].update({"sw2\nreload": {"platform": "dell_os6"}})),
    "link port": ("links[0].a", lambda d: d["links"][0].update(a="sw0:25\nreload")),
    "host name": ("hosts.'node00\\nreload'",
                  lambda d: d["hosts"].update({"node00\nreload": d["hosts"].pop("node00")})),
    "platform": ("switches.sw0.platform", lambda d: d["switches"]["sw0"].update(platform="dell_os6\nreload")),
}


def failure_message(stdout):
    """The ``msg`` of the first failed task in ansible-playbook's output."""
    match = re.search(r"^fatal: \[localhost\]: FAILED! => ", stdout, re.MULTILINE)
    assert match, stdout
    result, _end = json.JSONDecoder().raw_decode(stdout[match.end():])
    return result["msg"]


def fabric():
    return {
        "plugin": "ethercluster.routing.topology",
        "switches": {"sw0": {"platform": "dell_os6", "interface_pattern": "Gi1/0/{port}"},
                     "sw1": {"platform": "dell_os6"}},
        "links": [{"a": "sw0:25", "b": "sw1:25"}, {"a": "sw0:26", "b": "sw1:26"}],
        "hosts": {"node00": {"switch": "sw0", "port": "1", "mac": "02:00:00:00:00:01"},
                  "node01": {"switch": "sw1", "port": "1", "mac": "02:00:00:00:00:02"}},
    }


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_inventory_and_plan_refuse_the_reported_injections(ansible_cli, tmp_path, case):
    field, put = HOSTILE[case]
    data = fabric()
    put(data)
    path = tmp_path / "hostile.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    proc = ansible_cli.run("ansible-inventory", "-i", path, "--list", cwd=tmp_path)
    assert proc.returncode != 0
    assert field in proc.stderr.replace("\n", " "), proc.stderr
    assert "probably a bug" not in proc.stderr

    out = tmp_path / "out"
    proc = ansible_cli.run("ansible-playbook", ansible_cli.root / "playbooks" / "plan.yml",
                           "-e", "topology=%s" % path, "-e", "out=%s" % out, cwd=tmp_path)
    assert proc.returncode != 0
    assert field in failure_message(proc.stdout), proc.stdout
    assert not (out / "configs").exists()
    assert not (out / "intent.json").exists()


def test_the_same_fabric_without_the_injection_plans(ansible_cli, tmp_path):
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(fabric()), encoding="utf-8")
    out = tmp_path / "out"
    proc = ansible_cli.run("ansible-playbook", ansible_cli.root / "playbooks" / "plan.yml",
                           "-e", "topology=%s" % path, "-e", "out=%s" % out, "-e", "routing=updown", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (out / "configs" / "sw0.cfg").read_text()
    assert "interface Gi1/0/25" in text and "reload" not in text
