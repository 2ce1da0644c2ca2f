"""Packing a local folder for upload, as ``jobdeck launch`` does (docs/spec.md "workdir", lib/cli/pack.ts).

A gzip'd tar of the folder's files, without ``.git`` and what its ``.gitignore`` and
``.skyignore`` files exclude (the root's and every sub-folder's, git's pattern rules). Symbolic
links are kept as links when they are relative and stay inside the folder; any other link, and
any socket, pipe or device, is refused, naming it. The archive is at most
``JOBDECK_UPLOAD_MAX_BYTES`` bytes compressed (default 100 MiB; the server reads the same
variable). The server checks the same entry rules again (POST /api/uploads).

Also here: finding the relative ``workdir`` and the local ``file_mounts`` sources a job YAML
names. The standard library has no YAML parser, so they are read from the top-level keys of each
document written in block style (``workdir: .``, ``file_mounts:`` then one ``target: source``
per indented line) — how job files are written; pass ``workdir=`` to name a folder otherwise.
"""
from __future__ import annotations

import gzip
import io
import os
import posixpath
import re
import stat
import tarfile
from typing import Dict, List, Mapping, Optional, Pattern, Tuple

from .errors import BadRequestError

#: Default of JOBDECK_UPLOAD_MAX_BYTES (bytes, compressed).
DEFAULT_UPLOAD_MAX_BYTES = 100 * 1024 * 1024
_IGNORE_FILES = (".gitignore", ".skyignore")


def upload_cap(env: Mapping[str, str]) -> int:
    """JOBDECK_UPLOAD_MAX_BYTES (bytes). :raises BadRequestError: set and not a positive integer."""
    raw = env.get("JOBDECK_UPLOAD_MAX_BYTES", "")
    if raw.strip() == "":
        return DEFAULT_UPLOAD_MAX_BYTES
    if not raw.strip().isdigit() or int(raw) <= 0:
        raise BadRequestError(f"JOBDECK_UPLOAD_MAX_BYTES must be a positive integer (bytes), got {raw!r}")
    return int(raw)


