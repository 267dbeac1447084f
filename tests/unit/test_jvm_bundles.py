"""Delta Lake stays out of the shell's classpath: its jars are a JVM bundle of their own (jvm/delta/pom.xml) that only
the Delta prototype (benchmarks/changelog_prototypes/delta_ivm.py) loads, never the "spark" bundle that every
streamshell session passes as spark.jars. Reads the poms and the Makefile; no Maven, no Spark."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
POM = "{http://maven.apache.org/POM/4.0.0}"


def artifacts(pom: Path) -> list[tuple[str, str]]:
    """(groupId, artifactId) of every dependency the pom names, managed ones included."""
    root = ET.parse(pom).getroot()
    return [(d.findtext(f"{POM}groupId", ""), d.findtext(f"{POM}artifactId", "")) for d in root.iter(f"{POM}dependency")]


def make_target(name: str) -> list[str]:
    """The recipe lines of one Makefile target."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(rf"^{re.escape(name)}:[^\n]*\n((?:\t[^\n]*\n?)*)", text, re.M)
    assert match, f"no target {name} in the Makefile"
    return [line.strip() for line in match.group(1).splitlines()]


def test_the_spark_bundle_every_session_loads_has_no_delta_lake():
    found = artifacts(ROOT / "jvm" / "spark" / "pom.xml")
    assert ("org.apache.spark", "spark-sql-kafka-0-10_2.13") in found
    assert [a for a in found if a[0] == "io.delta" or "delta" in a[1]] == []


def test_the_delta_prototype_has_a_bundle_of_its_own():
    pom = ROOT / "jvm" / "delta" / "pom.xml"
    assert pom.is_file()
    assert ("io.delta", "delta-spark_4.2_2.13") in artifacts(pom)


def test_only_the_prototype_loads_the_delta_bundle():
    users = sorted(str(p.relative_to(ROOT)) for folder in ("shell", "benchmarks") for p in (ROOT / folder).rglob("*.py")
                   if 'jvm_bundle_jars("delta")' in p.read_text(encoding="utf-8"))
    assert users == ["benchmarks/changelog_prototypes/common.py"]
    common = (ROOT / "benchmarks" / "changelog_prototypes" / "common.py").read_text(encoding="utf-8")
    assert "delta_jars() if delta else ()" in common, "added to spark.jars only for spark_session(delta=True)"
    engine = (ROOT / "shell" / "engine" / "spark.py").read_text(encoding="utf-8")
    # the Kafka connector's jars, the exactly-once Kafka writer (jvm/kafkatx), the JVM's keyed stages; never Delta
    assert re.findall(r'jvm_bundle_jars\("(\w+)"\)', engine) == ["spark", "kafkatx", "stages"]


def test_setup_does_not_resolve_it_and_the_prototypes_target_does():
    setup = " ".join(make_target("setup"))
    assert "jvm-deps" in setup and "delta" not in setup
    assert "scripts/jvm-deps delta" in make_target("bench-delta-ivm")
