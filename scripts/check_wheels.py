"""Does every pinned package have a wheel for the course's container on both Linux machines?

    python scripts/check_wheels.py [--torch-index-optional] [--python 3.12]

The container (Dockerfile, docs/container.md) is how a Mac or a Windows laptop runs the course:
Linux on aarch64 (Apple silicon) or x86_64 (Intel, Windows). The slim image has no compiler, so
each pin must come as a wheel. This reads each pin's files from the package indexes and picks
the wheel pip would install on a Linux with glibc 2.28 (`pip download --only-binary=:all:` with a
`--platform` for each manylinux level up to 2.28), downloading nothing: PyPI's Linux torch is the
CUDA build, about 5 GB with its NVIDIA packages.

The pins come from where setting up reads them: constraints.txt for the course; for torch,
scripts/setup_env.py's pinned release (the one CI tests; from the CPU index it installs the
newest) and PyTorch's CPU index, where torch comes from. The Python is the Dockerfile's. One
line per package and machine; exit 0 when every pin has its wheels, 1 naming each that has
none, 2 when an index could not be asked. With --torch-index-optional, PyTorch's index out of
reach is reported and torch left unchecked.

Only the standard library and pip's own copy of `packaging` are needed: this runs before the
course is installed.
"""
from __future__ import annotations

import argparse
import html.parser
import importlib.util
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

try:
    from packaging import tags as _tags
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version
except ImportError:  # a bare Python: pip carries the same library
    from pip._vendor.packaging import tags as _tags
    from pip._vendor.packaging.specifiers import InvalidSpecifier, SpecifierSet
    from pip._vendor.packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        parse_sdist_filename,
        parse_wheel_filename,
    )
    from pip._vendor.packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
PYPI = "https://pypi.org/simple"
# glibc 2.28: what torch's Linux wheels need. The container's Debian 12 has 2.36; a wheel for up
# to 2.28 also installs on the WSL distributions still in use (Ubuntu 20.04 has 2.31).
MACHINES = ("aarch64", "x86_64")
GLIBC_MINOR = 28
TIMEOUT = 15


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    index: str

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class Link:
    filename: str
    requires_python: str | None = None


class Unreachable(Exception):
    """The index did not answer (no network, no name resolution, a server error)."""


def setup_env():
    """scripts/setup_env.py as a module: it says where torch comes from."""
    spec = importlib.util.spec_from_file_location("setup_env", ROOT / "scripts" / "setup_env.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_version(dockerfile: Path = ROOT / "Dockerfile") -> str:
    """The container's Python, from the Dockerfile's `ARG PYTHON_VERSION=3.11`."""
    found = re.search(r"^ARG PYTHON_VERSION=(\d+\.\d+)\s*$", dockerfile.read_text(), re.M)
    if found is None:
        raise SystemExit(f"check_wheels: {dockerfile} has no `ARG PYTHON_VERSION=X.Y` line")
    return found.group(1)


def read_pins(constraints: Path, index: str) -> list[Pin]:
    """Every `name==version` of a constraints file; anything else that is not a comment is an
    error, since a range has no one file to check."""
    pins = []
    for number, line in enumerate(constraints.read_text().splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        found = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;,]+)", text)
        if found is None:
            raise SystemExit(f"check_wheels: {constraints.name}:{number}: `{text}` is not a `name==version` pin")
        pins.append(Pin(found.group(1), found.group(2), index))
    return pins


def torch_pin(module=None) -> Pin:
    """The torch release setting up asks for by version (what CI tests), on PyTorch's CPU index:
    PyPI's Linux torch of both machines is the CUDA build."""
    module = module or setup_env()
    pinned = [r for r in module.FALLBACKS if "==" in r]
    if not pinned:
        raise SystemExit("check_wheels: scripts/setup_env.py names no `torch==VERSION` in FALLBACKS")
    name, version = pinned[0].split("==")
    return Pin(name, version, module.CPU_INDEX)


