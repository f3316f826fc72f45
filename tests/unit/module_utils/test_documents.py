"""read_document: intent.json / YAML files with errors naming the field and file."""

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import read_document
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError


def test_json_and_yaml_are_read_by_extension(tmp_path):
    (tmp_path / "intent.json").write_text('{"schema": "x", "switches": {}}')
    (tmp_path / "intent.yml").write_text("schema: x\nswitches: {}\n")
    assert read_document(tmp_path / "intent.json") == {"schema": "x", "switches": {}}
    assert read_document(tmp_path / "intent.yml") == {"schema": "x", "switches": {}}


def test_errors_name_the_field_and_the_file(tmp_path):
    with pytest.raises(EtherclusterError, match=r"^src: cannot read .*missing.json"):
        read_document(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(EtherclusterError, match=r"^intent_file: .*bad.json is not valid JSON"):
        read_document(bad, field="intent_file")
    binary = tmp_path / "binary.yml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(EtherclusterError, match="cannot read"):
        read_document(binary)


def test_a_yaml_alias_bomb_is_refused_before_it_is_built(tmp_path):
    # nine levels of nine aliases: 9^9 nodes once expanded
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += ["a%d: &a%d [%s]" % (level, level, ", ".join(["*a%d" % (level - 1)] * 9)) for level in range(1, 10)]
    path = tmp_path / "bomb.yml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(EtherclusterError, match=r"src: .*bomb.yml: .*aliases expanded"):
        read_document(str(path))
