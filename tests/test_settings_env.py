"""The environment the settings read: every variable documented in the manual's settings
table (docs/settings.md), and the PostgreSQL connection options that follow DB_PREPARE_THRESHOLD."""

import json
import os
import re
import subprocess
import sys

from tests.conftest import ROOT

READS = re.compile(r"""(?:environ\.get\(|environ\[|env_bool\(|env_list\()\s*"([A-Z][A-Z0-9_]*)\"""")


def test_the_manuals_settings_table_names_every_variable_the_settings_read():
    read = set(READS.findall((ROOT / "config" / "settings.py").read_text()))
    assert {"DATABASE_URL", "DB_PREPARE_THRESHOLD", "HTTPS"} <= read  # the pattern finds them
    manual = (ROOT / "docs" / "settings.md").read_text()
    table = manual.split("# Settings (environment)", 1)[1].split("\n\n", 2)[1]
    first_cells = [row.split("|")[1] for row in table.splitlines()[2:]]
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z0-9_]+)`", cell)}
    assert read - documented == set()


def setting_read(name: str, **env):
    """The setting `name` as a new process reads it with `env` over this one's environment."""
    code = f"from django.conf import settings; print(json.dumps(settings.{name}))"
    out = subprocess.run(
        [sys.executable, "-c", f"import json, django; django.setup(); {code}"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def database_options(**env) -> dict:
    return setting_read("DATABASES['default']", **env)


def test_postgresql_binds_on_the_server_and_prepares_unless_told_not_to():
    url = "postgres://u@db.example:5432/pm"
    options = database_options(DATABASE_URL=url)["OPTIONS"]
    assert options == {"server_side_binding": True, "prepare_threshold": 5}
    options = database_options(DATABASE_URL=url, DB_PREPARE_THRESHOLD="off")["OPTIONS"]
    assert options["prepare_threshold"] is None


def test_without_database_url_the_embedded_server_of_the_run_folder_is_used(tmp_path):
    """What `make run` started (core/embedded_db.py wrote its URL in the run folder), else a
    local server; a database other than PostgreSQL is refused by name."""
    assert database_options(DATABASE_URL="", PROOFMARK_RUN_DIR=str(tmp_path))["HOST"] == (
        "127.0.0.1"
    )
    (tmp_path / "database-url").write_text("postgres://postgres@%2Frun%2Fpg/proofmark\n")
    options = database_options(DATABASE_URL="", PROOFMARK_RUN_DIR=str(tmp_path))
    assert (options["HOST"], options["NAME"]) == ("/run/pg", "proofmark")
    refused = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": "sqlite:////tmp/x.sqlite3",
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "PostgreSQL only" in refused.stderr


def test_single_sign_on_settings_from_the_environment():
    assert setting_read("OIDC_ROLE_MAP", OIDC_ROLE_MAP='{"lab-admins": "admin"}') == {
        "lab-admins": "admin"
    }
    assert setting_read("OIDC_RP_CLIENT_ID") == "" and setting_read("PASSWORD_LOGIN") is True
    refused = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "PASSWORD_LOGIN": "false"},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "PASSWORD_LOGIN=false needs single sign-on" in refused.stderr


def test_single_sign_on_refuses_to_start_without_the_providers_endpoints():
    refused = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "OIDC_RP_CLIENT_ID": "x"},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0
    assert "needs OIDC_OP_AUTHORIZATION_ENDPOINT, OIDC_OP_TOKEN_ENDPOINT" in refused.stderr
    assert "OIDC_OP_JWKS_ENDPOINT" in refused.stderr
