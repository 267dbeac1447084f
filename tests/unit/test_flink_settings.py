"""A Flink user's init file runs: every configuration key Flink documents is carried out or said to have no effect.

shell/flink_keys.py holds the keys Flink 2.3 declares (read from its jars); SET takes each one of them. A key that
means one of our settings sets ours; any other is taken with a one-line notice naming why it has no effect here.
A key Flink does not document is still refused, with the closest key as a hint, so a typo never passes quietly.
"""

from __future__ import annotations

import pytest

from shell import flink_settings
from shell.config import SETTINGS, Settings, check_setting, read_config_file, setting_key
from shell.errors import OptionError
from shell.flink_keys import KEYS
from shell.results import Message
from shell.session import Session, SessionOptions
from shell.sql import statements as st

pytestmark = pytest.mark.unit
# the families of keys a SQL user sets (as opposed to the cluster's): each must have a reason of its own
SQL_FAMILIES = ("table.", "execution.", "state.", "pipeline.", "sql-client.", "python.", "restart-strategy")


def test_every_documented_flink_key_is_ours_or_has_a_reason():
    assert len(KEYS) > 1000
    for key in KEYS:
        ours = setting_key(key) in SETTINGS
        why = flink_settings.no_effect(key)
        assert ours or why, key
        if not ours and key.startswith(SQL_FAMILIES):
            assert why != flink_settings.CLUSTER, f"{key}: a SQL user's key needs its own reason"


def test_a_key_with_no_effect_is_taken_with_any_value_and_a_notice():
    for key in sorted(k for k in KEYS if setting_key(k) not in SETTINGS):
        assert check_setting(key, "some value") == "some value", key
        notice = Settings().set(key, "x")
        assert notice.startswith(f"'{key}' is a Flink setting with no effect here: ") and "\n" not in notice, key


@pytest.mark.parametrize(("flink", "ours", "value"), [
    ("table.exec.resource.default-parallelism", "parallelism.default", "4"),
    ("restart-strategy", "restart-strategy.type", "fixed-delay"),
    ("parallelism.default", "parallelism.default", "3"),
])
def test_a_flink_name_of_one_of_our_settings_sets_ours(flink, ours, value):
    settings = Settings()
    assert settings.set(flink, value) is None
    assert settings.get(ours) == value
    if ours == "parallelism.default":
        assert settings.spark_conf()["spark.sql.shuffle.partitions"] == value  # carried out, not only stored
    settings.reset(flink)
    assert settings.get(ours) == SETTINGS[ours].default  # RESET under the Flink name resets ours


def test_a_key_flink_does_not_document_is_refused_with_the_closest_key():
    with pytest.raises(OptionError) as refused:
        check_setting("table.exec.mini-batch.enabeld", "true")
    assert "unknown setting 'table.exec.mini-batch.enabeld'" in str(refused.value.message)
    assert "table.exec.mini-batch.enabled" in (refused.value.hint or "")
    with pytest.raises(OptionError):  # our own checks still hold for the keys we carry out
        check_setting("execution.runtime-mode", "batch")


def test_set_says_why_in_one_warning_line(tmp_path):
    session = Session(SessionOptions(home=tmp_path / "home"))
    try:
        result = session.execute(st.Set(key="table.exec.mini-batch.enabled", value="true"))
        assert isinstance(result, Message) and result.level == "warning" and "\n" not in result.text
        assert result.text.startswith("Session property has been set; 'table.exec.mini-batch.enabled' is a Flink")
        assert session.settings.get("table.exec.mini-batch.enabled") == "true"
    finally:
        session.close()


def test_an_init_file_of_flink_settings_warns_once_per_key_and_loses_nothing(tmp_path):
    path = tmp_path / "config.properties"
    path.write_text("table.exec.mini-batch.enabled=true\nstate.backend.type=rocksdb\n"
                    "table.exec.resource.default-parallelism=4\ntable.exec.mini-batch.enabeld=true\n")
    warnings: list[str] = []
    pairs = read_config_file(path, warnings.append)
    assert pairs == {"table.exec.mini-batch.enabled": "true", "state.backend.type": "rocksdb",
                     "parallelism.default": "4"}
    assert [w.split(": ", 1)[0] for w in warnings] == [f"{path}:1", f"{path}:2", f"{path}:4"]
    assert "no effect here" in warnings[0] and "unknown setting" in warnings[2]


def test_a_key_carried_out_in_part_is_set_with_a_notice_of_what_it_leaves_out():
    settings = Settings()
    notice = settings.set("table.exec.state.ttl", "1 h")
    assert settings.get("table.exec.state.ttl") == "1 h"
    assert "keyed join" in notice and "aggregations" in notice and "keep their state" in notice
    assert settings.set("table.local-time-zone", "UTC") is None  # one carried out in full says nothing


def test_a_ttl_of_zero_is_off_and_says_nothing():
    assert Settings().set("table.exec.state.ttl", "0") is None
    assert Settings().set("table.exec.state.ttl", "0 ms") is None
