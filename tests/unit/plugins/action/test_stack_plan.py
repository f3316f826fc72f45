"""playbooks/plan_stack.yml and the stack_plan action (docs/stack.md): the
plan's three files, idempotence, check mode, --diff, and a bad design
failing with the file and field, through the real ansible-playbook."""

import json
import subprocess
import textwrap
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[4]
PLAYBOOK = ROOT / "playbooks" / "plan_stack.yml"
SCHEMA = json.loads((ROOT / "plugins" / "module_utils" / "nodes" / "schemas" / "node_network.v1.schema.json").read_text())
PLAN_TASK = "Plan the design and write the plan"

RING = textwrap.dedent("""\
    design:
      kind: stack_ring
      stages: 4
      nodes_per_stage: 3
    """)


def playbook(ansible_cli, *args, cwd):
    """Run plan_stack.yml with the JSON callback: (rc, the plan task's result, output)."""
    env = ansible_cli.env()
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    proc = subprocess.run([ansible_cli.tool("ansible-playbook"), str(PLAYBOOK), *map(str, args)],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300, check=False)
    text = proc.stdout + proc.stderr
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON:\n" + text) from None
    tasks = report["plays"][0]["tasks"]
    task = next((t for t in tasks if t["task"]["name"] == PLAN_TASK), None)
    return proc.returncode, (task["hosts"]["localhost"] if task else None), text


def test_plan_stack_writes_the_plan_then_changes_nothing(ansible_cli, tmp_path):
    (tmp_path / "ring.yml").write_text(RING)
    out = tmp_path / "out"
    rc, check, text = playbook(ansible_cli, "-e", "design=ring.yml", "-e", "out=%s" % out, "--check", "--diff",
                               cwd=tmp_path)
    assert rc == 0, text
    assert check["changed"] and not out.exists()  # check mode: nothing written
    assert {state["state"] for state in check["files"].values()} == {"created"}
    assert "10.10.1.128" in check["diff"][0]["after"]

    rc, first, text = playbook(ansible_cli, "-e", "design=ring.yml", "-e", "out=%s" % out, cwd=tmp_path)
    assert rc == 0 and first["changed"], text
    contract = yaml.safe_load((out / "nodes.yml").read_text())
    jsonschema.validate(contract, SCHEMA)
    assert set(contract) == {"nodes", "switches"} and len(contract["nodes"]) == 12
    plan = json.loads((out / "stack_plan.json").read_text())
    assert plan["checks"]["passed"] and plan["nodes"] == contract["nodes"]
    report = (out / "report.md").read_text()
    assert "## Checks: passed" in report and "| 10.10.2.0/24 | ssb2 | east | 10.10.1.128 + x |" in report

    rc, second, text = playbook(ansible_cli, "-e", "design=ring.yml", "-e", "out=%s" % out, cwd=tmp_path)
    assert rc == 0 and not second["changed"], text
    assert {state["state"] for state in second["files"].values()} == {"unchanged"}


def test_a_bad_design_fails_naming_the_file_and_field(ansible_cli, tmp_path):
    (tmp_path / "mesh.yml").write_text("design:\n  kind: stack_mesh\n  groups: 3\n  nodes_per_group: 64\n")
    rc, result, text = playbook(ansible_cli, "-e", "design=mesh.yml", "-e", "out=%s" % (tmp_path / "out"),
                                cwd=tmp_path)
    assert rc != 0 and result["failed"], text
    assert "mesh.yml: design.nodes_per_group: 64 is not between 1 and 63" in result["msg"]
    assert not (tmp_path / "out").exists()
