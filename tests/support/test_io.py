"""Atomic outputs: no silent loss between two writers, umask-respecting modes, stale temporaries of
killed writers cleaned, full disks and unwritable places reported as one error line."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import numpy as np
import pytest

from sentforge.support import io
from sentforge.support.errors import OutputExistsError, OutputWriteError

from conftest import assert_one_line_error, run_cli


def test_publishing_without_overwrite_never_replaces_a_file_written_meanwhile(tmp_path):
    target = tmp_path / "out.npy"
    with pytest.raises(OutputExistsError, match="out.npy"):
        with io.atomic_file(target, "wb", overwrite=False) as handle:
            handle.write(b"second")
            target.write_bytes(b"first")  # another process finished first
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["out.npy"]


def test_overwrite_replaces(tmp_path):
    target = tmp_path / "out.npy"
    target.write_bytes(b"old")
    io.save_npy(target, np.ones(3, np.float32), overwrite=True)
    np.testing.assert_array_equal(np.load(target), np.ones(3))


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_outputs_get_the_mode_the_umask_gives(tmp_path, umask):
    previous = os.umask(umask)
    try:
        io.save_json(tmp_path / "a.json", {"x": 1})
        with io.atomic_dir(tmp_path / "d") as tmp:
            (tmp / "f").write_text("x")
    finally:
        os.umask(previous)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o777 & ~umask


def test_stale_temporaries_of_killed_writers_are_cleaned(tmp_path):
    # A writer that is killed -9 between creating its temporary and renaming it.
    code = ("import os, sys; from sentforge.support import io\n"
            "with io.atomic_file(sys.argv[1], 'wb'):\n"
            "    os.kill(os.getpid(), 9)\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.npy")], check=False,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    stale = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1 and stale[0].stat().st_size == 0
    live = tmp_path / f".out.npy.{os.getpid()}.abc.tmp"  # a writer still running: kept
    live.write_bytes(b"")
    io.save_npy(tmp_path / "out.npy", np.zeros(2, np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.npy", live.name])


def test_a_full_disk_is_one_error_naming_the_file_and_keeps_the_old_output(tmp_path, monkeypatch, capsys):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    target = tmp_path / "out.npy"
    np.save(target, np.ones(3, np.float32))  # an earlier result: --overwrite may replace only such a file
    previous = target.read_bytes()
    monkeypatch.setattr(io.os, "fsync", full)
    with pytest.raises(OutputWriteError, match="out.npy.*No space left"):
        io.save_npy(target, np.zeros(2, np.float32))
    assert target.read_bytes() == previous
    assert [p.name for p in tmp_path.iterdir()] == ["out.npy"]
    texts = tmp_path / "t.txt"
    texts.write_text("a b\n")
    code, _, err = run_cli(["encode", texts, "--output", target, "--overwrite", "--model", "glove:" + str(
        _glove(tmp_path))], capsys)
    assert_one_line_error(code, err, "out.npy", "No space left")
    assert target.read_bytes() == previous


def _glove(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("a 0.1 0.2\nb 0.3 0.4\n")
    return path


def test_unwritable_output_places_are_one_error_line(tmp_path, capsys):
    texts = tmp_path / "t.txt"
    texts.write_text("a b\n")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run_cli(["encode", texts, "--output", blocker / "out.npy", "--model", "glove:" + str(
        _glove(tmp_path))], capsys)
    assert_one_line_error(code, err, str(blocker))
    assert blocker.read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
def test_read_only_directory_is_one_error_line(tmp_path, capsys):
    texts = tmp_path / "t.txt"
    texts.write_text("a b\n")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    code, _, err = run_cli(["encode", texts, "--output", locked / "out.npy", "--model", "glove:" + str(
        _glove(tmp_path))], capsys)
    assert_one_line_error(code, err, str(locked))


@pytest.mark.parametrize("device", ["foo", "cuda:99", "meta", "mps:7"])
def test_bad_device_is_one_error_line(tmp_path, capsys, device):
    texts = tmp_path / "t.txt"
    texts.write_text("a b\n")
    code, _, err = run_cli(["encode", texts, "--output", tmp_path / "o.npy", "--device", device,
                            "--model", "glove:" + str(_glove(tmp_path))], capsys)
    assert_one_line_error(code, err, "--device", device)
    assert not (tmp_path / "o.npy").exists()
