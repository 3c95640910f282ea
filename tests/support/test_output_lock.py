"""The output's lock sits beside the written-out output path, and the folders made for it go again when the run
wrote nothing into them (a refused run leaves the file system as it was)."""

from __future__ import annotations

import pytest

from sentforge.support.errors import ConfigError
from sentforge.support.output_guard import lock_path, output_lock


def test_a_refused_run_leaves_no_folder(tmp_path):
    output = tmp_path / "new" / "deeper" / "out.npy"
    with pytest.raises(ConfigError), output_lock(output, "encode"):
        assert lock_path(output).is_file()
        raise ConfigError("refused")
    assert list(tmp_path.iterdir()) == []


def test_the_folders_of_a_written_output_stay(tmp_path):
    output = tmp_path / "new" / "deeper" / "out.npy"
    with output_lock(output, "encode"):
        output.write_bytes(b"rows")
    assert output.read_bytes() == b"rows" and sorted(p.name for p in output.parent.iterdir()) == ["out.npy"]


def test_the_lock_of_a_path_through_dot_dot_is_beside_the_folder_it_names(tmp_path):
    assert lock_path(tmp_path / "in" / "nonexistent" / "..") == tmp_path / ".in.lock"
