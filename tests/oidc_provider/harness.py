"""Fixtures of the single sign-on tests: the OpenID Connect provider of tests/oidc_provider/ in
a process of its own on a loopback port, and Proofmark's settings pointed at it."""

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent.parent
CLIENT_ID = "proofmark-test"
CLIENT_SECRET = "proofmark-test-secret-" + "x" * 20
PASSWORD = "lab-pass-word-1"


@dataclass
class Provider:
    url: str

    def user(self, username: str, groups: list[str], email: str = "") -> str:
        """Makes or changes the provider's user (password PASSWORD); their subject."""
        answer = requests.post(
            f"{self.url}/testing/users/",
            json={
                "username": username,
                "password": PASSWORD,
                "groups": groups,
                "email": email or f"{username}@lab.example",
                "first_name": username.title(),
            },
            timeout=10,
        )
        answer.raise_for_status()
        return answer.json()["sub"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def oidc_provider(live_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("oidc-provider")
    port = _free_port()
    redirect = f"{live_server.url}/accounts/oidc/callback/"
    log = (folder / "provider.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.oidc_provider.serve", str(folder), str(port), redirect]
        + [CLIENT_ID, CLIENT_SECRET],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{url}/o/.well-known/jwks.json", timeout=2).ok:
                break
        except requests.ConnectionError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail("the OIDC provider did not start: " + (folder / "provider.log").read_text())
        time.sleep(0.2)
    yield Provider(url)
    process.terminate()
    process.wait(10)
    log.close()


@pytest.fixture
def sso(settings, oidc_provider):
    """Proofmark configured for the provider, as a deployment's environment would."""
    base = f"{oidc_provider.url}/o"
    settings.OIDC_PROVIDER_NAME = "Lab Login"
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = f"{base}/authorize/"
    settings.OIDC_OP_TOKEN_ENDPOINT = f"{base}/token/"
    settings.OIDC_OP_USER_ENDPOINT = f"{base}/userinfo/"
    settings.OIDC_OP_JWKS_ENDPOINT = f"{base}/.well-known/jwks.json"
    settings.OIDC_ROLE_CLAIM = "groups"
    settings.OIDC_ROLE_MAP = {
        "proofmark-admins": "admin",
        "proofmark-experts": "expert",
        "math-faculty": ["expert", "adjudicator"],
    }
    return oidc_provider
