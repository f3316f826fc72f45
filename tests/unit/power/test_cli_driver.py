"""The transition executor on CLI switches (module_utils/power/cli_driver.py):
a ring whose sw0 is an OVS switch (in memory), sw1 an emulated Dell OS6
switch and sw2 an emulated Huawei VRP switch (the lab's interpreters,
driven directly, as network_cli would drive them: show commands,
configuration lines).

Proves: a link off planned by the real planner runs across both platforms
and leaves every switch in the planned state, the link shut in the OS6
configurations; the OS6 switches receive only the lines that differ; a
second run changes nothing; check mode writes nothing; a push that fails
midway leaves a state the re-run reads back from the configurations and
resumes; the carrier comes from ``show interfaces status``; linux_bridge
is refused before any switch is read. A failover of the OS6-VRP link
(power/failover_run.py) runs across the three platforms without shutting
its ports, a second run changes nothing, and the restore ends on the
deployed routing; the resident responder does the same on these switches
(nothing armed, the planned move) and polls their interface status."""

import copy
from pathlib import Path

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import load_topology, topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.os6_cli import Os6Cli
from ansible_collections.ethercluster.routing.plugins.module_utils.lab.vrp_cli import VrpCli
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import cli_state
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_run
from ansible_collections.ethercluster.routing.plugins.module_utils.power import failover_watch as fw
from ansible_collections.ethercluster.routing.plugins.module_utils.power import transition_run as tr
from ansible_collections.ethercluster.routing.plugins.module_utils.power.cli_driver import CliDriver, CliDriverError, SwitchDrivers
from ansible_collections.ethercluster.routing.plugins.module_utils.power.fabric_state import fabric_state
from ansible_collections.ethercluster.routing.plugins.module_utils.power.failover import resolve_failure
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import plan_transition

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lab"
LINK = "sw1:3"  # sw1:3--sw2:2: an OS6 end and a VRP end
PLATFORMS = {"sw1": "dell_os6", "sw2": "huawei_vrp"}


def mixed_ring():
    data = load_topology(FIXTURES / "ring3_topology.yml").to_data()
    for name, platform in PLATFORMS.items():
        data["switches"][name]["platform"] = platform
    return topology_from_data(data)


RING = mixed_ring()


def settled(topology, down, bank):
    return plan(topology, assignment="renamed", down=down, bank=bank, broadcast="bounded").intent


class CliSession:
    """An emulated OS6 or VRP switch reached as network_cli reaches it."""

    KINDS = {"dell_os6": (Os6Cli, "Gi1/0/%d", "configure", "end"),
             "huawei_vrp": (VrpCli, "GigabitEthernet0/0/%d", "system-view", "return")}

    def __init__(self, name, platform, fail_on_push=None):
        kind, pattern, self.enter, self.leave = self.KINDS[platform]
        self.cli = kind(name, [pattern % port for port in range(1, 5)], privileged=True)
        if platform == "huawei_vrp":
            # VRP's brief shows the data plane's carrier (else down): every port cabled and up
            self.cli.status = lambda: {pattern % port: {"link": "up"} for port in range(1, 5)}
        self.pushed = []  # one list of lines per configure()
        self.fail_on_push = fail_on_push  # the nth configure() stops after its first line

    def command(self, text):
        return self.cli.execute(text)

    def configure(self, lines):
        self.pushed.append(list(lines))
        self.cli.execute(self.enter)
        for number, line in enumerate(lines):
            if self.fail_on_push == len(self.pushed) and number == 1:
                self.cli.execute(self.leave)
                raise EtherclusterError("the session ended after line 1")
            reply = self.cli.execute(line)
            assert not reply.strip(), "%s refused %r: %s" % (self.cli.hostname, line, reply)
        self.cli.execute(self.leave)

    def close(self):
        pass


class OvsMemory:
    """An OVS switch in memory (the OVS driver's read/write shape)."""

    def __init__(self, topology, name):
        ports = {str(port): {"admin": "up", "speed_mbps": None, "dev": "p%s" % port, "ofport": int(port), "link": "up"}
                 for port in topology.used_ports(name)}
        self.state = {"flows": [], "learned_flows": [], "foreign_flows": [], "ports": ports,
                      "bridge": {"stp": False, "rstp": False, "fail_mode": "secure"}, "gap": 0.0, "gaps": {}}
        self.retried = []

    def read(self, switch):
        return copy.deepcopy(self.state)

    def write(self, switch, changes, desired, current):
        self.state["flows"] = list(desired["flows"])
        self.state["bridge"] = dict(desired["bridge"])
        for port, value in desired["ports"].items():
            self.state["ports"][port]["admin"] = value["admin"]
            self.state["ports"][port]["speed_mbps"] = value["speed_mbps"]

    def carrier(self, switch, port):
        return self.state["ports"][str(port)]["admin"]

    def close(self):
        pass


@pytest.fixture
def fabric():
    sessions = {name: CliSession(name, platform) for name, platform in PLATFORMS.items()}
    cli = CliDriver(lambda name: sessions[name], PLATFORMS)
    driver = SwitchDrivers({"sw0": OvsMemory(RING, "sw0"), "sw1": cli, "sw2": cli})
    for name, entry in settled(RING, (), "A")["switches"].items():  # the deploy
        current = driver.read(name)
        driver.write(name, None, cli_state.render_for(entry, name), current)
    for session in sessions.values():
        session.pushed.clear()
    return driver, sessions


def run(driver, **options):
    return tr.execute(RING, "off", LINK, driver, plan_transition, settled, sleep=lambda s: None,
                      planner_options={"broadcast": "bounded"}, **options)


def test_a_link_off_runs_across_ovs_and_os6_switches(fabric):
    driver, sessions = fabric
    before = fabric_state(RING, tr.read_states(driver, RING.switch_names()))
    assert before["settled"] and before["bank"] == "A"
    result = run(driver)
    assert result["changed"] and result["steps"]
    after = fabric_state(RING, tr.read_states(driver, RING.switch_names()))
    assert after["settled"] and after["bank"] == "B" and after["down_links"] == ["sw1:3--sw2:2"]
    assert "interface Gi1/0/3\nswitchport mode general" in sessions["sw1"].cli.running_config()
    assert "shutdown" in sessions["sw1"].cli.running_config().split("interface Gi1/0/3", 1)[1].split("exit")[0]
    assert driver.carrier("sw1", "3") == "down" and driver.carrier("sw1", "2") == "up"
    assert driver.carriers("sw2") == {"1": "up", "2": "down", "3": "up", "4": "up"}
    assert driver.carriers("sw0")["2"] == "up"  # the OVS switch in memory: per port
    # only differences: the last push of sw1 (the link shut) is its interface block alone
    assert sessions["sw1"].pushed[-1] == ["interface Gi1/0/3", "shutdown", "exit"]
    again = run(driver)
    assert not again["changed"] and "nothing to do" in again["reason"]


def test_check_mode_writes_nothing_to_the_cli_switches(fabric):
    driver, sessions = fabric
    result = run(driver, check_mode=True)
    assert result["changed"] and result["plan"] and not result["steps"]
    assert all(not session.pushed for session in sessions.values())


def test_a_push_cut_midway_is_read_back_and_resumed(fabric):
    driver, sessions = fabric
    sessions["sw2"].fail_on_push = 2  # sw2 takes the install, its flip stops after one line
    with pytest.raises(tr.TransitionRunError, match="session ended"):
        run(driver)
    state = fabric_state(RING, tr.read_states(driver, RING.switch_names()))
    assert not state["settled"]
    sessions["sw2"].fail_on_push = None
    result = run(driver)
    assert result["resumed_after"] >= 1 and "resuming after step" in result["reason"]
    after = fabric_state(RING, tr.read_states(driver, RING.switch_names()))
    assert after["settled"] and after["bank"] == "B" and after["down_links"] == ["sw1:3--sw2:2"]


def test_linux_bridge_is_refused_before_any_switch_is_read(fabric):
    driver, sessions = fabric
    data = RING.to_data()
    data["switches"]["sw0"]["platform"] = "linux_bridge"
    with pytest.raises(tr.TransitionRunError, match=r"sw0 \(linux_bridge\).*linux_bridge: no transition driver"):
        tr.execute(topology_from_data(data), "off", LINK, driver, plan_transition, settled)
    with pytest.raises(CliDriverError, match="sw9: no driver"):
        driver.read("sw9")
    with pytest.raises(CliDriverError, match="read over SNMP"):
        driver.counters("sw1")


FAILOVER_OPTIONS = {"engine": "segment", "assignment": "renamed", "engine_options": None, "broadcast": "bounded"}


