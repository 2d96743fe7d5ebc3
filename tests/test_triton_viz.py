"""--triton-viz without triton-viz (or on a triton it cannot import): a clear message, exit 2;
and the offline page's import map covers every esm.sh import of the installed triton-viz."""
import os
from pathlib import Path

import pytest

from grader.app import cli, triton_viz_view, viewer
from grader.app.triton_viz_view import LOCAL_MODULES, VENDOR, import_map, offline_page
from grader.app.viewer import INSTALL, unavailable_reason
from pristine import PRISTINE


def test_new_triton_is_refused_with_the_working_version():
    reason = unavailable_reason(triton_version="3.8.0", has_triton_viz=True)
    assert "triton 3.8.0" in reason and "3.7.1" in reason and INSTALL in reason


def test_missing_triton_viz_says_how_to_install():
    reason = unavailable_reason(triton_version="3.7.1", has_triton_viz=False)
    assert "not installed" in reason and INSTALL in reason
    assert unavailable_reason(triton_version="3.7.1", has_triton_viz=True) is None


@pytest.mark.parametrize("why", ["triton-viz 3.0 imports only on triton < 3.8, and this environment has triton 3.9.0",
                                 "triton-viz is not installed"])
def test_cli_exits_2_with_the_message_and_no_traceback(monkeypatch, capsys, why):
    monkeypatch.setattr(viewer, "unavailable_reason", lambda: f"{why}. {INSTALL}")
    assert cli.main(["puzzle04", "--solutions", "--triton-viz", "--root", str(PRISTINE)]) == cli.USAGE_ERROR
    err = capsys.readouterr().err
    assert why in err and INSTALL in err and "Traceback" not in err


def test_every_esm_import_of_the_page_is_vendored():
    urls = {"https://esm.sh/three@0.155.0", "https://esm.sh/three@0.155.0/examples/jsm/controls/OrbitControls.js",
            "https://esm.sh/troika-three-text@0.52.4?deps=three@0.155.0"}
    imports, missing = import_map(urls)
    assert not missing and urls <= set(imports["imports"])
    for local in LOCAL_MODULES.values():
        assert (VENDOR / local.split("/vendor/", 1)[1]).is_file(), local
    page = offline_page("<html><head><title>t</title></head><body></body></html>", imports)
    assert page.index('type="importmap"') < page.index("</head>") and "defaultFontURL" in page


def test_vendored_files_are_small_and_licensed():
    files = [p for p in VENDOR.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 2_000_000
    for folder in (p for p in VENDOR.iterdir() if p.is_dir()):
        assert any(f.name.startswith("LICENSE") for f in folder.iterdir()), folder


def test_installed_triton_viz_page_needs_nothing_else_from_esm_sh():
    if unavailable_reason():
        if os.environ.get("TP_REQUIRE_VIZ") == "1":
            pytest.fail(unavailable_reason())
        pytest.skip(unavailable_reason())
    import triton_viz.visualizer.interface as interface
    urls = triton_viz_view.esm_imports(Path(interface.app.static_folder))
    assert urls, "triton-viz's page no longer imports from esm.sh: revisit grader/app/triton_viz_view.py"
    assert import_map(urls)[1] == []
