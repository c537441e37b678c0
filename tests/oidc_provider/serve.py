"""Starts the tests' OpenID Connect provider: `python -m tests.oidc_provider.serve DIR PORT
REDIRECT_URI CLIENT_ID CLIENT_SECRET`. Makes an RS256 key in DIR, migrates its sqlite database,
registers the client (confidential, authorization code, RS256, no consent page), and serves on
127.0.0.1:PORT until stopped."""

import os
import sys
from pathlib import Path


def main(folder: str, port: str, redirect_uri: str, client_id: str, secret: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    Path(folder, "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.environ["PROVIDER_DIR"] = folder
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.oidc_provider.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0)
    Application.objects.create(
        name="Proofmark",
        client_id=client_id,
        client_secret=secret,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uri,
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadedWSGIServer(("127.0.0.1", int(port)), Quiet)
    server.set_app(get_wsgi_application())
    server.serve_forever()


if __name__ == "__main__":
    main(*sys.argv[1:])
