"""The collection as users get it: ansible-galaxy collection build, then
install into an empty path, then ansible-doc and ansible-inventory resolve
ethercluster.routing.* from that installed copy only."""

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(tool, *args, cwd, collections_path):
    path = BIN / tool
    assert path.exists(), "%s not found next to %s (bash scripts/setup)" % (tool, sys.executable)
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    config = Path(collections_path).parent / "ansible.cfg"  # empty: not the checkout's
    config.write_text("[defaults]\n", encoding="utf-8")
    env.update(
        # nothing but the installed copy (and Ansible's own) can provide the collection
        ANSIBLE_CONFIG=str(config),
        ANSIBLE_COLLECTIONS_PATH=str(collections_path),
        ANSIBLE_INVENTORY_ENABLED="ethercluster.routing.topology,yaml,ini",
        ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
        ANSIBLE_NOCOLOR="1",
    )
    proc = subprocess.run([str(path), *map(str, args)], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, "%s %s failed:\n%s%s" % (tool, args, proc.stdout, proc.stderr)
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(artifact, collections path) of a fresh build installed into a temp path."""
    base = tmp_path_factory.mktemp("collection")
    dist, collections = base / "dist", base / "collections"
    run("ansible-galaxy", "collection", "build", "--output-path", dist, ROOT,
        cwd=base, collections_path=collections)
    artifacts = list(dist.glob("ethercluster-routing-*.tar.gz"))
    assert len(artifacts) == 1, artifacts
    run("ansible-galaxy", "collection", "install", "--offline", "-p", collections, artifacts[0],
        cwd=base, collections_path=collections)
    return artifacts[0], collections


def test_artifact_contents(installed):
    artifact, collections = installed
    with tarfile.open(artifact) as tar:
        names = set(tar.getnames())
    for needed in ("MANIFEST.json", "FILES.json", "meta/runtime.yml",
                   "plugins/inventory/topology.py", "plugins/action/topology_info.py",
                   "plugins/modules/topology_info.py", "plugins/module_utils/fabric/topology.py",
                   "playbooks/show_topology.yml", "inventories/default/topology.yml"):
        assert needed in names, needed
    # local state never ships
    for name in names:
        top = name.split("/")[0]
        assert top not in (".venv", ".build", ".git", ".cache", ".pytest_cache", ".hypothesis"), name
        assert "__pycache__" not in name and not name.endswith(".pyc"), name
    manifest = json.loads((collections / "ansible_collections" / "ethercluster" / "routing"
                           / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["collection_info"]["namespace"] == "ethercluster"
    assert manifest["collection_info"]["name"] == "routing"


def test_ansible_doc_from_installed_copy(installed, tmp_path):
    _artifact, collections = installed
    installed_root = collections / "ansible_collections" / "ethercluster" / "routing"

    inventory_doc = json.loads(run("ansible-doc", "--json", "-t", "inventory",
                                   "ethercluster.routing.topology",
                                   cwd=tmp_path, collections_path=collections).stdout)
    entry = inventory_doc["ethercluster.routing.topology"]
    assert entry["doc"]["filename"].startswith(str(installed_root))
    assert {"plugin", "generate", "switches", "links", "hosts", "compose",
            "keyed_groups"} <= set(entry["doc"]["options"])
    assert entry["examples"]

    module_doc = json.loads(run("ansible-doc", "--json", "ethercluster.routing.topology_info",
                                cwd=tmp_path, collections_path=collections).stdout)
    entry = module_doc["ethercluster.routing.topology_info"]
    assert entry["doc"]["filename"].startswith(str(installed_root))
    assert set(entry["doc"]["options"]) == {"src", "topology"}
    assert {"topology", "summary"} <= set(entry["return"])

    text = run("ansible-doc", "ethercluster.routing.topology_info",
               cwd=tmp_path, collections_path=collections).stdout
    assert text.startswith("> MODULE ethercluster.routing.topology_info (%s" % installed_root)
    assert "Exactly one of `src' and `topology' is required" in " ".join(text.split())


@pytest.mark.parametrize("plugin_type", ["module", "filter", "inventory", "cliconf", "role"])  # terminal plugins carry no docs
def test_every_plugin_and_role_documentation_parses(installed, tmp_path, plugin_type):
    """ansible-doc reads the documentation of every plugin of the type (a
    YAML error in one, such as an unquoted colon in a filter's .yml, fails
    the whole listing, as ansible-test sanity would)."""
    _artifact, collections = installed
    listed = json.loads(run("ansible-doc", "--json", "-t", plugin_type, "-l", "ethercluster.routing",
                            cwd=tmp_path, collections_path=collections).stdout)
    names = sorted(name for name in listed if name.startswith("ethercluster.routing."))
    assert names, "no %s listed" % plugin_type
    docs = json.loads(run("ansible-doc", "--json", "-t", plugin_type, *names,
                          cwd=tmp_path, collections_path=collections).stdout)
    assert set(docs) == set(names)


def test_inventory_and_playbook_from_installed_copy(installed, tmp_path):
    _artifact, collections = installed
    inventory = tmp_path / "fabric.yml"
    inventory.write_text("plugin: ethercluster.routing.topology\n"
                         "generate: {kind: mesh, dims: [2, 3], hosts_per_switch: 1}\n",
                         encoding="utf-8")
    graph = run("ansible-inventory", "-i", inventory, "--graph",
                cwd=tmp_path, collections_path=collections).stdout
    assert "@switches:" in graph and "@nodes:" in graph and "@platform_ovs:" in graph
    for index in range(6):
        assert "|--sw%d\n" % index in graph
        assert "|--node%02d\n" % index in graph

    playbook = (collections / "ansible_collections" / "ethercluster" / "routing"
                / "playbooks" / "show_topology.yml")
    out = run("ansible-playbook", "-i", inventory, playbook, "-e", "topology=%s" % inventory,
              cwd=tmp_path, collections_path=collections).stdout
    assert "6 switches, 7 links (0 down), 14 channels, 6 hosts, shape mesh 2x3" in out
