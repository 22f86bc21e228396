"""Headless Chromium (Debian's ``chromium``, installed by scripts/ensure-chromium.sh) for the
end-to-end page tests: a screenshot and the DOM as Chromium parsed it."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars")


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None and Path("/usr/bin/chromium").exists():
        exe = "/usr/bin/chromium"
    if exe is None:
        pytest.skip("Chromium is not installed: run scripts/ensure-chromium.sh (apt-get install chromium)")
    return exe


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=True)


def screenshot(url: str, out: Path, size: tuple[int, int], profile: Path) -> Path:
    _run([f"--screenshot={out}", f"--window-size={size[0]},{size[1]}", url], profile)
    return out


def dump_dom(url: str, profile: Path) -> str:
    return _run(["--dump-dom", url], profile).stdout


def png_facts(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the image data): a blank page has very few."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return width, height, len(set(zlib.decompress(idat)))