def test_a_failover_and_its_restore_run_across_ovs_os6_and_vrp_switches(fabric):
    # the link between the OS6 and the VRP switch failed: its ports are neither written nor shut
    driver, sessions = fabric
    failure = resolve_failure(RING, link=LINK)

    def planner(restore):
        run = failover_run.plan_restore if restore else failover_run.plan_failover
        return lambda bank: run(RING, FAILOVER_OPTIONS, failure, bank)
    done = failover_run.execute(RING, driver, planner(False), failure=failure)
    assert done["changed"] and done["reason"] == "fresh" and done["bank_after"] == "B"
    assert {step["kind"] for step in done["steps"]} >= {"push"} and not done["proof"]["drain"]
    pushed = "\n".join(line for session in sessions.values() for lines in session.pushed for line in lines)
    assert "shutdown" not in pushed
    states = tr.read_states(driver, RING.switch_names())
    assert {name: fabric_state(RING, states)["switches"][name]["banks"] for name in RING.switch_names()} \
        == {name: ["B"] for name in RING.switch_names()}
    again = failover_run.execute(RING, driver, planner(False), failure=failure)
    assert not again["changed"] and "done already" in again["reason"]
    back = failover_run.execute(RING, driver, planner(True), failure=failure)
    assert back["changed"] and back["bank_after"] == "A"
    assert tr.differing(tr.read_states(driver, RING.switch_names()), settled(RING, (), "A")["switches"]) == []


def test_a_failover_on_linux_bridge_switches_is_refused_before_any_switch_is_read(fabric):
    driver, sessions = fabric
    data = RING.to_data()
    data["switches"]["sw2"]["platform"] = "linux_bridge"
    topology = topology_from_data(data)
    with pytest.raises(tr.TransitionRunError, match=r"failovers run on platforms .*sw2 \(linux_bridge\)"):
        failover_run.execute(topology, driver, lambda bank: pytest.fail("planned"),
                             failure=resolve_failure(topology, link=LINK))
    assert all(not session.pushed for session in sessions.values())


def _carriers(cut=()):
    """Every fabric port's carrier, the link ``cut`` (names) down at both ends."""
    result = {name: {port: "up" for port in ports} for name, ports in fw.fabric_ports(RING).items()}
    for name in cut:
        link = RING.link(name)
        result[link.a.switch][str(link.a.port)] = result[link.b.switch][str(link.b.port)] = "down"
    return result


def test_the_responder_on_cli_switches_runs_the_planned_move_and_returns(fabric):
    # CLI switches take lines one by one: nothing armed, no rounds, the move as planned, each push read first
    driver, sessions = fabric
    events = []
    responder = fw.Responder(RING, FAILOVER_OPTIONS, fw.OneAtATime(driver), log=events.append, atomic=False)
    ready = responder.ready([LINK])
    assert ready["armed"] == [] and ready["planned"] == ["sw1:3--sw2:2"] and ready["rounds"] == {}
    responder.observe(_carriers(cut=["sw1:3--sw2:2"]))
    [recovered] = responder.handle()
    responder.settle()
    assert recovered["event"] == "recovered" and recovered["how"] == "pre-planned"
    assert [step["name"] for step in recovered["steps"]][0].startswith("install bank B")
    assert not any("round" in step["name"] for step in recovered["steps"]) and not responder.tail_error
    pushed = "\n".join(line for session in sessions.values() for lines in session.pushed for line in lines)
    assert "shutdown" not in pushed
    states = tr.read_states(driver, RING.switch_names())
    assert {name: entry["banks"] for name, entry in fabric_state(RING, states)["switches"].items()} \
        == {name: ["B"] for name in RING.switch_names()}
    responder.observe(_carriers())
    [restored] = responder.handle()
    responder.settle()
    assert restored["event"] == "restored" and not responder.tail_error
    assert tr.differing(tr.read_states(driver, RING.switch_names()), settled(RING, (), "A")["switches"]) == []
    assert responder.disarm() is None    # nothing was armed, nothing to write back


def test_the_status_reader_polls_each_switch_after_its_first_answer(fabric):
    driver, sessions = fabric
    waits = []
    read = fw.status_reader(fw.OneAtATime(driver), RING, 0.7, sleep=waits.append)
    carriers, line = read("sw1", "")
    assert waits == [] and carriers == {"2": "up", "3": "up"} and line == "2=up;3=up"
    for line in ("configure", "interface Gi1/0/3", "shutdown", "exit", "end"):   # the emulated OS6 shows a shut
        sessions["sw1"].cli.execute(line)                                       # port without link
    again, line = read("sw1", line)
    assert waits == [0.7] and again == {"2": "up", "3": "down"} and line == "2=up;3=down"
