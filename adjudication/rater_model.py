"""The rater model as the agreement page and API show it: the campaign's last rater-model fit
(the model chosen by held-out calibration, and the calibration measured) and its labels'
confidence. The fit is the estimation app's (above adjudication): it registers
its reader from `EstimationConfig.ready` (`estimation.selectors.rater_model_summary`), as job
kinds register themselves; the labels' confidence is a column of FinalLabel, here."""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import Campaign

SummaryReader = Callable[[Campaign], dict | None]
FreshnessReader = Callable[[Campaign], dict]
_readers: list[SummaryReader] = []
_freshness: list[FreshnessReader] = []


def rater_model_summary_register(reader: SummaryReader) -> None:
    """Registers the reader (a campaign -> its summary, or None before the first fit);
    registering the same one again changes nothing."""
    if reader not in _readers:
        _readers.append(reader)


def rater_model_summary(campaign: Campaign) -> dict | None:
    """The campaign's rater-model summary (`adjudication.apis.RaterModelOutput` gives its
    fields), None before the first fit."""
    if not _readers:
        raise LookupError("no rater model reader is registered (is the estimation app installed?)")
    return _readers[0](campaign)


def rater_model_freshness_register(reader: FreshnessReader) -> None:
    """Registers the reader of the fit's age (a campaign -> {fitted_at, changes, state, words});
    registering the same one again changes nothing."""
    if reader not in _freshness:
        _freshness.append(reader)


def rater_model_freshness(campaign: Campaign) -> dict:
    """How current the campaign's label confidences are: `fitted_at` (None before the first
    fit), `changes` not yet fitted, `state` of the refit they queued (queued, running, failed or
    None), `words` ("fitted 3 min ago, before the 2 latest changes; refit queued"), `checked`
    (the confidences are backed by a calibration measured on enough held-out cases) and, when
    they are not, the `caveat` to state beside them."""
    if not _freshness:
        raise LookupError("no rater model reader is registered (is the estimation app installed?)")
    return _freshness[0](campaign)
