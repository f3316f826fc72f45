"""The kept shell (plugin_utils/connections.py ShellSession, the posix_shell
terminal and cliconf plugins): scripts framed for one interactive POSIX
shell, run against a real ``/bin/sh -i`` read the way network_cli reads it
(until the buffer ends with the prompt, then the prompt's lines dropped and
the text stripped)."""

import os
import re
import select
import subprocess
import threading
import time

import pytest
from ansible.errors import AnsibleConnectionFailure

from ansible_collections.ethercluster.routing.plugins.cliconf import posix_shell as shell_cliconf
from ansible_collections.ethercluster.routing.plugins.module_utils.power.session_pool import answers
from ansible_collections.ethercluster.routing.plugins.plugin_utils.connections import (
    MAX_SHELL_LINE,
    ShellSession,
    SwitchConnectionError,
)
from ansible_collections.ethercluster.routing.plugins.terminal import posix_shell as shell_terminal

PROMPT = shell_terminal.PROMPT


class InteractiveShell:
    """A CliSession stand-in: an interactive ``/bin/sh`` with our prompt;
    ``command(text)`` sends the text and reads until the output ends with
    the prompt, as network_cli does (it stops at the *first* prompt that
    ends what has arrived, so a framing that makes the shell prompt twice
    loses what follows the first)."""

    def __init__(self):
        self.closed = 0
        self.sent = []
        self.proc = None
        self.opened = 0
        self.drop_before = None    # the text of a command that finds its connection gone

    def _open(self):
        # as CliSession: a closed session starts another persistent connection on its next command
        if self.proc is None:
            env = dict(os.environ, PS1=PROMPT, PS2="", ENV="")
            env.pop("BASH_ENV", None)
            self.proc = subprocess.Popen(["/bin/sh", "-i"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, env=env)
            self.opened += 1
            self._read_until_prompt()

    def _read_until_prompt(self, timeout=20.0):
        data = b""
        pattern = shell_terminal.TerminalModule.terminal_stdout_re[0]
        while not pattern.search(data[-256:]):
            ready = select.select([self.proc.stdout], [], [], timeout)[0]
            if not ready:
                raise AnsibleConnectionFailure("no prompt")
            chunk = os.read(self.proc.stdout.fileno(), 256)
            if not chunk:
                raise AnsibleConnectionFailure("closed")
            data += chunk
        return data

    def command(self, text, what=None):
        return self.begin(text, what).result()

    def begin(self, text, what=None):
        # as CliSession.begin: the text sent now, its answer read by result()
        if self.drop_before is not None and self.drop_before in text:
            # as CliSession when the persistent process ended meanwhile: a new one, the command again
            self.drop_before = None
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        self._open()
        self.sent.append(text)
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        return Pending(self)

    def close(self):
        self.closed += 1
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def _masked(self, text):
        return text


class Pending:
    """InteractiveShell's sent command: readable when the shell answers."""

    def __init__(self, shell):
        self.shell = shell

    def fileno(self):
        return self.shell.proc.stdout.fileno()

    def result(self):
        data = self.shell._read_until_prompt().decode()
        lines = [line for line in data.splitlines() if PROMPT.strip() not in line]
        return "\n".join(lines).strip()


@pytest.fixture
def session():
    shell = InteractiveShell()
    yield ShellSession(shell, "sw0", timeout=20)
    shell.close()


def test_a_script_answers_its_standard_output_exactly(session):
    # standard output exactly (network_cli strips leading blanks of the whole answer)
    assert session.run("echo one\necho '  two'\nprintf 'no newline'\n") == "one\n  two\nno newline"
    assert session.run("printf 'x\\n\\n'") == "x\n\n"      # trailing line breaks kept
    assert session.run("true") == ""


def test_output_that_looks_like_a_prompt_does_not_end_the_answer(session):
    # a read's section markers ("### ...") and a line ending in "#" or "$"
    script = "".join("echo '### section %d'\necho 'a#'\necho 'b $'\n" % i for i in range(200))
    assert session.run(script).count("### section") == 200


def test_each_script_runs_in_its_own_shell(session):
    with pytest.raises(SwitchConnectionError, match=r"sw0: write failed with exit code 3: broken"):
        session.run("set -e\necho partial\necho broken >&2\nexit 3\necho never\n", "write")
    # the kept shell is closed after a failure and the next script opens another
    assert session.cli.closed == 1
    assert session.run("echo again") == "again\n"


def test_set_e_and_exit_do_not_end_the_kept_shell(session):
    session.run("set -e\nexit 0\n")
    assert session.run("echo alive") == "alive\n"


def test_here_documents_inside_a_script_and_a_timeout(session):
    script = "cat <<'ETHERCLUSTER_FLOWS'\nflow 1\nflow 2\nETHERCLUSTER_FLOWS\n"
    assert session.run(script) == "flow 1\nflow 2\n"
    if subprocess.run(["timeout", "1", "true"], check=False).returncode == 0:
        with pytest.raises(SwitchConnectionError, match="no answer within 0.5 s"):
            session.run("sleep 5\n", "read", timeout=0.5)


def test_a_line_too_long_for_a_terminal_is_refused_before_anything_is_sent(session):
    with pytest.raises(SwitchConnectionError, match="a line of %d characters" % MAX_SHELL_LINE):
        session.run("echo %s\n" % ("x" * (MAX_SHELL_LINE - 5)))
    assert session.cli.sent == []


def test_the_answer_without_exit_status_is_an_error():
    class Cut:
        closed = 0
        opened = 1

        def command(self, text, what=None):
            if "ec_timeout" in text:
                return "ec_timeout=yes\nec_err=/tmp/x"
            return "half of the output"   # the prompt matched too early

        def begin(self, text, what=None):
            answer = self.command(text, what)
            return type("Answered", (), {"result": lambda _self: answer})()

        def close(self):
            self.closed += 1

        def _masked(self, text):
            return text
    session = ShellSession(Cut(), "sw3")
    with pytest.raises(SwitchConnectionError, match="sw3: read failed: the kept shell's answer has no exit status"):
        session.run("echo x", "read")
    assert session.cli.closed == 1


class FakeConnection:
    def __init__(self):
        self.sent = []


def test_the_terminal_takes_only_its_own_prompt_once_the_shell_is_set_up():
    terminal = shell_terminal.TerminalModule(FakeConnection())
    patterns = terminal.terminal_stdout_re
    login = [b"root@switch:~# ", b"admin@leaf1:~$ ", b"\r\n# "]
    assert all(any(p.search(text) for p in patterns) for text in login)
    sent = []
    terminal._exec_cli_command = sent.append
    terminal.on_open_shell()
    assert sent[0] == b"exec /bin/sh" and b"stty -echo" in sent[1] and PROMPT.encode() in sent[1]
    assert not any(p.search(b"### ethercluster:gap\n0\n###") for p in terminal.terminal_stdout_re)
    assert not any(p.search(text) for p in terminal.terminal_stdout_re for text in login)
    assert any(p.search(b"output\r\n" + PROMPT.encode()) for p in terminal.terminal_stdout_re)
    # the class keeps both (a new connection starts at the login prompt)
    assert len(shell_terminal.TerminalModule.terminal_stdout_re) == 2


def test_the_cliconf_has_no_configuration_mode():
    plugin = shell_cliconf.Cliconf.__new__(shell_cliconf.Cliconf)
    with pytest.raises(ValueError, match="no configuration mode"):
        plugin.edit_config(["x"])
    with pytest.raises(ValueError, match="no configuration to fetch"):
        plugin.get_config()
    assert plugin.get_device_info() == {"network_os": "ethercluster.routing.posix_shell"}
    with pytest.raises(ValueError, match="without prompt"):
        plugin.get("read", prompt="Password:", answer="x")
    assert re.search(r"posix_shell", shell_cliconf.DOCUMENTATION)


def test_a_script_sent_into_a_new_connection_still_runs_and_the_next_sets_the_shell_up(session):
    assert session.run("echo first") == "first\n"
    set_ups = sum("kept shell" in text or "ec_timeout" in text for text in session.cli.sent)
    session.cli.drop_before = "echo second"
    assert session.run("echo second\necho err >&2\n") == "second\n"    # ran in the new shell
    assert session.cli.opened == 2
    assert session.run("echo third") == "third\n"
    assert sum("ec_timeout" in text for text in session.cli.sent) == set_ups + 1
    with pytest.raises(SwitchConnectionError, match="exit code 4: late"):
        session.run("echo late >&2\nexit 4\n", "write")                  # its standard error again


def test_scripts_sent_to_several_shells_before_any_answer_is_read():
    shells = [ShellSession(InteractiveShell(), "sw%d" % number, timeout=20) for number in range(3)]
    try:
        for shell in shells:
            shell.run("true")        # set up
        started = time.monotonic()
        pending = {shell.host: shell.begin("sleep 1; echo %s" % shell.host, "write") for shell in shells}
        assert time.monotonic() - started < 0.5          # nothing waited for an answer
        done = answers(pending)
        assert time.monotonic() - started < 2.5          # the three sleeps ran at once
        assert {host: out for host, (out, error, _seconds) in done.items()} == {
            "sw0": "sw0\n", "sw1": "sw1\n", "sw2": "sw2\n"}
        assert all(error is None and 0.9 < seconds < 2.5 for _out, error, seconds in done.values())
        # a failing script is its switch's error; the shell is closed and the session usable again
        pending = {shell.host: shell.begin("exit 5" if shell.host == "sw1" else "echo ok", "write")
                   for shell in shells}
        done = answers(pending)
        assert isinstance(done["sw1"][1], SwitchConnectionError) and "sw1: write failed with exit code 5" in str(
            done["sw1"][1])
        assert done["sw0"][:2] == ("ok\n", None) and shells[1].cli.closed == 1
        assert shells[1].run("echo again") == "again\n"
    finally:
        for shell in shells:
            shell.close()


def test_a_session_runs_one_script_at_a_time():
    shell = ShellSession(InteractiveShell(), "sw0", timeout=20)
    try:
        pending = shell.begin("sleep 0.5; echo first")
        second = []
        thread = threading.Thread(target=lambda: second.append(shell.run("echo second")))
        thread.start()
        thread.join(0.2)
        assert thread.is_alive()                  # waits for the first script's answer to be taken
        assert pending.result() == "first\n"
        thread.join(20)
        assert second == ["second\n"]
    finally:
        shell.close()
