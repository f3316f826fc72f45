"""Fixtures of the platform tests."""

import json

import pytest


@pytest.fixture
def switch_dir(tmp_path):
    """The directory of an emulated OS6 switch (lab/os6_cli.py): its
    cli.json, hostname sw1 on bridge br0 with ports 1-3 as Gi1/0/1-3."""
    (tmp_path / "cli.json").write_text(json.dumps({
        "hostname": "sw1", "platform": "dell_os6", "bridge": "br0",
        "interfaces": {"1": "Gi1/0/1", "2": "Gi1/0/2", "3": "Gi1/0/3"}}))
    return tmp_path
