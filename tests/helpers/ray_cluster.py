"""What the `--engine ray` tests (labels, adapt) share: a local Ray cluster, a head node and one worker node, one
CPU each, so two runs at once, in worker processes of their own (skipped where Ray is not installed); and the
checks that bad engine options, a missing Ray and an unreachable cluster are one error line each."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import sentforge
from conftest import assert_one_line_error, run_cli

HELPERS = Path(__file__).parent


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    with pytest.MonkeyPatch.context() as patch:
        # The nodes' worker processes import this tree's sentforge, and the helpers whose callbacks travel to them.
        patch.setenv("PYTHONPATH", os.pathsep.join([str(Path(sentforge.__file__).parents[1]), str(HELPERS),
                                                    os.environ.get("PYTHONPATH", "")]))
        nodes = started(lambda: Cluster(initialize_head=True, head_node_args={"num_cpus": 1,
                                                                            "include_dashboard": False}))
        started(lambda: nodes.add_node(num_cpus=1))
        yield nodes
        nodes.shutdown()


def started(start, tries: int = 3):
    """start() again when a node misses Ray's fixed 30 s to register, as on a busy machine (its processes are
    stopped by Ray when that happens)."""
    for attempt in range(tries):
        try:
            return start()
        except Exception as err:  # Ray raises a bare Exception for it
            if "timed out during startup" not in str(err) or attempt == tries - 1:
                raise


def assert_engine_errors(command: list, output: Path, capsys, monkeypatch) -> None:
    """`command` (a command line ending in `--engine ray`) fails with one error line, exit code 2 and nothing
    written to `output`: given Ray's options without the engine, another engine, without Ray installed, and
    (where Ray is installed) with an address where no cluster answers."""
    assert_one_line_error(*run_cli([*command[:-2], "--cpus-per-run", "2"], capsys)[::2], "--engine ray")
    assert_one_line_error(*run_cli([*command[:-2], "--gpus-per-run", "1"], capsys)[::2], "--engine ray")
    assert_one_line_error(*run_cli([*command[:-1], "spark"], capsys)[::2], "--engine 'spark'", "local, ray")
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "ray", None)  # what an installation without Ray gives: ImportError
        assert_one_line_error(*run_cli(command, capsys)[::2], "--engine ray needs Ray", "sentforge[ray]")
    assert not output.exists()
    pytest.importorskip("ray")
    code, err = run_cli([*command, "--address", "127.0.0.1:9"], capsys)[::2]
    assert_one_line_error(code, err, "--address 127.0.0.1:9", "no Ray cluster answers there", "ray start --head")
    assert not output.exists()
