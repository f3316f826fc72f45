"""Secrets (docs/security.md, "Secrets"): host key checking is on by
default outside the lab (the checkout's ansible.cfg does not turn it off,
the collection's own SSH options default to on, and the lab's inventory
turns it off only explicitly, for its own emulated CLI switches); every
option of the collection's modules and action plugins that carries a
secret is no_log; the switch sessions mask the connection's passwords in
their messages."""

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import module_args
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology
from ansible_collections.ethercluster.routing.plugins.module_utils.lab import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.layout import lab_layout

ROOT = Path(__file__).resolve().parents[3]
SECRET = re.compile(r"pass|secret|community|token|passphrase|private", re.I)


def ansible_config(*args):
    tool = Path(sys.executable).parent / "ansible-config"
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_HOST_KEY_CHECKING", None)
    result = subprocess.run([str(tool), *args], cwd=str(ROOT), env=env, capture_output=True, text=True,
                            timeout=120, check=True)
    return result.stdout


def test_the_checkout_does_not_turn_host_key_checking_off():
    assert "HOST_KEY_CHECKING" not in ansible_config("dump", "--only-changed")
    assert re.search(r"^HOST_KEY_CHECKING\(default\) = True$", ansible_config("dump"), re.M)
    assert not re.search(r"host_key_checking\s*=", (ROOT / "ansible.cfg").read_text(), re.I)


def test_the_collections_ssh_sessions_check_host_keys_by_default():
    assert module_args.SWITCH_SESSION_SPEC["host_key_checking"]["default"] is True


def test_the_lab_inventory_turns_host_key_checking_off_only_for_its_emulated_cli_switches():
    topology = load_topology(ROOT / "tests" / "unit" / "fixtures" / "lab" / "ring3_os6_topology.yml")
    layout = lab_layout(topology, name="secrets", mgmt_network="198.18.99.32/27", host_network="10.92.0.0/16")
    inventory = plan.inventory_data(layout)["all"]["children"]["switches"]
    for host in inventory["hosts"].values():
        assert host["ansible_host_key_checking"] is False  # explicit, per lab switch
    assert "-o StrictHostKeyChecking=yes" in inventory["vars"]["ansible_ssh_common_args"]
    assert "ansible_host_key_checking" not in inventory["vars"]
    ovs_layout = lab_layout(load_topology(ROOT / "tests" / "unit" / "fixtures" / "lab" / "ring3_topology.yml"),
                            name="secrets", mgmt_network="198.18.99.0/27", host_network="10.91.0.0/16")
    for host in plan.inventory_data(ovs_layout)["all"]["children"]["switches"]["hosts"].values():
        assert "ansible_host_key_checking" not in host


def _specs():
    from ansible_collections.ethercluster.routing.plugins import action as actions
    from ansible_collections.ethercluster.routing.plugins import modules
    found = {}
    for package in (modules, actions):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module("%s.%s" % (package.__name__, info.name))
            spec = getattr(module, "ARGUMENT_SPEC", None)
            if isinstance(spec, dict):
                found["%s.%s" % (package.__name__.rsplit(".", 1)[1], info.name)] = spec
    return found


def _secret_options(spec, prefix=""):
    for name, option in spec.items():
        if SECRET.search(name):
            yield prefix + name, option
        if isinstance(option.get("options"), dict):
            yield from _secret_options(option["options"], prefix + name + ".")


def test_every_option_that_carries_a_secret_is_no_log():
    specs = _specs()
    assert "modules.power_decide" in specs and "modules.ovs_switch" in specs
    checked = []
    for where, spec in specs.items():
        for name, option in _secret_options(spec):
            if option.get("type") == "bool":
                continue  # a switch such as host_key_checking, not a secret
            assert option.get("no_log") is True, "%s: option %s carries a secret but is not no_log" % (where, name)
            checked.append((where, name))
    assert ("modules.power_decide", "snmp_community") in checked


@pytest.mark.parametrize("secret", ["hunter2-ssh", "enable-s3cret"])
def test_a_switch_session_masks_the_connections_passwords_in_its_messages(secret):
    from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import ScriptSession

    session = ScriptSession(object(), "sw0", 5.0, secrets=("hunter2-ssh", "enable-s3cret"), owned=False)
    masked = session._masked("sshpass: wrong password %s for root@sw0" % secret)  # pylint: disable=protected-access
    assert secret not in masked and "sw0" in masked
