"""The start model unchanged: always a candidate, so that adapt never returns a worse model."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sentforge.adaptation.candidates.base import CandidateKind
from sentforge.adaptation.method import Candidate, Method
from sentforge.adaptation.pipeline import measured_rerank_seconds
from sentforge.adaptation.result import DONE, CandidateResult, StartResult
from sentforge.adaptation.runner import RunContext, macro_f1_of
from sentforge.adaptation.state_records import MeasuredCosts
from sentforge.harness.dev_scores import main_score, metric_of, save_items, scored_with_items, task_metrics


@dataclass(frozen=True)
class StartModel(CandidateKind):
    """The start model unchanged, scored on dev (and test); its evaluations' timings are the costs the time plan
    is measured on (with a --cross-encoder, the re-ranking's too), so a failure of it (a bad --model) stops the
    run: every choice is measured against it."""

    result_type = StartResult
    start_model = True
    candidate: Candidate

    def run(self, context: RunContext) -> CandidateResult:
        from sentforge.evaluation.own.classes import ClassesTask
        from sentforge.loading import load

        inputs, started = context.inputs, time.monotonic()
        encoder = load(self.candidate.model, device=context.train.device)
        load_s = time.monotonic() - started
        result = self.candidate.outcome(DONE, model_path=str(self.candidate.model), evaluations=[])
        if isinstance(inputs.dev, ClassesTask):
            # One prediction of the dev texts gives the score and the per-text correctness that runner.record
            # would predict again: a dev pass of class-labelled data encodes the labelled texts too.
            metrics, items, dev_s = scored_with_items(inputs.dev, encoder)
            save_items(context.state.output, self.candidate.name, items)
            result = result.update(dev=float(metrics[metric_of(inputs.dev)]), **macro_f1_of(result, "dev", metrics))
        else:
            value, dev_s = main_score(inputs.dev, encoder)
            result = result.update(dev=value)
        test_s = 0.0
        if inputs.test is not None:
            metrics, test_s = task_metrics(inputs.test, encoder)
            result = result.update(test=float(metrics[metric_of(inputs.test)]), test_metric=metric_of(inputs.test),
                                   **macro_f1_of(result, "test", metrics))
        rerank_s = pair_s = None
        if inputs.cross_encoder is not None and context.state.measured is None:
            rerank_s, pair_s = measured_rerank_seconds(inputs.cross_encoder, inputs.dev, inputs.test,
                                                       inputs.labelled_pairs(), context.train.device)
        context.state.measured_start(MeasuredCosts(dev_s, test_s, dev_s / (len(set(inputs.dev.texts())) or 1),
                                                   load_s, rerank_s, pair_s=pair_s))
        return result.update(wall_s=round(time.monotonic() - started, 2))

    def run_or_fail(self, context: RunContext) -> CandidateResult:
        return self.run(context)

    @classmethod
    def timed_encoders(cls, meta_members: int) -> int:
        return 1


METHODS = (Method("start", StartModel, 0, "the start model unchanged (always a candidate: adapt never returns a worse "
                                          "model)"),)
