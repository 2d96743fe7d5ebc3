"""scripts/check_wheels.py, which CI runs against PyPI (.ci/run): here against indexes written to a
temporary folder in PEP 503's format, the one PyPI and PyPI's CPU index serve, so no network is
needed and every answer is known."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from paths import ROOT

spec = importlib.util.spec_from_file_location("check_wheels", ROOT / "scripts" / "check_wheels.py")
check_wheels = importlib.util.module_from_spec(spec)
sys.modules["check_wheels"] = check_wheels  # its dataclasses look their module up
spec.loader.exec_module(check_wheels)

Pin = check_wheels.Pin
SHA = "#sha256=" + "0" * 64


def write_index(folder, projects: dict[str, list]) -> str:
    """A simple index in ``folder``: each project's page lists its files (a name, or a name and
    its data-requires-python), with href forms the real indexes use. Returns its file:// URL."""
    for project, files in projects.items():
        anchors = []
        for entry in files:
            name, requires = (entry, None) if isinstance(entry, str) else entry
            href = "../../packages/ab/cd/" + name.replace("+", "%2B") + SHA
            extra = f' data-requires-python="{requires.replace(">", "&gt;").replace("<", "&lt;")}"' if requires else ""
            anchors.append(f'<a href="{href}"{extra}>{name}</a><br/>')
        page = folder / project
        page.mkdir(parents=True)
        (page / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(anchors) + "\n</body></html>\n")
    return folder.as_uri()


@pytest.fixture
def indexes(tmp_path):
    pypi = write_index(tmp_path / "pypi", {
        "pure": ["pure-1.0-py3-none-any.whl", "pure-1.0.tar.gz"],
        "native": ["native-2.0-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
                   "native-2.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
                   "native-2.0-cp311-cp311-macosx_14_0_arm64.whl"],
        "x86-only": ["x86_only-3.1-cp311-cp311-manylinux2014_x86_64.whl", "x86_only-3.1-cp311-cp311-win_amd64.whl"],
        "sdist-only": ["sdist_only-0.4.tar.gz"],
        "newer-pythons": ["newer_pythons-0.19-cp312-cp312-manylinux_2_17_aarch64.whl",
                          "newer_pythons-0.19-cp313-cp313-manylinux_2_28_aarch64.whl",
                          "newer_pythons-0.19-cp311-cp311-macosx_11_0_arm64.whl"],
        "too-new-glibc": ["too_new_glibc-1.2-cp311-cp311-manylinux_2_34_aarch64.whl",
                          "too_new_glibc-1.2-cp311-cp311-manylinux_2_34_x86_64.whl"],
        "py312-only": [("py312_only-5.0-py3-none-any.whl", ">=3.12")],
        "abi3": ["abi3-7.0-cp39-abi3-manylinux_2_17_aarch64.whl", "abi3-7.0-cp39-abi3-manylinux1_x86_64.whl"],
        "old-release": ["old_release-1.0-py3-none-any.whl", "old_release-0.9-cp311-cp311-manylinux_2_28_aarch64.whl"],
    })
    # PyTorch's CPU index: +cpu local versions, the '+' escaped in the href as download.pytorch.org does.
    cpu = write_index(tmp_path / "cpu", {"torch": [
        "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_aarch64.whl",
        "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
        "torch-2.12.0+cpu-cp311-cp311-manylinux_2_28_aarch64.whl",
    ]})
    return pypi, cpu


def run(pins, **kwargs):
    lines = []
    status = check_wheels.check(pins, "3.11", out=lines.append, **kwargs)
    return status, lines


def line_for(lines, pin, machine):
    [found] = [line for line in lines if line.split()[1:3] == [pin, machine]]
    return found