def _translate(pat: str) -> str:
    """A gitignore glob (without its anchoring slash) as a regular expression body."""
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if pat.startswith("**", i) and (i == 0 or pat[i - 1] == "/") and (i + 2 == n or pat[i + 2] == "/"):
            if i + 2 == n:
                out.append(".*")
                i += 2
            else:
                out.append("(?:.*/)?")
                i += 3
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pat[i]))
        elif c == "[":
            j = pat.find("]", i + 2 if pat[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pat[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class IgnoreRules:
    """The patterns of one folder's ignore files, git's rules: the last matching pattern wins, ``!`` re-includes, a trailing ``/`` matches folders only, a ``/`` before the end anchors it to the folder."""

    def __init__(self, text: str) -> None:
        self.rules: List[Tuple[Pattern[str], bool, bool]] = []
        for line in text.splitlines():
            if not line.endswith("\\ "):
                line = line.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            elif line.startswith("\\!") or line.startswith("\\#"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            body = _translate(line.lstrip("/"))
            rx = re.compile(("^" if anchored else "^(?:.*/)?") + body + "$")
            self.rules.append((rx, negate, dir_only))

    def ignores(self, rel: str, is_dir: bool) -> bool:
        """True when path ``rel`` (relative to the rules' folder, ``/``-separated) is excluded."""
        verdict = False
        for rx, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if rx.match(rel):
                verdict = not negate
        return verdict


def _rules_of(root: str, rel: str) -> Optional[Tuple[str, IgnoreRules]]:
    text = ""
    for name in _IGNORE_FILES:
        try:
            with open(os.path.join(root, rel, name), encoding="utf-8") as f:
                text += f.read() + "\n"
        except FileNotFoundError:
            pass
    return (rel, IgnoreRules(text)) if text.strip() else None


def _walk(root: str, rel: str, rules: List[Tuple[str, IgnoreRules]], out: List[str], label: str) -> None:
    own = _rules_of(root, rel)
    all_rules = rules + [own] if own else rules
    for name in sorted(os.listdir(os.path.join(root, rel))):
        if name == ".git":
            continue
        p = f"{rel}/{name}" if rel else name
        st = os.lstat(os.path.join(root, p))
        is_dir = stat.S_ISDIR(st.st_mode)
        if any(r.ignores(p if base == "" else p[len(base) + 1 :], is_dir) for base, r in all_rules):
            continue
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(os.path.join(root, p))
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(p), target))
            if os.path.isabs(target) or resolved == ".." or resolved.startswith("../"):
                raise BadRequestError(
                    f"{label}: the link {p} -> {target} points outside the folder; only relative links inside it are uploaded (copy the file in, or add the link to .skyignore)"
                )
            out.append(p)
        elif is_dir:
            out.append(p + "/")
            _walk(root, p, all_rules, out, label)
        elif stat.S_ISREG(st.st_mode):
            out.append(p)
        else:
            raise BadRequestError(f"{label}: {p} is not a file, folder or link (a socket, pipe or device cannot be uploaded; add it to .skyignore)")


def _tar(cwd: str, entries: List[str], max_bytes: int, label: str) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for e in entries:
            info = tar.gettarinfo(os.path.join(cwd, e.rstrip("/")), arcname=e.rstrip("/") or ".")
            # Portable, like the CLI's archive: no owner, group or device numbers.
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            # A file with several hard links goes in as a copy each time, as the CLI packs it:
            # the server accepts no hard-link entry (docs/spec.md "workdir").
            if info.islnk():
                info.type, info.linkname = tarfile.REGTYPE, ""
                info.size = os.lstat(os.path.join(cwd, e)).st_size
            if info.isreg():
                with open(os.path.join(cwd, e), "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    data = gzip.compress(raw.getvalue(), compresslevel=6, mtime=0)
    if len(data) > max_bytes:
        raise BadRequestError(
            f"{label}: the upload is {len(data)} bytes (compressed); the limit is {max_bytes} bytes (JOBDECK_UPLOAD_MAX_BYTES) — add large files to .skyignore or raise the limit"
        )
    return data


def pack_folder(folder: str, max_bytes: int, label: str) -> Tuple[bytes, List[str]]:
    """The gzip'd tar of ``folder`` and the paths it holds (folders end in ``/``).

    :raises BadRequestError: not a folder, a link out of it, a special file, or over ``max_bytes``.
    """
    if not os.path.isdir(folder):
        raise BadRequestError(f"{label}: {folder} {'is not a folder' if os.path.exists(folder) else 'does not exist'}")
    entries: List[str] = []
    _walk(folder, "", [], entries, label)
    return _tar(folder, entries or ["."], max_bytes, label), entries


def pack_file(path: str, max_bytes: int, label: str) -> Tuple[bytes, List[str]]:
    """An archive holding the one file ``path`` under its name. :raises BadRequestError: like :func:`pack_folder`."""
    if not os.path.isfile(path):
        raise BadRequestError(f"{label}: {path} {'is not a regular file' if os.path.exists(path) else 'does not exist'}")
    name = os.path.basename(path)
    return _tar(os.path.dirname(os.path.abspath(path)), [name], max_bytes, label), [name]


def _scalar(v: str) -> str:
    v = re.sub(r"\s+#.*$", "", v).strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1]
    return v


def _documents(yaml_text: str) -> List[List[str]]:
    docs: List[List[str]] = [[]]
    for line in yaml_text.splitlines():
        if re.match(r"^---(\s|$)", line):
            docs.append([])
        elif not line.startswith("..."):
            docs[-1].append(line)
    return docs


def is_relative_workdir(v: str) -> bool:
    """True for a workdir that names an uploaded folder (lib/jobs/spec isRelativeWorkdir)."""
    return not v.startswith("/") and v != "~" and not v.startswith("~/")


def relative_workdir(yaml_text: str, base: str) -> Optional[Tuple[str, str]]:
    """(absolute folder, as written) of the one relative ``workdir`` the documents name, or None.

    :raises BadRequestError: two tasks name different relative folders (one job uploads one).
    """
    found: Optional[Tuple[str, str]] = None
    for doc in _documents(yaml_text):
        for line in doc:
            m = re.match(r"^workdir:(.*)$", line)
            w = _scalar(m.group(1)) if m else ""
            if not w or not is_relative_workdir(w):
                continue
            d = os.path.normpath(os.path.join(base, w))
            if found and found[0] != d:
                raise BadRequestError(f"the tasks name different relative workdirs ({found[1]}, {w}); one job uploads one folder — give them the same workdir")
            found = found or (d, w)
    return found


def local_file_mounts(yaml_text: str, base: str) -> Dict[str, str]:
    """target → absolute local source of the documents' ``file_mounts`` (URLs left to the server).

    :raises BadRequestError: two tasks mount different sources at one target.
    """
    out: Dict[str, str] = {}
    for doc in _documents(yaml_text):
        inside = False
        for line in doc:
            if re.match(r"^file_mounts:\s*(#.*)?$", line):
                inside = True
                continue
            if inside and line.strip() and not line[0].isspace():
                inside = False
            m = re.match(r"^\s+(\"[^\"]+\"|'[^']+'|[^:#\s][^:#]*?)\s*:\s+(.+)$", line) if inside else None
            if not m:
                continue
            target, source = _scalar(m.group(1)), _scalar(m.group(2))
            if not source or re.match(r"^[a-z][a-z0-9+.-]*://", source, re.I):
                continue
            src = os.path.expanduser(source) if source == "~" or source.startswith("~/") else os.path.normpath(os.path.join(base, source))
            if target in out and out[target] != src:
                raise BadRequestError(f"file_mounts {target}: the tasks mount different sources there ({out[target]}, {src}); one job uploads one source per target")
            out[target] = src
    return out
