"""scripts/services fails clearly and never touches what it did not start.

Why this exists: the e2e fixture and developers rely on scripts/services to say exactly why a
broker cannot start, and on `status`/`stop` to leave foreign processes alone.  These cases need
no running broker and no JVM: each test points STREAMSHELL_SERVICES_DIR at a temporary directory.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "scripts" / "services"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMSHELL_")}
    full_env.update({"STREAMSHELL_SERVICES_DIR": str(tmp_path / "services"),
                     "STREAMSHELL_KAFKA_PORT": str(_free_port()),
                     "STREAMSHELL_KAFKA_CONTROLLER_PORT": str(_free_port()),
                     "STREAMSHELL_PULSAR_PORT": str(_free_port()),
                     "STREAMSHELL_PULSAR_HTTP_PORT": str(_free_port()),
                     "STREAMSHELL_PULSAR_BOOKIE_PORT": str(_free_port())})
    full_env.update(env)
    return subprocess.run([str(SERVICES), *args], cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def test_start_on_a_port_held_by_another_process_fails_with_one_clear_line(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = _run(["start", "kafka"], tmp_path, STREAMSHELL_KAFKA_PORT=str(port))

    assert proc.returncode != 0
    assert proc.stderr.strip() == (
        f"kafka: port {port} on 127.0.0.1 is already in use by another process")
    assert proc.stdout == ""
    assert not (tmp_path / "services" / "kafka" / "kafka.pid").exists()


def test_start_without_the_jvm_bundle_says_how_to_get_it(tmp_path):
    proc = _run(["start", "kafka"], tmp_path, STREAMSHELL_CACHE=str(tmp_path / "empty-cache"))

    assert proc.returncode != 0
    line = proc.stderr.strip()
    assert line.startswith("kafka: JVM bundle missing in ")
    assert "scripts/jvm-deps kafka" in line and "make setup" in line


def test_status_with_nothing_running_exits_3(tmp_path):
    proc = _run(["status"], tmp_path)

    assert proc.returncode == 3
    assert proc.stdout.splitlines() == ["kafka: stopped", "pulsar: stopped"]


def test_stale_pid_file_of_a_foreign_process_is_ignored_and_never_signalled(tmp_path):
    # A pid file left by `kill -9` whose pid now belongs to someone else (here: this test).
    kafka_dir = tmp_path / "services" / "kafka"
    kafka_dir.mkdir(parents=True)
    (kafka_dir / "kafka.pid").write_text(f"{os.getpid()}\n")

    status = _run(["status", "kafka"], tmp_path)
    assert (status.returncode, status.stdout.strip()) == (3, "kafka: stopped")

    stop = _run(["stop", "kafka"], tmp_path)
    assert stop.returncode == 0
    assert stop.stdout.strip() == "kafka: not running (removed stale pid file)"
    assert not (kafka_dir / "kafka.pid").exists()


def test_unknown_broker_is_a_usage_error(tmp_path):
    proc = _run(["status", "redis"], tmp_path)

    assert proc.returncode == 2
    assert "unknown broker(s) redis" in proc.stderr


def test_start_on_a_nearly_full_disk_refuses_with_one_clear_line(tmp_path):
    # No disk here is a pebibyte free, so a reserve of 1 PiB stands for a disk that has filled up.
    proc = _run(["start", "pulsar"], tmp_path, STREAMSHELL_SERVICES_MIN_FREE_MB=str(2**30))

    assert proc.returncode != 0
    line = proc.stderr.strip()
    assert line.startswith("pulsar: only ") and " GiB free on the disk of " in line
    assert line.endswith("(needs 1048576.0 GiB, STREAMSHELL_SERVICES_MIN_FREE_MB); free some space and start again")
    assert not (tmp_path / "services" / "pulsar" / "pulsar.pid").exists()


def _services_module(monkeypatch, tmp_path, **env: str):
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader

    monkeypatch.setenv("STREAMSHELL_SERVICES_DIR", str(tmp_path / "services"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    loader = SourceFileLoader("streamshell_services", str(SERVICES))
    module = module_from_spec(spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_the_bookie_keeps_writing_until_only_the_reserve_is_left(monkeypatch, tmp_path):
    # A big disk shared with other work can be 99% used with gigabytes free; BookKeeper's own limit (a used
    # fraction) would stop the bookie there, so the limit written to its configuration leaves just the reserve.
    import shutil

    total = shutil.disk_usage(tmp_path).total
    reserve_mib = total // 2**20 // 50  # 2% of this disk: a limit of 98% used
    services = _services_module(monkeypatch, tmp_path, STREAMSHELL_SERVICES_MIN_FREE_MB=str(reserve_mib))
    conf = services.Pulsar().standalone_conf()

    limit = 1 - reserve_mib * 2**20 / total
    assert f"\ndiskUsageThreshold={limit:.4f}\n" in conf
    assert f"\ndiskUsageWarnThreshold={limit:.4f}\n" in conf
    assert 0.979 < limit < 0.981


def test_a_reserve_that_is_not_a_number_is_refused(tmp_path):
    proc = _run(["start", "kafka"], tmp_path, STREAMSHELL_SERVICES_MIN_FREE_MB="lots")

    assert proc.returncode != 0
    assert proc.stderr.strip() == "services: STREAMSHELL_SERVICES_MIN_FREE_MB must be a number of MiB, not 'lots'"


# A stand-in broker: a Python child whose command line names a main class, as a JVM's does. Its first launch
# exits with status 3 when `fail_first` holds a number, like a JVM that dies before it is ready; later launches
# listen on the broker's port, which is all its readiness check asks for.
STAND_IN = """
import pathlib, socket, sys, time
left = pathlib.Path(sys.argv[1])
if int(left.read_text() or 0) > 0:
    left.write_text(str(int(left.read_text()) - 1))
    sys.exit(3)
