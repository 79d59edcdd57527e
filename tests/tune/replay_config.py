"""A config that tunes the VPIC kernel on a replay CSV, for the tests of the decision."""

from __future__ import annotations

from pathlib import Path

import yaml


def replay_config(tmp_path: Path, data: Path) -> Path:
    """``tmp_path/iotune.yaml``: kernel vpic, store ``s.jsonl``, the replay backend on
    ``data``."""
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({"kernel": {"name": "vpic"}, "store": "s.jsonl",
                                      "backend": {"name": "replay",
                                                  "replay_data": str(data)}}))
    return config
