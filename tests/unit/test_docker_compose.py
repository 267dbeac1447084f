"""docker-compose.yml cannot be started here (no Docker engine), so check what users would get from it."""

from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.unit

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


@pytest.mark.parametrize(
    "service, image_part, ports",
    [
        ("redpanda", "redpanda", {"9092:9092"}),
        ("redpanda-console", "console", {"8088:8080"}),
        ("pulsar", "apachepulsar/pulsar", {"6650:6650", "8080:8080"}),
        ("postgres", "postgres", {"5432:5432"}),
    ],
)
def test_service_image_and_ports(services, service, image_part, ports):
    spec = services[service]
    assert image_part in spec["image"]
    assert ":" in spec["image"], "images are pinned to a tag"
    assert ports <= set(spec["ports"])


def test_ports_match_the_local_brokers(services):
    """Examples use localhost:9092 and pulsar://localhost:6650 with or without Docker."""
    published = {p.split(":")[0] for s in services.values() for p in s.get("ports", [])}
    assert {"9092", "6650", "8080"} <= published


def test_redpanda_advertises_localhost(services):
    command = " ".join(services["redpanda"]["command"])
    assert "external://localhost:9092" in command


def test_pulsar_runs_without_functions_worker(services):
    assert "--no-functions-worker" in services["pulsar"]["command"]