with socket.socket() as s:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[2])))
    s.listen()
    time.sleep(60)
"""


def _stand_in(monkeypatch, tmp_path, failures: int):
    import sys

    services = _services_module(monkeypatch, tmp_path, STREAMSHELL_CACHE=str(tmp_path / "cache"))
    port = _free_port()
    left = tmp_path / "fail_first"
    left.write_text(str(failures))

    class StandIn(services.Broker):
        name = "standin"
        main_class = "streamshell.tests.StandIn"
        client_module, client_package = "os", "os"

        @property
        def ports(self) -> list[int]:
            return [port]

        def command(self, java: str) -> list[str]:
            return [sys.executable, "-c", STAND_IN, str(left), str(port), self.main_class]

        def check_ready(self) -> None:
            pass

    broker = StandIn()
    broker.bundle.mkdir(parents=True)
    (broker.bundle / "stand-in.jar").write_bytes(b"")
    return services, broker


def test_a_broker_that_ends_before_it_is_ready_is_started_once_more_and_says_how_it_ended(
        monkeypatch, tmp_path, capsys):
    services, broker = _stand_in(monkeypatch, tmp_path, failures=1)
    try:
        line, started = broker.start(timeout=30)
    finally:
        broker.stop()

    assert started and line.startswith("standin: started (pid ")
    first = capsys.readouterr().err.strip()
    assert first.startswith("standin: exited with status 3 ") and "s after it was launched, before it was ready on " \
        "127.0.0.1:" in first and first.endswith("; starting it once more")
    assert f"[scripts/services] {first.removesuffix('; starting it once more')}" in (
        broker.dir / "standin.log.1").read_text()


def test_a_broker_that_ends_before_it_is_ready_twice_fails_with_one_line_saying_how(monkeypatch, tmp_path, capsys):
    services, broker = _stand_in(monkeypatch, tmp_path, failures=2)

    with pytest.raises(services.StartError) as failed:
        broker.start(timeout=30)

    assert str(failed.value).startswith("standin: exited with status 3 ")
    assert "\n" not in str(failed.value) and f"(see {broker.dir / 'standin.log'})" in str(failed.value)
    assert not broker.pid_file.exists()
    assert capsys.readouterr().err.count("starting it once more") == 1
