"""``show interfaces status`` of the emulated OS6 CLI
(module_utils/lab/os6_cli.py): what the CLI transition driver reads for
the carrier and speed of each port, from the configuration and, in the
lab, from the data plane's ports (the session's ``status``)."""

from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import Os6Cli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.cli_state import parse_os6_status


def switch():
    cli = Os6Cli("sw0", ["Gi1/0/1", "Gi1/0/2", "Gi1/0/10"], privileged=True)
    for line in ("configure", "interface Gi1/0/2", "description to sw1 port 3", "shutdown", "exit",
                 "interface Gi1/0/10", "speed 100", "end"):
        assert cli.execute(line) == ""
    return cli


def test_the_status_follows_the_configuration_alone():
    assert parse_os6_status(switch().execute("show interfaces status")) == {
        "Gi1/0/1": {"link": "up", "speed_mbps": 1000},
        "Gi1/0/2": {"link": "down", "speed_mbps": None},  # shut down
        "Gi1/0/10": {"link": "up", "speed_mbps": 100},
    }


def test_the_data_planes_carrier_and_rate_win():
    cli = switch()
    # the lab's session: the OVS ports as the bridge has them (Gi1/0/1's peer shut its end)
    cli.status = lambda: {"Gi1/0/1": {"link": "down", "admin": "up", "speed_mbps": None},
                          "Gi1/0/10": {"link": "up", "admin": "up", "speed_mbps": 10}}
    text = cli.execute("show interface status")
    assert "to sw1 port 3" in text
    assert parse_os6_status(text) == {
        "Gi1/0/1": {"link": "down", "speed_mbps": None},
        "Gi1/0/2": {"link": "down", "speed_mbps": None},
        "Gi1/0/10": {"link": "up", "speed_mbps": 10},
    }
