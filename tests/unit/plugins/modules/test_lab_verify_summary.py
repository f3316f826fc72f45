"""lab_verify's summary line: the counts, the failed checks, and the notes
of checks that passed only after a retry (the ping check's quiet round)."""

from ansible_collections.ethercluster.routing.plugins.modules.lab_verify import summary_line


def _check(name, ok=True, note=None):
    check = {"name": name, "ok": ok, "detail": "", "problems": []}
    if note:
        check["note"] = note
    return check


def test_the_summary_names_passed_and_failed_checks():
    result = {"checks": [_check("stp_off"), _check("ping", ok=False), _check("tcp")]}
    assert summary_line(result) == "2/3 checks passed: stp_off, tcp; FAILED: ping"


def test_the_summary_shows_a_passed_checks_note():
    note = "3 pairs answered only in the quiet round (timeouts under load)"
    result = {"checks": [_check("stp_off"), _check("ping", note=note)]}
    assert summary_line(result) == "2/2 checks passed: stp_off, ping (ping: %s)" % note
