"""Fixtures for the plugin tests: the Ansible command-line tools of the
Python that runs pytest, pointed at the collection in this checkout.

The collection is reached through the symlink tree that the repository's
conftest.py keeps in ``.build/ansible_collections/ethercluster/routing`` (it
points at the checkout), so these tests exercise the files being edited;
the built and installed artifact is tested by
tests/unit/test_collection_build.py.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


class AnsibleCli:
    """Runs ansible, ansible-inventory, ... found next to sys.executable."""

    def __init__(self, root):
        self.root = root
        self.bin = Path(sys.executable).parent

    def tool(self, name):
        path = self.bin / name
        assert path.exists(), ("%s not found next to %s: run the tests with the .venv python "
                               "(bash scripts/setup)" % (name, sys.executable))
        return str(path)

    def env(self):
        env = dict(os.environ)
        env.update(
            ANSIBLE_CONFIG=str(self.root / "ansible.cfg"),
            ANSIBLE_COLLECTIONS_PATH=str(self.root / ".build"),
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_FORCE_COLOR="0",
            ANSIBLE_DEPRECATION_WARNINGS="0",
        )
        return env

    def run(self, name, *args, cwd):
        return subprocess.run([self.tool(name), *map(str, args)], cwd=str(cwd), env=self.env(),
                              capture_output=True, text=True, timeout=180, check=False)

    def playbook_tasks(self, playbook, *args, cwd):
        """Run ``ansible-playbook PLAYBOOK ARGS`` with the ansible.posix.json
        callback: (returncode, the first play's tasks as that callback reports
        them, stdout + stderr). Fails the test when no JSON was printed."""
        env = self.env()
        env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
        proc = subprocess.run([self.tool("ansible-playbook"), str(playbook), *map(str, args)],
                              cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300, check=False)
        text = proc.stdout + proc.stderr
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            raise AssertionError("ansible-playbook printed no JSON:\n" + text) from None
        return proc.returncode, report["plays"][0]["tasks"], text

    def inventory_list(self, path):
        """``ansible-inventory -i PATH --list`` as (group -> set of hosts, hostvars)."""
        proc = self.run("ansible-inventory", "-i", path, "--list", cwd=Path(path).parent)
        assert proc.returncode == 0, proc.stderr
        data = unwrap(json.loads(proc.stdout))
        hostvars = data.pop("_meta")["hostvars"]
        groups = {name: set(entry.get("hosts", [])) for name, entry in data.items()}
        return groups, hostvars

    def adhoc(self, module, args, *options, cwd):
        """Run ``ansible localhost -m MODULE -a JSON`` and return (returncode,
        result dict, stderr)."""
        module_args = ("-a", json.dumps(args)) if args else ()
        proc = self.run("ansible", "localhost", "-m", module, *module_args, *options, cwd=cwd)
        match = re.search(r"^localhost \| [A-Z]+!? => ", proc.stdout, re.MULTILINE)
        assert match, proc.stdout + proc.stderr
        result, _end = json.JSONDecoder().raw_decode(proc.stdout[match.end():])
        return proc.returncode, result, proc.stderr


def unwrap(value):
    """Undo ansible-inventory's ``{"__ansible_unsafe": ...}`` wrapping of strings."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {key: unwrap(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap(item) for item in value]
    return value


@pytest.fixture(scope="session")
def ansible_cli():
    return AnsibleCli(ROOT)
