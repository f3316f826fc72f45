"""The roles are the collection's public API: ansible-doc lists the ten of
them with their arguments; every default is prefixed with the role's name
and documented (typed, described, defaulted); a wrong argument stops the
play naming it; the fabric settings follow their precedence (built-in <
topology file < inventory < extra vars)."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
ROLES = ("fabric_design", "switch_config", "switch_deploy", "fabric_validate", "link_transition",
         "power_save", "node_learning", "node_network", "node_planes", "failover")
PLAN_TASK = "Plan routing, VLANs and static MACs; check everything; write the intent"

RING = yaml.safe_load((ROOT / "tests" / "unit" / "fixtures" / "lab" / "ring3_topology.yml").read_text())


def test_ansible_doc_lists_the_ten_roles_with_their_entry_points(ansible_cli, tmp_path):
    proc = ansible_cli.run("ansible-doc", "-t", "role", "-l", "ethercluster.routing", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert sorted(listed) == sorted("ethercluster.routing." + role for role in ROLES)
    assert set(listed["ethercluster.routing.switch_deploy"]["entry_points"]) == {"main", "inventory_check", "redeploy"}
    assert set(listed["ethercluster.routing.fabric_validate"]["entry_points"]) == {"main", "read_back"}


@pytest.mark.parametrize("role", ROLES)
def test_ansible_doc_shows_every_argument_typed_described_defaulted(ansible_cli, tmp_path, role):
    proc = ansible_cli.run("ansible-doc", "-t", "role", "--json", "ethercluster.routing." + role, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["ethercluster.routing." + role]
    documented = {}
    for entry_point, spec in doc["entry_points"].items():
        assert spec["short_description"] and spec["description"], (role, entry_point)
        for name, option in spec["options"].items():
            assert name.startswith(role + "_"), (role, name)
            assert option.get("type"), (role, name)
            assert option.get("description"), (role, name)
            assert "default" in option, (role, name)
            documented[name] = option
    # every variable of defaults/main.yml (set or shown commented out) is an argument
    text = (ROOT / "roles" / role / "defaults" / "main.yml").read_text(encoding="utf-8")
    defaults = yaml.safe_load(text) or {}
    commented = [line[2:].split(":")[0] for line in text.splitlines()
                 if line.startswith("# " + role + "_") and ":" in line]
    for name in list(defaults) + commented:
        assert name.startswith(role + "_"), (role, name)
        assert name in documented, (role, name)
    for name, value in defaults.items():
        if not isinstance(value, str) or "{{" not in value:
            assert documented[name]["default"] == value, (role, name)


@pytest.mark.parametrize("role", ROLES)
def test_each_role_has_a_readme_and_main_tasks(role):
    base = ROOT / "roles" / role
    for needed in ("README.md", "meta/main.yml", "meta/argument_specs.yml", "defaults/main.yml",
                   "tasks/main.yml"):
        assert (base / needed).is_file(), (role, needed)
    assert ("ethercluster.routing." + role) in (base / "README.md").read_text(encoding="utf-8")


def plan(ansible_cli, cwd, *args):
    """plan.yml with the JSON callback: (rc, the plan task's result or None, output)."""
    env = ansible_cli.env()
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    proc = subprocess.run([ansible_cli.tool("ansible-playbook"), str(ROOT / "playbooks" / "plan.yml"), *args],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300, check=False)
    data = json.loads(proc.stdout[proc.stdout.find("{"):])
    tasks = {task["task"]["name"].split(" : ", 1)[-1]: task["hosts"].get("localhost")
             for play in data["plays"] for task in play["tasks"]}
    return proc.returncode, tasks, proc.stdout + proc.stderr


@pytest.mark.parametrize("option, value, message", [
    ("fabric_design_bank", "C", "value of fabric_design_bank must be one of: A, B, got: C"),
    ("fabric_design_max_broadcast_copies", "many", "fabric_design_max_broadcast_copies"),
    ("fabric_design_engine_options", "root", "fabric_design_engine_options"),
])
def test_a_wrong_argument_stops_the_play_naming_it(ansible_cli, tmp_path, option, value, message):
    rc, tasks, output = plan(ansible_cli, tmp_path, "-e", json.dumps({option: value}),
                             "-e", "out=%s" % (tmp_path / "out"))
    assert rc != 0
    validation = next(result for name, result in tasks.items() if name.startswith("Validating arguments"))
    assert validation["failed"] and message in validation["msg"], validation["msg"]
    assert PLAN_TASK not in tasks
    assert not (tmp_path / "out").exists()


def test_settings_precedence_file_then_group_vars_then_extra_vars(ansible_cli, tmp_path):
    """The topology file says updown/fixed/bank B; group_vars/all says bank A;
    -e says stp: the plan takes updown's root from the file, bank A from the
    inventory, stp from the command line, and records them in the intent."""
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "topology.yml").write_text(yaml.safe_dump(dict(RING, fabric={
        "routing": "updown", "engine_options": {"root": "sw1"}, "assignment": "fixed", "bank": "B"})))
    (inventory / "group_vars" / "all.yml").write_text("fabric_design_bank: A\n")
    out = tmp_path / "intended"

    rc, tasks, output = plan(ansible_cli, tmp_path, "-i", str(inventory / "topology.yml"))
    assert rc == 0, output[-3000:]
    settings = tasks[PLAN_TASK]["intent"]["fabric"]["settings"]
    assert (settings["routing"], settings["assignment"], settings["bank"]) == ("updown", "fixed", "A")
    assert tasks[PLAN_TASK]["settings_sources"]["routing"] == "topology"
    assert tasks[PLAN_TASK]["settings_sources"]["bank"] == "settings"
    written = json.loads((out / "intent.json").read_text())   # intended/ under the current directory
    assert written["fabric"]["settings"] == settings

    rc, tasks, output = plan(ansible_cli, tmp_path, "-i", str(inventory / "topology.yml"),
                             "-e", "fabric_design_routing=stp", "-e", "fabric_design_engine_options={}")
    assert rc == 0, output[-3000:]
    fabric = tasks[PLAN_TASK]["intent"]["fabric"]
    assert (fabric["routing"], fabric["assignment"], fabric["bank"]) == ("stp", "fixed", "A")
    # the playbooks' short extra vars win as well
    rc, tasks, output = plan(ansible_cli, tmp_path, "-i", str(inventory / "topology.yml"), "-e", "bank=B")
    assert rc == 0, output[-3000:]
    assert tasks[PLAN_TASK]["intent"]["fabric"]["bank"] == "B"
