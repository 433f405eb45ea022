"""Finding libfstitch: the order of places, the failure message, the version check.

Each case runs in a fresh interpreter, since a process loads the library once.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import fstitch
from fstitch import _lib, _loader

PACKAGE_PARENT = str(pathlib.Path(fstitch.__file__).resolve().parents[1])
LIBRARY = pathlib.Path(fstitch.library_path()).resolve()
LIB_DIR = str(LIBRARY.parent)

PROBE = textwrap.dedent(
    """
    import fstitch
    try:
        print("LOADED", fstitch.library_path())
    except fstitch.Error as error:
        print("ERROR", error.status.c_name, error.message)
    """
)


def probe(tmp_path, **overrides) -> str:
    """Runs PROBE with a clean environment plus `overrides`; returns its output."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("FSTITCH_LIBRARY", "FSTITCH_LIB_DIR", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH")
    }
    # pkg-config finds nothing unless a test provides a .pc file.
    env["PKG_CONFIG_PATH"] = str(tmp_path / "no-pc")
    env["PKG_CONFIG_LIBDIR"] = str(tmp_path / "no-pc")
    env["PYTHONPATH"] = PACKAGE_PARENT
    env.update(overrides)
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_never_needs_the_library(tmp_path):
    env = {
        "PYTHONPATH": PACKAGE_PARENT,
        "PATH": os.environ.get("PATH", ""),
        "FSTITCH_LIBRARY": "/nonexistent/x.so",
    }
    code = "import fstitch; print(fstitch.f32, fstitch.Status.SHAPE.c_name)"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["f32", "FST_ERROR_SHAPE"]


def test_fstitch_library_comes_first(tmp_path):
    copy = tmp_path / "copy" / "libfstitch.so.1"
    copy.parent.mkdir()
    shutil.copy(LIBRARY, copy)
    output = probe(tmp_path, FSTITCH_LIBRARY=str(copy), FSTITCH_LIB_DIR=LIB_DIR)
    assert output == f"LOADED {copy}"


def test_fstitch_lib_dir_is_next(tmp_path):
    output = probe(tmp_path, FSTITCH_LIBRARY=str(tmp_path / "missing.so"), FSTITCH_LIB_DIR=LIB_DIR)
    assert output == f"LOADED {os.path.join(LIB_DIR, 'libfstitch.so.1')}"


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config is not installed")
def test_pkg_config_is_next(tmp_path):
    pc_dir = tmp_path / "pc"
    pc_dir.mkdir()
    (pc_dir / "fstitch.pc").write_text(
        f"libdir={LIB_DIR}\n\nName: fstitch\nDescription: test\nVersion: 0.2.0\n"
        "Libs: -L${libdir} -lfstitch\n"
    )
    output = probe(tmp_path, PKG_CONFIG_PATH=str(pc_dir), PKG_CONFIG_LIBDIR=str(pc_dir))
    assert output == f"LOADED {os.path.join(LIB_DIR, 'libfstitch.so.1')}"


def test_the_dynamic_linker_is_last(tmp_path):
    output = probe(tmp_path, LD_LIBRARY_PATH=LIB_DIR)
    assert output == "LOADED libfstitch.so.1"


def test_no_library_names_every_place_tried(tmp_path):
    if probe(tmp_path).startswith("LOADED"):
        pytest.skip("libfstitch.so.1 is installed where the dynamic linker finds it")
    output = probe(
        tmp_path,
        FSTITCH_LIBRARY="/nonexistent/a/libfstitch.so.1",
        FSTITCH_LIB_DIR="/nonexistent/b",
    )
    assert output.startswith("ERROR FST_ERROR_UNSUPPORTED libfstitch could not be loaded")
    for place in (
        "$FSTITCH_LIBRARY: /nonexistent/a/libfstitch.so.1",
        "$FSTITCH_LIB_DIR: /nonexistent/b/libfstitch.so.1",
        "pkg-config",
        "the dynamic linker's search path: libfstitch.so.1",
    ):
        assert place in output


def test_unset_variables_are_named_as_unset(monkeypatch):
    monkeypatch.delenv("FSTITCH_LIBRARY", raising=False)
    monkeypatch.delenv("FSTITCH_LIB_DIR", raising=False)
    descriptions = [description for description, _ in _loader.candidates()]
    assert descriptions[0] == "$FSTITCH_LIBRARY (unset)"
    assert descriptions[1] == "$FSTITCH_LIB_DIR (unset)"
    assert descriptions[-1] == "the dynamic linker's search path"


class _StubFunction:
    def __init__(self, result):
        self.result = result
        self.restype = None
        self.argtypes = None

    def __call__(self):
        return self.result


class _StubLibrary:
    def __init__(self, version):
        self.fst_version_number = _StubFunction(version)


@pytest.mark.parametrize("version", [10300, 200, 100, 1])
def test_other_versions_are_refused(version):
    with pytest.raises(fstitch.Error) as caught:
        _lib._check_version(_StubLibrary(version), "/some/libfstitch.so.1")
    assert caught.value.status is fstitch.Status.UNSUPPORTED
    assert "/some/libfstitch.so.1" in caught.value.message
    assert f"{version // 10000}.{version // 100 % 100}.{version % 100}" in caught.value.message


@pytest.mark.parametrize("version", [300, 301, 399])
def test_this_major_version_from_minor_3_is_accepted(version):
    _lib._check_version(_StubLibrary(version), "stub")


def test_a_library_lacking_functions_is_refused():
    class Partial:
        fst_version_number = _StubFunction(300)

    with pytest.raises(fstitch.Error) as caught:
        _lib._declare(Partial(), "/old/libfstitch.so.1")
    assert caught.value.status is fstitch.Status.UNSUPPORTED
    assert (
        "fst_kernel_launch" in caught.value.message
        and "/old/libfstitch.so.1" in caught.value.message
    )


def test_the_loaded_library_has_the_binding_major_version():
    assert fstitch.library_version().split(".")[0] == fstitch.__version__.split(".")[0]
