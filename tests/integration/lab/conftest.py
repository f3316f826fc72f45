"""Lab tests build real emulated switches (network namespaces, Open vSwitch,
sshd) on this machine. They are marked ``lab`` (``-m lab`` selects them,
``-m "not lab"`` leaves them out) and run in the normal test run whenever
the machine can: root and the lab's tools present. Where it cannot, they
skip — except under CI (``CI=true``), where a missing tool is a failure:
CI must exercise the lab (``ansible-playbook playbooks/lab_up.yml`` or
``apt-get install openvswitch-switch openssh-server iproute2 ethtool``
installs what they need).
"""

import os

import pytest
from lab_helpers import lab_machine_problems


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "lab: builds the emulated switch lab (root, Open vSwitch, sshd); "
                   "fails instead of skipping under CI=true when the machine lacks them")


@pytest.fixture(scope="session")
def lab_machine():
    """Skip (or, under CI, fail) when this machine cannot run the lab."""
    problems = lab_machine_problems()
    if problems:
        message = ("the lab tests need root and Open vSwitch/OpenSSH server/iproute2: %s "
                   "(ansible-playbook playbooks/lab_up.yml installs them)" % "; ".join(problems))
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
