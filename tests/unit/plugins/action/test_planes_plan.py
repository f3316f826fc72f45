"""playbooks/plan_planes.yml and the planes_plan action (docs/planes.md):
the plan's files, idempotence, check mode, --diff, and a bad design
failing with the file and field, through the real ansible-playbook."""

import json
import subprocess
import textwrap
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[4]
PLAYBOOK = ROOT / "playbooks" / "plan_planes.yml"
SCHEMA = json.loads((ROOT / "plugins" / "module_utils" / "nodes" / "schemas" / "node_network.v1.schema.json").read_text())

DESIGN = textwrap.dedent("""\
    design:
      kind: planes
      name: lab4
      nodes: 4
      ports: 4
      base_prefix: 10.97.0.0/16
    """)


def playbook(ansible_cli, *args, cwd):
    """Run plan_planes.yml with the JSON callback: (rc, {task name: localhost's result}, output)."""
    env = ansible_cli.env()
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    proc = subprocess.run([ansible_cli.tool("ansible-playbook"), str(PLAYBOOK), *map(str, args)],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300, check=False)
    text = proc.stdout + proc.stderr
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON:\n" + text) from None
    tasks = {t["task"]["name"]: t["hosts"]["localhost"] for t in report["plays"][0]["tasks"]}
    return proc.returncode, tasks, text


def test_plan_planes_writes_the_plan_then_changes_nothing(ansible_cli, tmp_path):
    (tmp_path / "planes.yml").write_text(DESIGN)
    out = tmp_path / "out"
    rc, tasks, text = playbook(ansible_cli, "-e", "design=planes.yml", "-e", "out=%s" % out, "--check", "--diff",
                               cwd=tmp_path)
    assert rc == 0, text
    assert tasks["Write the node network contract"]["changed"] and not out.exists()
    assert "02:03:0a:61:03:04" in json.dumps(tasks["Write the node network contract"]["diff"])

    rc, tasks, text = playbook(ansible_cli, "-e", "design=planes.yml", "-e", "out=%s" % out, cwd=tmp_path)
    assert rc == 0 and tasks["Write the whole plan"]["changed"], text
    contract = yaml.safe_load((out / "nodes.yml").read_text())
    jsonschema.validate(contract, SCHEMA)
    plan = yaml.safe_load((out / "planes_plan.yml").read_text())
    assert plan["nodes"] == contract["nodes"] and len(plan["mac_table"]) == 16
    assert tasks["Plan the design"]["summary"] == {"name": "lab4", "nodes": 4, "ports": 4, "switches": 4,
                                                   "mode": "pmcme", "node_mbps": 4000}

    rc, tasks, text = playbook(ansible_cli, "-e", "design=planes.yml", "-e", "out=%s" % out, cwd=tmp_path)
    assert rc == 0, text
    assert not any(result.get("changed") for result in tasks.values())


def test_a_bad_design_fails_naming_the_file_and_field(ansible_cli, tmp_path):
    (tmp_path / "bad.yml").write_text("design:\n  kind: planes\n  nodes: 60\n  ports: 2\n")
    rc, tasks, text = playbook(ansible_cli, "-e", "design=bad.yml", "-e", "out=%s" % (tmp_path / "out"), cwd=tmp_path)
    assert rc != 0
    message = tasks["Plan the design"]["msg"]
    assert message.startswith(str(tmp_path / "bad.yml")) and "switch_ports:" in message, message
    assert not (tmp_path / "out").exists()
