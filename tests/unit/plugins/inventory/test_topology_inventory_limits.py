"""Hostile topology files through the real ansible-inventory command: a
clear error naming the file, never Ansible's "Unexpected Exception, this is
probably a bug" (see tests/unit/plugins/conftest.py for ansible_cli)."""

import re

import pytest

from ansible_collections.ethercluster.routing.plugins.inventory.topology import InventoryModule

BOMB = ['plugin: ethercluster.routing.topology', 'switches:', '  sw0:', '    coords:',
        '      - &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    '      - &a%d [%s]' % (level, ", ".join(["*a%d" % (level - 1)] * 9)) for level in range(1, 9)] + [
    '  sw1: {}', 'links:', '  - {a: "sw0:1", b: "sw1:1"}']


def test_alias_bomb_gives_a_clear_error_naming_the_file(ansible_cli, tmp_path):
    path = tmp_path / "bomb.yml"
    path.write_text("\n".join(BOMB) + "\n", encoding="utf-8")
    proc = ansible_cli.run("ansible-inventory", "-i", path, "--list", cwd=tmp_path)
    assert proc.returncode != 0  # ansible.cfg: any_unparsed_is_failed
    assert "%s: line 11: with its aliases expanded the YAML holds more than 2000000 nodes" % path \
        in proc.stderr, proc.stderr
    assert "probably a bug" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


def test_deep_flow_mapping_is_claimed_and_refused(ansible_cli, tmp_path):
    """A flow-style file is parsed by verify_file too: within the limits, so
    a deep one is still recognised as ours and refused by the parser."""
    path = tmp_path / "deep.yml"
    path.write_text("{plugin: ethercluster.routing.topology, switches: {sw0: {coords: %s1%s}}}\n"
                    % ("[" * 5000, "]" * 5000), encoding="utf-8")
    assert InventoryModule().verify_file(str(path)) is True
    proc = ansible_cli.run("ansible-inventory", "-i", path, "--list", cwd=tmp_path)
    assert proc.returncode != 0
    # PyYAML 6.0.3+ (libyaml's scanner) refuses the depth before our own limit sees it
    assert re.search(r"%s: line 1: the YAML nests (33 levels deep|deeper than its parser allows), more "
                     r"than the 32 a topology file may have" % re.escape(str(path)), proc.stderr), proc.stderr
    assert "probably a bug" not in proc.stderr + proc.stdout


@pytest.mark.parametrize("text, accepted", [
    ("{plugin: ethercluster.routing.topology, generate: [[[%s]]]}\n" % ("[" * 40 + "]" * 40), True),
    ("{plugin: other.collection.plugin, x: %s}\n" % ("[" * 40 + "]" * 40), False),
])
def test_verify_file_within_limits(tmp_path, text, accepted):
    path = tmp_path / "a.yml"
    path.write_text(text, encoding="utf-8")
    assert InventoryModule().verify_file(str(path)) is accepted
