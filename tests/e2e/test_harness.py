"""The e2e harness's own checks, which the other tests lean on."""
from conftest import sanitizer_reports


def test_sanitizer_reports_are_found_in_a_log():
    log = "\n".join([
        '{"level":"info","msg":"job done","status":"runtime_error"}',
        "==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020",
        "    #0 0x55 in job_run worker/judge/job.c:700",
        "worker/verdict.c:88:17: runtime error: signed integer overflow",
        "==13==ERROR: LeakSanitizer: detected memory leaks",
    ])
    assert sanitizer_reports(log) == [
        "==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020",
        "worker/verdict.c:88:17: runtime error: signed integer overflow",
        "==13==ERROR: LeakSanitizer: detected memory leaks",
    ]


def test_a_clean_log_has_no_sanitizer_report():
    assert sanitizer_reports('{"msg":"runtime error: none here"}\nready\n') == []
