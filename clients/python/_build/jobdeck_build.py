"""The package's build backend (PEP 517, PEP 660), on the standard library alone.

``pip install ./clients/python`` then needs nothing from a package index — not even setuptools —
so it installs offline, anywhere. It builds a pure-Python wheel of the ``jobdeck`` folder (its
``.py`` files and ``py.typed``) and an sdist of the project; the metadata comes from
``pyproject.toml``'s ``[project]`` table.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "jobdeck"


def _project() -> Dict[str, object]:
    """The few ``[project]`` keys the metadata needs (a tiny TOML reader: tomllib is 3.11+)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    body = section.group(1) if section else ""
    out: Dict[str, object] = {}
    for key in ("name", "version", "description", "requires-python", "readme"):
        m = re.search(rf'^{key}\s*=\s*"([^"]*)"', body, re.M)
        if m:
            out[key] = m.group(1)
    m = re.search(r"^classifiers\s*=\s*\[(.*?)\]", body, re.S | re.M)
    out["classifiers"] = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    return out


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}", f"Summary: {p.get('description', '')}"]
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    lines += [f"Classifier: {c}" for c in p["classifiers"]]  # type: ignore[union-attr]
    readme = p.get("readme")
    body = ""
    if isinstance(readme, str) and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _dist() -> Tuple[str, str]:
    p = _project()
    return str(p["name"]).replace("-", "_"), str(p["version"])


def _package_files() -> List[str]:
    out = []
    for folder, dirs, files in os.walk(os.path.join(ROOT, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                out.append(os.path.relpath(os.path.join(folder, name), ROOT))
    return out


def _record_line(arc: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def _wheel(wheel_directory: str, files: Dict[str, bytes]) -> str:
    name, version = _dist()
    info = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode("utf-8")
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: jobdeck_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(arc, data) for arc, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files.items():
            z.writestr(zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return filename


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 517: the wheel of the package."""
    files = {}
    for rel in _package_files():
        with open(os.path.join(ROOT, rel), "rb") as f:
            files[rel.replace(os.sep, "/")] = f.read()
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel whose .pth file puts this folder on sys.path."""
    name, _ = _dist()
    return _wheel(wheel_directory, {f"_{name}_editable.pth": (ROOT + "\n").encode("utf-8")})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    """PEP 517: the source archive (the package, its tests, examples and build backend)."""
    name, version = _dist()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git") and not d.endswith(".egg-info"))
            for f in sorted(files):
                full = os.path.join(folder, f)
                tar.add(full, arcname=f"{base}/{os.path.relpath(full, ROOT)}", recursive=False)
        pkg_info = _metadata().encode("utf-8")
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []
