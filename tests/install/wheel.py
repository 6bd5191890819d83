"""Building the wheel and installing it into new virtualenvs, for the packaging tests and ``tools/``.

A virtualenv made here has no pip of its own: the running interpreter's pip installs into it
(``pip --python VENV``). ``overlay=True`` adds the running environment's site-packages *after* the new
venv's own (a ``.pth`` path line: its own ``.pth`` files, an editable ragline's finder among them, are not
run), so the wheel installed with ``--no-deps`` is the ragline imported, beside the locked dependencies
(installed with ``--ignore-installed`` too, so that pip never uninstalls the running environment's ragline).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_wheel(out: Path) -> Path:
    """``python -m build`` of the checkout: the sdist, then the wheel built from that sdist, as a user's
    build would (``--no-isolation``: the build backend of this environment, no registry needed)."""
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = out.glob("ragline-*.whl")
    return wheel


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def make_venv(path: Path, overlay: bool = False) -> Path:
    """A new virtualenv (no system site-packages); its python."""
    venv.EnvBuilder(with_pip=False, clear=True).create(path)
    python = path / "bin" / "python"
    if overlay:
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        base = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
        Path(purelib, "_base_environment.pth").write_text("\n".join(base) + "\n")
    return python


def pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """This interpreter's pip, installing into the environment of ``python``."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", *args],
        env=clean_env(),
        check=True,
        capture_output=True,
        text=True,
    )


def versions(python: Path, names: list[str]) -> dict[str, str]:
    """The installed version of each distribution in ``names``, as the environment of ``python`` sees it."""
    code = "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    done = subprocess.run(
        [str(python), "-c", code, *names], env=clean_env(), check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)


def imported_from(python: Path, modules: list[str], cwd: Path) -> list[Path]:
    """The file each module of ``modules`` is imported from by ``python``, run in ``cwd``."""
    code = "import importlib, sys; print(*(importlib.import_module(m).__file__ for m in sys.argv[1:]))"
    done = subprocess.run(
        [str(python), "-c", code, *modules], cwd=cwd, env=clean_env(), check=True, capture_output=True, text=True
    )
    return [Path(p) for p in done.stdout.split()]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a command of an installed ragline: no PYTHONPATH to a checkout, no model hub."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **extra)
    return env
