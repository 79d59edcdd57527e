"""When a model's predicted times may be shown as numbers, and the words that go beside them.

A prediction is only as good as the model's error on configurations it was not fitted on, so
the measure is the cross-validated RMS relative error (``ModelStats.cv_rms_relative_error``).
Above :data:`TRUSTED_CV_ERROR` a typical prediction is off by more than half the measured
time: it may still rank configurations usefully (that is all the search asks of it) but its
times are not to be read as times. 0.5 is where the sign of a comparison against the
default at the speedups I/O tuning typically finds (1.5-3x) can be wrong for a typical
prediction.
"""

from __future__ import annotations

import math

#: Above this cross-validated RMS relative error, predicted times are not to be trusted.
TRUSTED_CV_ERROR = 0.5
#: Shown in place of a prediction the model cannot make: a time of zero or less (the
#: paper's basis is linear in its terms, so far from its data it can cross zero).
NO_PREDICTION = "—"


def possible(predicted: float | None) -> bool:
    """Whether ``predicted`` is a time a run could take (positive and finite)."""
    return predicted is not None and math.isfinite(predicted) and predicted > 0


def prediction_warning(cv_rms_relative_error: float | None) -> str | None:
    """One line warning that predictions cannot be trusted, or None when they can."""
    if cv_rms_relative_error is None:
        return ("model: no cross-validated error (too few configurations): treat its "
                "predictions as a ranking only")
    if cv_rms_relative_error > TRUSTED_CV_ERROR:
        return (f"model: cross-validated RMS relative error {cv_rms_relative_error:.2f} is "
                f"above {TRUSTED_CV_ERROR}: its predicted times are not to be trusted, only "
                "the measured ones")
    return None


def error_label(cv_rms_relative_error: float | None) -> str:
    """The short phrase shown beside predictions, e.g. ``model CV error 0.31``."""
    if cv_rms_relative_error is None:
        return "model CV error unknown (too few configurations)"
    flag = "" if cv_rms_relative_error <= TRUSTED_CV_ERROR else ": not to be trusted"
    return f"model CV error {cv_rms_relative_error:.2f}{flag}"
