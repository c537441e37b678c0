"""The rater model as the agreement page and API show it: the campaign's last rater-model fit
(the model chosen by held-out calibration, and the calibration measured) and its labels'
confidence. The fit is the estimation app's (above adjudication): it registers
its reader from `EstimationConfig.ready` (`estimation.selectors.rater_model_summary`), as job
kinds register themselves; the labels' confidence is a column of FinalLabel, here."""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import Campaign

SummaryReader = Callable[[Campaign], dict | None]
_readers: list[SummaryReader] = []


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