def platforms(machine: str, glibc_minor: int = GLIBC_MINOR) -> list[str]:
    """The platform tags a Linux with this glibc accepts, most specific first (as packaging's
    _manylinux does for the running system). Wheels for aarch64 start at manylinux2014 (2.17)."""
    oldest = 17 if machine == "aarch64" else 5
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    found = []
    for minor in range(glibc_minor, oldest - 1, -1):
        found.append(f"manylinux_2_{minor}_{machine}")
        if minor in legacy:
            found.append(f"{legacy[minor]}_{machine}")
    return found


def supported(python: str, machine: str) -> list:
    """Every wheel tag CPython ``python`` installs on ``machine``, the one pip prefers first."""
    version = tuple(int(part) for part in python.split("."))
    plats = platforms(machine)
    abi = f"cp{version[0]}{version[1]}"
    return [*_tags.cpython_tags(version, abis=[abi], platforms=plats),
            *_tags.compatible_tags(version, abi, platforms=plats)]


class _Anchors(html.parser.HTMLParser):
    """The files of a PEP 503 project page: each <a>'s file name (from its href) and its
    data-requires-python."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[Link] = []

    def handle_starttag(self, tag, attrs):
        if tag != "a":
            return
        attrs = dict(attrs)
        href = attrs.get("href") or ""
        name = urllib.parse.unquote(urllib.parse.urlsplit(href).path.rsplit("/", 1)[-1])
        if name:
            self.links.append(Link(name, attrs.get("data-requires-python")))


def project_url(index: str, name: str) -> str:
    return f"{index.rstrip('/')}/{re.sub(r'[-_.]+', '-', name).lower()}/"


def fetch(url: str) -> str | None:
    """A project page's text; None where the index has no such project."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":  # a local index (pip's --index-url file://...), as pip reads one
        path = Path(urllib.request.url2pathname(parts.path))
        path = path / "index.html" if path.is_dir() else path
        return path.read_text() if path.exists() else None
    request = urllib.request.Request(url, headers={"Accept": "text/html", "User-Agent": "triton-puzzles-check-wheels"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise Unreachable(f"HTTP {error.code}") from error
    except (urllib.error.URLError, OSError) as error:
        raise Unreachable(str(getattr(error, "reason", error))) from error


def links(pin: Pin, fetcher=fetch) -> list[Link] | None:
    page = fetcher(project_url(pin.index, pin.name))
    if page is None:
        return None
    parser = _Anchors()
    parser.feed(page)
    return parser.links


def parsed(filename: str):
    """(version, tags) of a wheel, (version, ()) of a source archive, or None for anything else."""
    try:
        if filename.endswith(".whl"):
            _, version, _, tags = parse_wheel_filename(filename)
            return version, tags
        return parse_sdist_filename(filename)[1], ()
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def runs_on(requires_python: str | None, python: str) -> bool:
    """data-requires-python allows ``python``; an unreadable one is ignored, as pip does."""
    try:
        return not requires_python or SpecifierSet(requires_python).contains(Version(python))
    except InvalidSpecifier:
        return True


def best_wheel(pin: Pin, files: list[Link], python: str, machine: str) -> str | None:
    """The wheel pip would install for ``pin`` (==, so 2.13.0 takes 2.13.0+cpu), or None."""
    ranks = {tag: rank for rank, tag in enumerate(supported(python, machine))}
    wanted = SpecifierSet(f"=={pin.version}")
    best = None
    for link in files:
        found = parsed(link.filename)
        if not found or not found[1] or not wanted.contains(found[0], prereleases=True):
            continue
        if not runs_on(link.requires_python, python):
            continue
        rank = min((ranks[tag] for tag in found[1] if tag in ranks), default=None)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, link.filename)
    return best[1] if best else None


def describe(pin: Pin, files: list[Link], python: str, machine: str) -> str:
    """Why the index has no wheel of this release for ``machine``: no file, only a source archive,
    wheels for other Pythons, or for other machines."""
    wanted = SpecifierSet(f"=={pin.version}")
    mine = [(link, found) for link in files
            if (found := parsed(link.filename)) and wanted.contains(found[0], prereleases=True)]
    if not mine:
        return f"no file of {pin.version} on {pin.index}"
    wheels = [(link, found) for link, found in mine if found[1]]
    if not wheels:
        return f"only a source archive ({mine[0][0].filename}); the container has no compiler"
    if not any(runs_on(link.requires_python, python) for link, _ in wheels):
        return f"its wheels need Python {wheels[0][0].requires_python}"
    here = set(platforms(machine))
    pythons = sorted({tag.interpreter for _, found in wheels for tag in found[1] if tag.platform in here},
                     key=lambda name: (len(name), name))  # cp39 before cp310
    if pythons:
        return f"its wheels for this machine are for {', '.join(pythons)} only"
    machines = sorted({tag.platform for _, found in wheels for tag in found[1]})
    shown = ", ".join(machines[:6]) + (f" and {len(machines) - 6} more" if len(machines) > 6 else "")
    return f"it has wheels only for {shown}"


def check(pins: list[Pin], python: str, machines=MACHINES, fetcher=fetch, out=print,
          optional: frozenset[str] = frozenset()) -> int:
    """Print one line per pin and machine; return the exit status (see the module's text). An
    index in ``optional`` that cannot be reached is a warning; any other, an error."""
    with ThreadPoolExecutor(max_workers=16) as pool:  # an index out of reach costs one TIMEOUT, not one per pin
        def ask(pin):
            try:
                return links(pin, fetcher)
            except Unreachable as error:
                return error
        answers = list(pool.map(ask, pins))
    missing, unreachable, checked = [], [], 0
    width = max(len(str(pin)) for pin in pins)
    for pin, files in zip(pins, answers):
        for machine in machines:
            label = f"{str(pin):<{width}}  {machine:<7}"
            if isinstance(files, Unreachable):
                out(f"  ?   {label}  not checked: {pin.index} could not be reached ({files})")
                unreachable.append(pin)
                continue
            checked += 1
            wheel = best_wheel(pin, files or [], python, machine)
            if wheel:
                out(f"  ok  {label}  {wheel}")
            else:
                why = (f"no project {pin.name} on {pin.index}" if files is None
                       else describe(pin, files, python, machine))
                out(f"  NO  {label}  no wheel for CPython {python} on manylinux_2_{GLIBC_MINOR}_{machine}: {why}")
                missing.append((pin, machine))
    if missing:
        names = ", ".join(f"{pin} ({machine})" for pin, machine in missing)
        out(f"error: no wheel for the container (Python {python}, glibc 2.{GLIBC_MINOR}): {names}. "
            f"The container cannot be built there; pin a release that has one (constraints.txt)")
        return 1
    if unreachable:
        indexes = sorted({pin.index for pin in unreachable})
        count = len({pin.name for pin in unreachable})
        said = f"{count} package{'s' if count > 1 else ''} not checked: could not reach {', '.join(indexes)}"
        if not {pin.index for pin in unreachable} <= optional:
            out(f"error: {said}")
            return 2
        out(f"warning: {said}")
    out(f"{checked} of {len(pins) * len(machines)} package-machine pairs checked: each has a wheel")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch-index-optional", action="store_true",
                        help="if torch's index cannot be reached, say so and check the other pins")
    parser.add_argument("--index-url", default=PYPI, help="the index of constraints.txt's pins (default: PyPI)")
    parser.add_argument("--torch-index-url", default=None, help="torch's index (default: setup_env.py's CPU index)")
    parser.add_argument("--python", default=None, help="X.Y (default: the Dockerfile's; WSL's Ubuntu has 3.10 or 3.12)")
    args = parser.parse_args(argv)
    torch = torch_pin()
    if args.torch_index_url:
        torch = Pin(torch.name, torch.version, args.torch_index_url)
    pins = [torch, *read_pins(ROOT / "constraints.txt", args.index_url)]
    optional = frozenset({torch.index} if args.torch_index_optional else ())
    return check(pins, args.python or python_version(), optional=optional)


if __name__ == "__main__":
    sys.exit(main())
