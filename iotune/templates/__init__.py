"""Files iotune writes for its users, shipped with the package.

``iotune.yaml`` is the commented starter config ``iotune init`` writes (and the built-in
defaults of commands run without a config).
"""

from importlib import resources


def starter_config() -> str:
    """The text of the commented starter config."""
    return resources.files(__name__).joinpath("iotune.yaml").read_text()
