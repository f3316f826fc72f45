"""One design planned through a plan playbook (plan_stack.yml,
plan_planes.yml) into ``<tmp>/out``, for test_stack_plan.py and
test_planes_plan.py: the design file written beside the output, each run
given ``-e design=<file> -e out=<out>``, and the node network contract read
back and validated against its schema."""

import json
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[4]
SCHEMA = json.loads((ROOT / "plugins" / "module_utils" / "nodes" / "schemas" / "node_network.v1.schema.json").read_text())


class DesignPlan:
    """The design ``text`` written to ``cwd/name``, planned by ``playbook`` into ``cwd/out``."""

    def __init__(self, ansible_cli, playbook, cwd, name, text):
        self.ansible_cli = ansible_cli
        self.playbook = playbook
        self.cwd = cwd
        self.name = name
        self.out = cwd / "out"
        (cwd / name).write_text(text)

    def run(self, *options):
        """(rc, the play's tasks, output) of one playbook run with ``options``."""
        return self.ansible_cli.playbook_tasks(self.playbook, "-e", "design=" + self.name, "-e", "out=%s" % self.out,
                                               *options, cwd=self.cwd)

    def check(self):
        """A --check --diff run: it succeeds and writes nothing; its tasks."""
        rc, tasks, text = self.run("--check", "--diff")
        assert rc == 0, text
        assert not self.out.exists(), "check mode wrote %s" % self.out
        return tasks

    def apply(self):
        """A run that must succeed; its tasks."""
        rc, tasks, text = self.run()
        assert rc == 0, text
        return tasks

    def contract(self):
        """The written nodes.yml, once it validates against the node network contract's schema."""
        contract = yaml.safe_load((self.out / "nodes.yml").read_text())
        jsonschema.validate(contract, SCHEMA)
        return contract
