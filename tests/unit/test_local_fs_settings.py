"""Which Spark settings use the no-fork local file system (shell/engine/local_fs.py), and how they meet the user's."""

from __future__ import annotations

import os

import pytest

from shell.engine import local_fs
from shell.engine.spark import SparkRuntime


@pytest.fixture
def built(monkeypatch, tmp_path) -> str:
    """The jar's path, as if `scripts/jvm-deps localfs` had built it."""
    jar = tmp_path / "jvm" / "localfs" / "streamshell-localfs-1.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"PK")  # the class-data archive's name is made from each jar's size and time
    monkeypatch.setattr(local_fs, "jars", lambda: [str(jar)])
    return str(jar)


def conf_for(master: str, user: dict[str, str], tmp_path) -> dict[str, str]:
    return SparkRuntime(master, user, tmp_path / "spark.log").session_conf()


def test_on_this_machine_hadoop_uses_it_and_both_class_paths_start_with_the_jar(built, tmp_path):
    conf = conf_for("local[2]", {}, tmp_path)
    assert conf["spark.hadoop.fs.file.impl"] == local_fs.FILE_SYSTEM
    assert conf["spark.hadoop.fs.AbstractFileSystem.file.impl"] == local_fs.ABSTRACT_FILE_SYSTEM
    assert conf["spark.driver.extraClassPath"] == conf["spark.executor.extraClassPath"] == built


def test_a_remote_cluster_keeps_hadoops_file_system_but_the_driver_keeps_its_class_path(built, tmp_path):
    conf = conf_for("spark://spark-master.example:7077", {}, tmp_path)
    assert "spark.hadoop.fs.file.impl" not in conf and "spark.executor.extraClassPath" not in conf
    assert conf["spark.driver.extraClassPath"] == built, "the class-data archive was written with the jar first"


def test_the_users_class_paths_follow_the_jar(built, tmp_path):
    user = {"spark.driver.extraClassPath": "/opt/a.jar", "spark.executor.extraClassPath": "/opt/b.jar"}
    conf = conf_for("local[2]", user, tmp_path)
    assert conf["spark.driver.extraClassPath"] == os.pathsep.join([built, "/opt/a.jar"])
    assert conf["spark.executor.extraClassPath"] == os.pathsep.join([built, "/opt/b.jar"])


def test_a_file_system_the_user_chose_is_kept(built, tmp_path):
    conf = conf_for("local[2]", {"spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.LocalFileSystem"}, tmp_path)
    assert conf["spark.hadoop.fs.file.impl"] == "org.apache.hadoop.fs.LocalFileSystem"
    assert "spark.hadoop.fs.AbstractFileSystem.file.impl" not in conf


def test_without_the_jar_nothing_changes(monkeypatch, tmp_path):
    monkeypatch.setattr(local_fs, "jars", lambda: [])
    conf = conf_for("local[2]", {}, tmp_path)
    assert not any(k.startswith("spark.hadoop.fs.") or k.endswith("extraClassPath") for k in conf)


def test_the_users_jvm_options_reach_the_session_after_ours(monkeypatch, tmp_path):
    monkeypatch.setattr(local_fs, "jars", lambda: [])
    conf = conf_for("local[2]", {"spark.driver.extraJavaOptions": "-Dmine=1"}, tmp_path)
    options = conf["spark.driver.extraJavaOptions"].split()
    assert options[-1] == "-Dmine=1" and any(o.startswith("-Dlog4j2.configurationFile=") for o in options)
