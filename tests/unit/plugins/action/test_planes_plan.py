"""playbooks/plan_planes.yml and the planes_plan action (docs/planes.md):
the plan's files, idempotence, check mode, --diff, and a bad design
failing with the file and field, through the real ansible-playbook."""

import json
import textwrap
from pathlib import Path

import yaml
from design_plan_runs import DesignPlan

PLAYBOOK = Path(__file__).resolve().parents[4] / "playbooks" / "plan_planes.yml"

DESIGN = textwrap.dedent("""\
    design:
      kind: planes
      name: lab4
      nodes: 4
      ports: 4
      base_prefix: 10.97.0.0/16
    """)


def by_name(tasks):
    """{task name: localhost's result} of a run's tasks."""
    return {t["task"]["name"]: t["hosts"]["localhost"] for t in tasks}


def test_plan_planes_writes_the_plan_then_changes_nothing(ansible_cli, tmp_path):
    design = DesignPlan(ansible_cli, PLAYBOOK, tmp_path, "planes.yml", DESIGN)
    tasks = by_name(design.check())
    assert tasks["Write the node network contract"]["changed"]
    assert "02:03:0a:61:03:04" in json.dumps(tasks["Write the node network contract"]["diff"])

    tasks = by_name(design.apply())
    assert tasks["Write the whole plan"]["changed"], tasks
    contract = design.contract()
    plan = yaml.safe_load((design.out / "planes_plan.yml").read_text())
    assert plan["nodes"] == contract["nodes"] and len(plan["mac_table"]) == 16
    assert tasks["Plan the design"]["summary"] == {"name": "lab4", "nodes": 4, "ports": 4, "switches": 4,
                                                   "mode": "pmcme", "node_mbps": 4000}

    tasks = by_name(design.apply())
    assert not any(result.get("changed") for result in tasks.values())


def test_a_bad_design_fails_naming_the_file_and_field(ansible_cli, tmp_path):
    design = DesignPlan(ansible_cli, PLAYBOOK, tmp_path, "bad.yml", "design:\n  kind: planes\n  nodes: 60\n  ports: 2\n")
    rc, tasks, text = design.run()
    assert rc != 0, text
    message = by_name(tasks)["Plan the design"]["msg"]
    assert message.startswith(str(tmp_path / "bad.yml")) and "switch_ports:" in message, message
    assert not design.out.exists()


def test_a_missing_design_file_is_named_with_where_it_was_looked_for(ansible_cli, tmp_path):
    design = DesignPlan(ansible_cli, PLAYBOOK, tmp_path, "gone.yml", DESIGN)
    (tmp_path / "gone.yml").unlink()
    rc, tasks, text = design.run()
    assert rc != 0, text
    message = by_name(tasks)["Plan the design"]["msg"]
    assert message.startswith("design: file 'gone.yml' not found (looked in"), message
    assert str(tmp_path) in message, message
    assert not design.out.exists()