def test_every_pin_with_wheels_for_both_machines_passes_with_one_line_each(indexes):
    pypi, cpu = indexes
    pins = [Pin("torch", "2.13.0", cpu), Pin("pure", "1.0", pypi), Pin("native", "2.0", pypi), Pin("abi3", "7.0", pypi)]
    status, lines = run(pins)
    assert status == 0
    assert len(lines) == 2 * len(pins) + 1 and lines[-1] == "8 of 8 package-machine pairs checked: each has a wheel"
    # torch==2.13.0 takes the +cpu build, for this Python, on each machine
    assert line_for(lines, "torch==2.13.0", "aarch64").endswith("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_aarch64.whl")
    assert line_for(lines, "torch==2.13.0", "x86_64").endswith("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert line_for(lines, "native==2.0", "aarch64").endswith("manylinux2014_aarch64.whl")
    assert line_for(lines, "pure==1.0", "x86_64").endswith("pure-1.0-py3-none-any.whl")  # never the sdist
    assert line_for(lines, "abi3==7.0", "x86_64").endswith("abi3-7.0-cp39-abi3-manylinux1_x86_64.whl")


@pytest.mark.parametrize("pin, machine, why", [
    (("x86-only", "3.1"), "aarch64", "it has wheels only for manylinux2014_x86_64, win_amd64"),
    (("sdist-only", "0.4"), "x86_64", "only a source archive (sdist_only-0.4.tar.gz); the container has no compiler"),
    (("too-new-glibc", "1.2"), "aarch64", "it has wheels only for manylinux_2_34_aarch64, manylinux_2_34_x86_64"),
    (("py312-only", "5.0"), "x86_64", "its wheels need Python >=3.12"),
    (("old-release", "0.9"), "x86_64", "it has wheels only for manylinux_2_28_aarch64"),
    (("newer-pythons", "0.19"), "aarch64", "its wheels for this machine are for cp312, cp313 only"),
    (("absent", "1.0"), "aarch64", "no project absent on "),
])
def test_a_pin_without_a_wheel_fails_naming_it_the_machine_and_why(indexes, pin, machine, why):
    pypi, _ = indexes
    status, lines = run([Pin(*pin, pypi)])
    assert status == 1
    name = f"{pin[0]}=={pin[1]}"
    assert line_for(lines, name, machine).startswith("  NO ")
    assert f"no wheel for CPython 3.11 on manylinux_2_28_{machine}: {why}" in line_for(lines, name, machine)
    assert lines[-1].startswith("error: no wheel for the container (Python 3.11, glibc 2.28): ")
    assert f"{name} ({machine})" in lines[-1] and "constraints.txt" in lines[-1]


def test_a_release_with_no_file_at_all_says_so(indexes):
    pypi, _ = indexes
    status, lines = run([Pin("pure", "9.9", pypi)])
    assert status == 1 and "no file of 9.9 on file://" in lines[0]


def test_an_index_out_of_reach_fails_unless_it_is_torchs_and_that_one_is_allowed(indexes):
    pypi, cpu = indexes

    def offline_cpu_index(url):
        if url.startswith(cpu):
            raise check_wheels.Unreachable("Name or service not known")
        return check_wheels.fetch(url)

    pins = [Pin("torch", "2.13.0", cpu), Pin("pure", "1.0", pypi)]
    status, lines = run(pins, fetcher=offline_cpu_index)
    assert status == 2 and lines[-1] == f"error: 1 package not checked: could not reach {cpu}"
    assert line_for(lines, "torch==2.13.0", "aarch64").startswith("  ?   ")
    status, lines = run(pins, fetcher=offline_cpu_index, optional=frozenset({cpu}))
    assert status == 0 and lines[-2] == f"warning: 1 package not checked: could not reach {cpu}"
    assert lines[-1] == "2 of 4 package-machine pairs checked: each has a wheel"
    # the other index (PyPI, every other pin) must answer
    def offline(url):
        raise check_wheels.Unreachable("Network is unreachable")

    status, lines = run(pins, fetcher=offline, optional=frozenset({cpu}))
    assert status == 2 and lines[-1] == f"error: 2 packages not checked: could not reach {cpu}, {pypi}"
    # a missing wheel is reported before, and instead of, an index out of reach
    status, _ = run([*pins, Pin("sdist-only", "0.4", pypi)], fetcher=offline_cpu_index, optional=frozenset({cpu}))
    assert status == 1


def test_an_unreachable_server_is_told_apart_from_a_missing_project(tmp_path):
    with pytest.raises(check_wheels.Unreachable):
        check_wheels.fetch("http://127.0.0.1:9/simple/numpy/")  # the discard port: nothing listens
    assert check_wheels.fetch((tmp_path / "nothing").as_uri() + "/") is None


def test_the_platforms_are_those_of_a_glibc_2_28_linux():
    aarch64 = check_wheels.platforms("aarch64")
    assert aarch64[0] == "manylinux_2_28_aarch64" and aarch64[-1] == "manylinux2014_aarch64"
    assert "manylinux_2_17_aarch64" in aarch64 and "manylinux_2_29_aarch64" not in aarch64
    x86_64 = check_wheels.platforms("x86_64")
    assert {"manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"} <= set(x86_64)
    assert not any(tag.startswith("linux_") for tag in aarch64 + x86_64)  # only a local build has those


def test_the_pins_are_those_set_up_installs():
    """constraints.txt's pins on PyPI, torch's from setup_env.py on PyTorch's CPU index (PyPI's
    Linux torch is the CUDA build on both machines), for the Dockerfile's Python."""
    setup_env = check_wheels.setup_env()
    torch = check_wheels.torch_pin(setup_env)
    assert torch == Pin("torch", "2.13.0", setup_env.CPU_INDEX)
    pins = check_wheels.read_pins(ROOT / "constraints.txt", check_wheels.PYPI)
    listed = [line.split("==")[0] for line in (ROOT / "constraints.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert [pin.name for pin in pins] == listed and {"triton", "numpy", "helion"} <= set(listed)
    assert check_wheels.python_version() == "3.11"


def test_a_range_in_the_constraints_is_refused(tmp_path):
    (tmp_path / "constraints.txt").write_text("# a comment\nnumpy==2.4.6  # why\ntriton>=3.6\n")
    with pytest.raises(SystemExit, match=r"constraints.txt:3: `triton>=3.6` is not a `name==version` pin"):
        check_wheels.read_pins(tmp_path / "constraints.txt", check_wheels.PYPI)


def test_main_checks_torch_and_the_constraints_on_the_indexes_given(monkeypatch):
    seen = {}

    def fake_check(pins, python, optional):
        seen.update(pins=pins, python=python, optional=optional)
        return 0

    monkeypatch.setattr(check_wheels, "check", fake_check)
    assert check_wheels.main(["--index-url", "file:///pypi", "--torch-index-url", "file:///cpu", "--torch-index-optional"]) == 0
    assert seen["pins"][0] == Pin("torch", "2.13.0", "file:///cpu")
    assert {pin.index for pin in seen["pins"][1:]} == {"file:///pypi"} and len(seen["pins"]) > 20
    assert seen["python"] == "3.11" and seen["optional"] == {"file:///cpu"}
    check_wheels.main([])
    assert seen["optional"] == frozenset()  # by default every index must answer
