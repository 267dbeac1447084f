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
