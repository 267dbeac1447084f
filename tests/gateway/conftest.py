"""One `streamshell gateway` for the client and fuzz tests of this folder, on a home of its own."""

from __future__ import annotations

import pytest

from tests.gateway.gateways import start_gateway


@pytest.fixture(scope="session")
def gateway(tmp_path_factory):
    home = tmp_path_factory.mktemp("gateway-home")
    gw = start_gateway(home)
    yield gw
    code = gw.stop()
    assert code == 0, gw.log.read_text()[-3000:]
