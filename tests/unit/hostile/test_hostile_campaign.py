"""The hostile-input campaign (issue 18 item 1; docs/reliability.md).

Over a thousand malformed or adversarial topology files, hundreds of broken
intents and garbled device outputs (hostile_cases.py, seeded), each run in
process through the entry points the plugins use:

- topology files: the inventory plugin's loader (``read_text`` ->
  ``parse_yaml`` -> ``topology_from_data``), topology_info's
  ``load_topology`` and the plan action's ``settings_layers`` + ``resolve``
  + ``run_plan``; a sample also through the real ``ansible-inventory``;
- intents: ``read_intent`` (deploy -e intent=DIR, ovs_switch, lab_verify)
  then ``render_configs``;
- device outputs: the Dell OS6 and Huawei VRP parsers through
  ``diff_commands`` (the CLI push) and the OVS ``parse_state``.

Every case is either accepted or refused with the collection's own error
(an EtherclusterError) naming the file and the field (or the switch and
line); never another exception, never more than CASE_SECONDS, and the
process's memory stays bounded.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from hostile_cases import cli_cases, intent_cases, topology_cases

from ansible_collections.ethercluster.routing.plugins.action.plan import settings_layers
from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError, TopologyError
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric import input_limits
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.input_limits import read_text
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.settings import FIELDS, resolve
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import (
    Topology,
    load_topology,
    parse_yaml,
    topology_from_data,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import plan
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.documents import read_intent
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms import ovs
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.cli_diff import diff_commands
from ansible_collections.ethercluster.routing.plugins.module_utils.platforms.render import render_configs
from ansible_collections.ethercluster.routing.plugins.module_utils.report.outputs import run_plan

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "unit" / "fixtures"
CASE_SECONDS = 10  # per case, and per entry point of a topology case
RSS_GROWTH_MAX = 1536 * 1024  # KiB: the process may grow by 1.5 GiB over a whole campaign
PLAN_ARGS = dict({field: None for field in FIELDS}, settings=None)


class Timeout(BaseException):
    """A case ran longer than CASE_SECONDS (a BaseException: no ``except
    Exception`` of the code under test may swallow it)."""


def _alarm(_signum, _frame):
    raise Timeout()


class Campaign:
    """Runs cases one by one under a time bound and tallies the outcomes."""

    def __init__(self):
        self.outcomes = defaultdict(Counter)
        self.failures = []
        self.slowest = (0.0, None)
        self.rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def run(self, case, check):
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(CASE_SECONDS)
        start = time.perf_counter()
        try:
            outcome = check(case)
        except Timeout:
            outcome = None
            self.failures.append("%s: took more than %d s" % (case.name, CASE_SECONDS))
        except AssertionError as exc:
            outcome = None
            self.failures.append("%s: %s" % (case.name, str(exc)[:600]))
        except Exception as exc:  # pylint: disable=broad-exception-caught
            outcome = None
            self.failures.append("%s: traceback: %s: %s" % (case.name, type(exc).__name__, str(exc)[:300]))
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        elapsed = time.perf_counter() - start
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, case.name)
        self.outcomes[case.kind][outcome or "FAILED"] += 1

    def run_all(self, cases, check, title):
        for case in cases:
            self.run(case, check)
        self.report("%s (%d)" % (title, len(cases)))

    def report(self, title):
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - self.rss_before
        seconds, name = self.slowest
        lines = ["%s: slowest case %s (%.2f s), peak RSS grew %d MiB" % (title, name, seconds, grown // 1024)]
        lines += ["  %-40s %s" % (kind, dict(counts)) for kind, counts in sorted(self.outcomes.items())]
        print("\n".join(lines))
        assert not self.failures, "%d of %d cases failed:\n%s" % (
            len(self.failures), sum(sum(c.values()) for c in self.outcomes.values()), "\n".join(self.failures[:40]))
        assert grown < RSS_GROWTH_MAX, "peak RSS grew by %d MiB" % (grown // 1024)


def write_case(directory, case, suffix=".yml"):
    path = directory / (case.name.replace("/", "_")[:80] + ("" if case.name.endswith(".yml") else suffix))
    if callable(case.content):
        case.content(path)
    elif isinstance(case.content, bytes):
        path.write_bytes(case.content)
    else:
        path.write_text(case.content, encoding="utf-8", errors="surrogatepass")
    return str(path)


def assert_names(message, source, case):
    assert message.startswith(source), "the refusal does not start with the file: %r" % message[:300]
    if case.names:
        assert any(name in message for name in case.names), \
            "the refusal names none of %s: %r" % (case.names, message[:400])


# ------------------------------------------------------------- topologies
def check_topology(directory):
    def check(case):
        path = write_case(directory, case)
        # the inventory plugin's loader, without its catch-all
        try:
            topology = topology_from_data(parse_yaml(read_text(path), path), path)
        except TopologyError as exc:
            assert_names(str(exc), path, case)
            refused = str(exc)
        else:
            assert isinstance(topology, Topology)
            refused = None
        # topology_info: the same answer (each entry point gets its own CASE_SECONDS)
        signal.alarm(CASE_SECONDS)
        try:
            load_topology(path)
            assert refused is None, "load_topology accepted what the inventory loader refused"
        except TopologyError as exc:
            assert str(exc) == refused, "load_topology: %r, inventory: %r" % (str(exc)[:200], refused)
        # the plan action's steps
        signal.alarm(CASE_SECONDS)
        try:
            settings, _sources = resolve(*settings_layers(path, PLAN_ARGS))
        except EtherclusterError as exc:
            # the fabric: block is read first; its refusal names the file and a fabric.* field
            assert str(exc).startswith(path + ": fabric"), str(exc)[:300]
            return "refused, field named" if refused is not None else "refused, fabric: field named"
        outcome = run_plan(path, source="topology_data", down_links=None, **settings)
        if refused is not None:
            assert not outcome.accepted and str(outcome.error) == refused
            return "refused, field named"
        if outcome.accepted:
            return "accepted, planned"
        assert isinstance(outcome.error, EtherclusterError), repr(outcome.error)
        return "accepted, plan refused"
    return check


def test_topology_campaign(tmp_path):
    cases = topology_cases()
    assert len(cases) >= 1000
    campaign = Campaign()
    campaign.run_all(cases, check_topology(tmp_path), "topology files")
    kinds = campaign.outcomes
    # the classes that can never be a fabric are always refused
    for kind in ("YAML alias bombs", "deep nesting", "huge files", "duplicates"):
        assert set(kinds[kind]) <= {"refused, field named", "refused, fabric: field named"}, (kind, kinds[kind])
    # and the mutations are not all refused: the campaign reaches the planner
    assert sum(counts["accepted, planned"] for counts in kinds.values()) >= 20


# ---------------------------------------------------------------- intents
@pytest.fixture(scope="module", name="intent")
def fixture_intent():
    topology = load_topology(str(FIXTURES / "explicit.yml"))
    return plan(topology, engine="updown", assignment="renamed", broadcast="bounded").intent


def check_intent(directory):
    def check(case):
        path = write_case(directory, case, suffix="" if case.name.endswith(".yml") else ".json")
        try:
            intent = read_intent(path, "src")
        except EtherclusterError as exc:
            assert str(exc).startswith("src: ") and path in str(exc), str(exc)[:300]
            assert_names(str(exc), "src: ", case)
            return "refused, field named"
        try:
            render_configs(intent)
        except EtherclusterError as exc:
            assert "switch" in str(exc), str(exc)
            return "accepted, render refused"
        return "accepted, rendered"
    return check


def test_intent_campaign(tmp_path, intent):
    cases = intent_cases(json.loads(json.dumps(intent)))
    assert len(cases) >= 300
    campaign = Campaign()
    campaign.run_all(cases, check_intent(tmp_path), "intents")
    assert campaign.outcomes["intent: YAML alias bombs"] == Counter({"refused, field named": 1})


# ------------------------------------------------------------ CLI output
def device_texts():
    return {"dell_os6": (FIXTURES / "platforms" / "dell_os6" / "sw0.txt").read_text(),
            "huawei_vrp": (FIXTURES / "platforms" / "huawei_vrp" / "sw0.txt").read_text(),
            "ovs": (FIXTURES / "lab" / "ovs31_sw1_read.txt").read_text()}


def check_cli(texts):
    def check(case):
        platform = case.kind.split(": ")[1]
        try:
            if platform == "ovs":
                ovs.parse_state(case.content)
            else:
                # the running configuration read back before a push, against the candidate
                diff_commands(platform, case.content, texts[platform], None, "sw0")
        except EtherclusterError as exc:
            message = str(exc)
            if platform == "ovs":
                assert "line" in message or "section" in message or "bridge" in message, message[:300]
            else:
                assert message.startswith("switch sw0"), message[:300]
            return "refused, line named"
        return "read"
    return check


def test_device_output_campaign():
    texts = device_texts()
    for platform in ("dell_os6", "huawei_vrp"):
        assert diff_commands(platform, texts[platform], texts[platform], None, "sw0") == []
    assert ovs.parse_state(texts["ovs"])["flows"]
    cases = cli_cases(texts)
    assert len(cases) >= 300
    campaign = Campaign()
    campaign.run_all(cases, check_cli(texts), "device outputs")


# ---------------------------------------------- a sample through the CLI
def test_a_sample_through_ansible_inventory(tmp_path):
    """20 refused cases in one ``ansible-inventory`` run: each source's
    failure is reported naming its file and field, none as a traceback."""
    cases = topology_cases()
    sample = [case for case in cases[::len(cases) // 40] if not callable(case.content)][:20]
    paths = []
    for case in sample:
        path = write_case(tmp_path, case)
        with open(path, "rb") as handle:
            head = handle.read()
        if b"plugin: ethercluster.routing.topology" not in head:
            with open(path, "wb") as handle:
                handle.write(b"plugin: ethercluster.routing.topology\n" + head)
        paths.append(path)
    expected = {}
    for path, case in zip(paths, sample):
        try:
            topology_from_data(parse_yaml(read_text(path), path), path)
        except TopologyError as exc:
            expected[path] = str(exc).splitlines()[0][:60]
    assert len(expected) >= 10
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".build"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_INVENTORY_ENABLED="ethercluster.routing.topology")
    args = [str(Path(sys.executable).parent / "ansible-inventory"), "--list"]
    for path in expected:
        args += ["-i", path]
    proc = subprocess.run(args, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300, check=False)
    stderr = " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr and "probably a bug" not in proc.stderr
    assert "cannot load the topology" not in stderr
    for path, first in expected.items():
        assert " ".join(first.split()) in stderr, (path, first, proc.stderr[-3000:])


# ------------------------------------------- regressions: the bugs it found
def _topology_file(tmp_path, fabric):
    path = tmp_path / "topo.yml"
    path.write_text("switches: {sw0: {}, sw1: {}}\nlinks: [{a: 'sw0:1', b: 'sw1:1'}]\nfabric: %s\n" % fabric)
    return str(path)


@pytest.mark.parametrize("fabric, message", [
    ("{vlan_range: [-.inf, 1]}", r"fabric\.vlan_range: must be \[first, last\]"),  # was OverflowError
    ("{max_broadcast_copies: '%s'}" % ("9" * 5000), r"fabric\.max_broadcast_copies: must be a whole number"),  # ValueError
])
def test_settings_refuse_numbers_int_cannot_make(tmp_path, fabric, message):
    path = _topology_file(tmp_path, fabric)
    with pytest.raises(EtherclusterError, match=r"^%s: %s" % (path, message)):
        settings_layers(path, PLAN_ARGS)


def test_a_static_entry_whose_mac_is_a_list_is_a_schema_problem(tmp_path, intent):
    bad = json.loads(json.dumps(intent))
    bad["switches"]["sw0"]["static_macs"][0]["mac"] = ["02:00:00:00:00:01"]  # was TypeError: unhashable
    path = tmp_path / "intent.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(EtherclusterError, match=r"switches\.sw0\.static_macs\[0\]: mac: \['02"):
        read_intent(str(path), "src")


@pytest.mark.parametrize("platform, line", [
    ("dell_os6", "switchport general pvid %s"), ("dell_os6", "speed %s"),
    ("dell_os6", "mac address-table aging-time %s"), ("huawei_vrp", " port hybrid pvid vlan %s"),
    ("huawei_vrp", "mac-address aging-time %s"), ("huawei_vrp", "vlan %s"),
])
def test_cli_parsers_refuse_numbers_int_cannot_make(platform, line):
    text = device_texts()[platform]
    interface = {"dell_os6": "interface Gi1/0/1\n", "huawei_vrp": "interface GigabitEthernet0/0/1\n"}[platform]
    running = interface + line % ("9" * 5000) + "\n"  # was ValueError (int() past 4,300 digits)
    with pytest.raises(EtherclusterError, match=r"^switch sw0: line 2: '9{20}\.\.\.' is not a number"):
        diff_commands(platform, running, text, None, "sw0")
    with pytest.raises(EtherclusterError, match=r"is not a number this parser reads"):
        diff_commands(platform, interface + line % "\u0663" + "\n", text, None, "sw0")


def test_ovs_ports_refuse_a_huge_port_number():
    text = device_texts()["ovs"].replace(" 1(", " %s(" % ("1" * 5000), 1)  # was ValueError
    assert text != device_texts()["ovs"]
    with pytest.raises(EtherclusterError, match=r"^ports line \d+: port number 1{12}\.\.\. is not an OpenFlow port"):
        ovs.parse_state(text)


@pytest.mark.parametrize("platform, line", [("dell_os6", "switchport general allowed vlan add 1-4094 tagged"),
                                            ("huawei_vrp", " port hybrid tagged vlan 1 to 4094")])
def test_vlan_lists_of_every_vlan_repeated_are_read_in_linear_time(platform, line):
    text = device_texts()[platform]
    interface = {"dell_os6": "interface Gi1/0/1\n", "huawei_vrp": "interface GigabitEthernet0/0/1\n"}[platform]
    mode = {"dell_os6": "switchport mode general\n", "huawei_vrp": " port link-type hybrid\n"}[platform]
    # was quadratic: each line filtered 4,094 VLANs against a list of 4,094 (about 5 s per 100 lines,
    # so 300 lines ran past the campaign's hang bound); linear now: a fraction of a second
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        commands = diff_commands(platform, interface + mode + (line + "\n") * 300, text, None, "sw0")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert commands


def test_entries_are_counted_before_building_and_merge_keys_are_not_entries(monkeypatch):
    monkeypatch.setattr(input_limits, "MAX_HOSTS", 2)
    host = "{switch: a, port: 1, mac: 02:00:00:00:00:01}"
    merged = "switches: {a: {}}\nd: &d {h0: %s}\nhosts: {<<: *d, h1: %s}\n" % (host, host.replace(":01}", ":02}"))
    assert input_limits.measure_yaml(merged, "t.yml", count_entries=True)
    with pytest.raises(TopologyError, match=r"^t\.yml: hosts: 3 entries, more than the 2 a topology may have"):
        input_limits.measure_yaml(merged.replace("h1: ", "h2: %s, h3: %s, h1: " % (host, host)), "t.yml",
                                  count_entries=True)
    # merged entries are counted once built (check_counts)
    with pytest.raises(TopologyError, match=r"^t\.yml: hosts: 3 entries"):
        topology_from_data(parse_yaml(merged.replace("{h0: ", "{h2: %s, h0: " % host), "t.yml"), "t.yml")
    # an intent's switches are not counted (count_entries is for topology files)
    assert input_limits.measure_yaml("hosts: {a: 1, b: 2, c: 3}\n", "i.yml")
