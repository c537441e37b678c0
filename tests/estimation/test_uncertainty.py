"""The uncertainty formula (estimation/routing/uncertainty.py): each component, their mean, and the
cases that could go wrong (no evidence, one run, invalidated analyses, graders disagreeing)."""

import math
from decimal import Decimal

import pytest

from annotation.scales import prediction_on_unit
from estimation.routing.uncertainty import NO_EVIDENCE, SINGLE_SCORE_SPREAD, proof_uncertainty


def test_no_evidence_is_the_most_uncertain_and_says_so():
    u = proof_uncertainty(verifier_scores=[], meta_scores=[], predictions=[])
    assert u.value == NO_EVIDENCE == 1.0
    assert not u.has_evidence
    assert u.components() == {
        "spread": None,
        "invalidation": None,
        "disagreement": None,
        "rating": None,
        "model_doubt": None,
        "verifier_scores": 0,
        "meta_verified": 0,
        "predictions": 0,
        "ratings": 0,
    }


def test_one_run_is_half_uncertain_not_certain():
    u = proof_uncertainty(verifier_scores=[Decimal("1")])
    assert u.spread == SINGLE_SCORE_SPREAD == 0.5
    assert u.value == 0.5 and u.has_evidence


def test_unanimous_runs_are_certain_and_split_runs_are_not():
    assert proof_uncertainty(verifier_scores=[1, 1, 1, 1]).value == 0.0
    assert proof_uncertainty(verifier_scores=[0, 0]).value == 0.0
    # half at 0, half at 1: the largest spread on 0-1
    assert proof_uncertainty(verifier_scores=[0, 1, 0, 1]).value == 1.0
    # 0, 0.5, 1: std = sqrt(1/6) ~ 0.408, over 0.5
    assert proof_uncertainty(verifier_scores=[0, 0.5, 1]).spread == pytest.approx(
        math.sqrt(1 / 6) / 0.5
    )


def test_invalidated_analyses_raise_the_uncertainty_of_unanimous_runs():
    confirmed = proof_uncertainty(verifier_scores=[0, 0], meta_scores=[[1, 1], [1]])
    invalidated = proof_uncertainty(verifier_scores=[0, 0], meta_scores=[[0, 0], [0, 0.5]])
    assert confirmed.invalidation == 0.0 and confirmed.value == 0.0
    # the first analysis is fully invalidated (1), the second three-quarters (1 - 0.25)
    assert invalidated.invalidation == pytest.approx((1 + 0.75) / 2)
    assert invalidated.meta_verified == 2
    assert invalidated.value == pytest.approx((0 + 0.875) / 2)


def test_analyses_without_scored_meta_verifications_are_not_counted():
    u = proof_uncertainty(verifier_scores=[1, 1], meta_scores=[[], [0]])
    assert (u.invalidation, u.meta_verified) == (1.0, 1)


def test_grader_disagreement_needs_two_predictions():
    assert proof_uncertainty(verifier_scores=[], predictions=[0.5]).disagreement is None
    # a single prediction is no evidence at all: the proof stays "no evidence"
    assert proof_uncertainty(verifier_scores=[], predictions=[0.5]).value == NO_EVIDENCE
    agree = proof_uncertainty(verifier_scores=[], predictions=[1.0, 1.0, 1.0])
    disagree = proof_uncertainty(verifier_scores=[], predictions=[0.0, 1.0])
    assert agree.value == 0.0 and disagree.value == 1.0


def test_the_uncertainty_is_the_mean_of_the_components_present():
    u = proof_uncertainty(
        verifier_scores=[1, 1, 0, 0],  # spread 1
        meta_scores=[[1], [1]],  # invalidation 0
        predictions=[6 / 7, 6 / 7],  # disagreement 0
    )
    assert (u.spread, u.invalidation, u.disagreement) == (1.0, 0.0, 0.0)
    assert u.value == pytest.approx(1 / 3)


def test_predictions_are_put_on_0_1_by_their_scale():
    assert prediction_on_unit(7, "0-7") == 1.0
    assert prediction_on_unit(3.5, "0-7") == 0.5
    assert prediction_on_unit(0.25, "0-1") == 0.25


def test_an_imported_mean_rating_counts_with_the_largest_spread_it_allows():
    assert proof_uncertainty(verifier_scores=[], ratings=[1.0]).value == 0.0
    assert proof_uncertainty(verifier_scores=[], ratings=[0.5]).value == 1.0
    u = proof_uncertainty(verifier_scores=[], ratings=[0.9])
    assert u.rating == pytest.approx(0.6) and u.ratings == 1  # 2 sqrt(0.09)
    assert u.has_evidence


def test_the_rater_models_doubt_counts_where_the_graders_agree():
    # four unanimous verifier scores (spread 0), but the model trusts them little
    u = proof_uncertainty(verifier_scores=[1, 1, 1, 1], posterior=[0.2, 0.2, 0.6])
    assert u.spread == 0.0 and u.model_doubt == pytest.approx(0.6)  # (1 - 0.6) / (2 / 3)
    assert u.value == pytest.approx(0.3)
    assert proof_uncertainty(verifier_scores=[], posterior=[1 / 3] * 3).value == 1.0


def test_the_model_doubts_the_verifiers_label_not_its_own():
    # the model is sure the class is 0 while the verifier's scores say 1 (class 2)
    sure_elsewhere = proof_uncertainty(
        verifier_scores=[1, 1], posterior=[0.9, 0.05, 0.05], label_class=2
    )
    assert sure_elsewhere.model_doubt == 1.0
