"""Finding and loading libfstitch.so.1.

The places tried, in order:

1. ``$FSTITCH_LIBRARY``: the path of the library file itself;
2. ``$FSTITCH_LIB_DIR/libfstitch.so.1``;
3. ``$(pkg-config --variable=libdir fstitch)/libfstitch.so.1``;
4. ``libfstitch.so.1`` through the dynamic linker's search (``LD_LIBRARY_PATH``,
   ``/etc/ld.so.cache``, the default directories).

The first that loads wins. When none does, the error names every place and why it failed.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

from .errors import Error, Status

#: The file name the library has under its SONAME.
SONAME = "libfstitch.so.1"


def _pkg_config_libdir() -> tuple[str, str]:
    """The libdir pkg-config reports for fstitch, or ("", why not)."""
    program = shutil.which("pkg-config")
    if program is None:
        return "", "pkg-config is not installed"
    try:
        result = subprocess.run(
            [program, "--variable=libdir", "fstitch"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return "", f"pkg-config failed: {error}"
    libdir = result.stdout.strip()
    if result.returncode != 0 or not libdir:
        return "", "pkg-config does not know fstitch"
    return libdir, ""


def candidates() -> list[tuple[str, str]]:
    """(description, what to dlopen) for each place to try, in order.

    A place that cannot even be formed (an unset variable, no pkg-config) has an empty
    second element and its reason in the description.
    """
    places: list[tuple[str, str]] = []
    library = os.environ.get("FSTITCH_LIBRARY", "")
    places.append(("$FSTITCH_LIBRARY", library) if library else ("$FSTITCH_LIBRARY (unset)", ""))
    lib_dir = os.environ.get("FSTITCH_LIB_DIR", "")
    if lib_dir:
        places.append(("$FSTITCH_LIB_DIR", os.path.join(lib_dir, SONAME)))
    else:
        places.append(("$FSTITCH_LIB_DIR (unset)", ""))
    libdir, why_not = _pkg_config_libdir()
    if libdir:
        places.append(("pkg-config libdir", os.path.join(libdir, SONAME)))
    else:
        places.append((f"pkg-config ({why_not})", ""))
    places.append(("the dynamic linker's search path", SONAME))
    return places


def load() -> tuple[ctypes.CDLL, str]:
    """Loads the first library that opens; returns it and where it came from.

    Raises:
        Error: ``Status.UNSUPPORTED`` naming every place tried when none loads.
    """
    tried: list[str] = []
    for description, target in candidates():
        if not target:
            tried.append(description)
            continue
        try:
            return ctypes.CDLL(target), target
        except OSError as error:
            tried.append(f"{description}: {target}: {error}")
    raise Error(
        Status.UNSUPPORTED,
        "libfstitch could not be loaded; tried "
        + "; ".join(tried)
        + ". Set FSTITCH_LIBRARY to the path of libfstitch.so.1"
        " or FSTITCH_LIB_DIR to its directory",
    )
