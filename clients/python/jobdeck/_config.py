"""Where the client finds its server and token — the same rules as the ``jobdeck`` CLI (docs/cli.md).

- Server: the ``url`` argument, else ``JOBDECK_URL``, else the local server
  ``http://$HOST:$PORT`` (default ``http://127.0.0.1:3000``; a wildcard HOST is reached on
  127.0.0.1). A URL without a scheme gets ``http://``.
- Token: the ``token`` argument, else ``JOBDECK_TOKEN``, else the local server's token file
  ``$JOBDECK_HOME/token`` (default ``~/.jobdeck/token``), else none.
"""
from __future__ import annotations

import os
import re
from typing import Mapping, Optional, Tuple
from urllib.parse import urlsplit

from .errors import BadRequestError


def resolve_url(url: Optional[str], env: Mapping[str, str]) -> str:
    """The server's base URL without a trailing slash.

    :raises BadRequestError: the value is not an http(s) URL.
    """
    raw = (url or "").strip() or env.get("JOBDECK_URL", "").strip()
    source = "url" if (url or "").strip() else "JOBDECK_URL"
    if not raw:
        host = env.get("HOST", "").strip() or "127.0.0.1"
        if host in ("0.0.0.0", "::", "[::]"):
            host = "127.0.0.1"
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        raw = f"http://{host}:{env.get('PORT', '').strip() or '3000'}"
        source = "HOST/PORT"
    elif not re.match(r"^[a-z][a-z0-9+.-]*://", raw, re.I):
        raw = f"http://{raw}"
    try:
        u = urlsplit(raw)
        u.port  # noqa: B018 — raises ValueError for a bad port
    except ValueError as err:
        raise BadRequestError(f'{source}: not a URL: "{raw}"') from err
    if u.scheme not in ("http", "https") or not u.hostname:
        raise BadRequestError(f'{source}: expected an http:// or https:// URL, got "{raw}"')
    return raw.rstrip("/")


def local_token_path(env: Mapping[str, str]) -> str:
    """``$JOBDECK_HOME/token``, default ``~/.jobdeck/token`` (what a local server writes)."""
    home = env.get("JOBDECK_HOME") or os.path.join(os.path.expanduser("~"), ".jobdeck")
    return os.path.join(os.path.abspath(home), "token")


def resolve_token(token: Optional[str], env: Mapping[str, str]) -> Tuple[Optional[str], str]:
    """The token and what to say when the server refuses it (where it came from)."""
    if token and token.strip():
        return token.strip(), "token given to JobdeckClient refused"
    if env.get("JOBDECK_TOKEN", "").strip():
        return env["JOBDECK_TOKEN"].strip(), "token from $JOBDECK_TOKEN refused"
    path = local_token_path(env)
    try:
        with open(path, encoding="utf-8") as f:
            local = f.read().strip()
        if local:
            return local, f"token from {path} refused (that server uses another token: set JOBDECK_TOKEN, or JOBDECK_HOME to its data folder)"
    except OSError:
        pass
    return None, f"no token found at {path} (set JOBDECK_TOKEN or JOBDECK_HOME)"
