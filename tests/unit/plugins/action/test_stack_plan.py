"""playbooks/plan_stack.yml and the stack_plan action (docs/stack.md): the
plan's three files, idempotence, check mode, --diff, and a bad design
failing with the file and field, through the real ansible-playbook."""

import json
import textwrap
from pathlib import Path

from design_plan_runs import DesignPlan

PLAYBOOK = Path(__file__).resolve().parents[4] / "playbooks" / "plan_stack.yml"
PLAN_TASK = "Plan the design and write the plan"

RING = textwrap.dedent("""\
    design:
      kind: stack_ring
      stages: 4
      nodes_per_stage: 3
    """)


def plan_task(tasks):
    """The plan task's result among a run's tasks (None when the play did not reach it)."""
    task = next((t for t in tasks if t["task"]["name"] == PLAN_TASK), None)
    return task["hosts"]["localhost"] if task else None


def test_plan_stack_writes_the_plan_then_changes_nothing(ansible_cli, tmp_path):
    design = DesignPlan(ansible_cli, PLAYBOOK, tmp_path, "ring.yml", RING)
    check = plan_task(design.check())  # check mode: nothing written (DesignPlan.check)
    assert check["changed"]
    assert {state["state"] for state in check["files"].values()} == {"created"}
    assert "10.10.1.128" in check["diff"][0]["after"]

    first = plan_task(design.apply())
    assert first["changed"]
    contract = design.contract()
    assert set(contract) == {"nodes", "switches"} and len(contract["nodes"]) == 12
    plan = json.loads((design.out / "stack_plan.json").read_text())
    assert plan["checks"]["passed"] and plan["nodes"] == contract["nodes"]
    report = (design.out / "report.md").read_text()
    assert "## Checks: passed" in report and "| 10.10.2.0/24 | ssb2 | east | 10.10.1.128 + x |" in report

    second = plan_task(design.apply())
    assert not second["changed"]
    assert {state["state"] for state in second["files"].values()} == {"unchanged"}


def test_a_bad_design_fails_naming_the_file_and_field(ansible_cli, tmp_path):
    design = DesignPlan(ansible_cli, PLAYBOOK, tmp_path, "mesh.yml",
                        "design:\n  kind: stack_mesh\n  groups: 3\n  nodes_per_group: 64\n")
    rc, tasks, text = design.run()
    result = plan_task(tasks)
    assert rc != 0 and result["failed"], text
    assert "mesh.yml: design.nodes_per_group: 64 is not between 1 and 63" in result["msg"]
    assert not design.out.exists()
