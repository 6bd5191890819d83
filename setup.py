"""The one build step pyproject.toml cannot declare: the named pipelines go into the package.

The root ``pipelines/`` folder stays where commands and docs name it; a build copies its ``*.toml`` into
``ragline/pipelines/`` of the wheel (no symbolic link, which some installers and platforms drop). A checkout
(and an editable install) reads the root folder directly (``ragline.config._shipped``).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent


class BuildWithPipelines(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "ragline" / "pipelines"
        target.mkdir(parents=True, exist_ok=True)
        for config in sorted((ROOT / "pipelines").glob("*.toml")):
            shutil.copyfile(config, target / config.name)


setup(cmdclass={"build_py": BuildWithPipelines})
