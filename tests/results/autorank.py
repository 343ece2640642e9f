"""Friedman test, Nemenyi critical difference and CD-diagram groups from autorank 1.3.0.

autorank (Herbold 2020, PyPI ``autorank``) is the reference of
:func:`bayes_ir.frequentist.friedman_nemenyi`. ``autorank_reference(frame)`` is how the
numbers below were made (``python -c "from results.autorank import store; store()"`` from
``tests/`` prints them): ``autorank(frame, alpha=0.05, force_mode="nonparametric")`` (the
Friedman test and the Nemenyi critical difference, whatever autorank's normality tests
say), the mean ranks of ``result.rankdf`` (rank 1 = highest score, ties averaged) and
the groups of its critical-difference diagram, ``autorank._util.get_sorted_rank_groups``
on the result sorted by mean rank (what ``cd_diagram`` draws). autorank reads the
studentized range from statsmodels' ``qsturng`` table approximation; bayes_ir from
scipy's distribution, so the CDs agree to 5e-5 relative for up to 10 systems (both
within a few units in the last digit of Demšar's Table 5).

Data: ``LETTERS``: the 30 topics x 8 systems of :mod:`results.letters` (overlapping
groups); ``BINARY``: :func:`binary_scores`, 40 items x 12 systems of 0/1 scores (numpy
seed 31: item difficulty N(0, 1), system logits 1.5 - 0.2 k), where most items tie.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

AUTORANK_VERSION = "1.3.0"


def binary_scores() -> pd.DataFrame:
    """40 items x 12 systems of correct (1) / wrong (0), many ties within an item."""
    rng = np.random.default_rng(31)
    logit = 1.5 - 0.2 * np.arange(12)[None, :] + rng.normal(0, 1, (40, 1))
    y = (rng.random((40, 12)) < 1 / (1 + np.exp(-logit))).astype(float)
    return pd.DataFrame(y, columns=[f"m{k:02d}" for k in range(12)])


def letters_scores() -> pd.DataFrame:
    """The table of :mod:`results.letters`, topics as rows, systems as columns."""
    from results.letters import SCORES, SYSTEMS

    return pd.DataFrame(SCORES, columns=SYSTEMS)


def autorank_reference(frame: pd.DataFrame) -> dict:
    """Run autorank on ``frame`` (rows topics, columns systems): CD, p-value, ranks, groups."""
    import contextlib
    import io

    from autorank import autorank
    from autorank._util import get_sorted_rank_groups

    with contextlib.redirect_stdout(io.StringIO()):
        result = autorank(frame, alpha=0.05, force_mode="nonparametric")
    ordered = result._replace(rankdf=result.rankdf.sort_values(by="meanrank"))
    _, names, groups = get_sorted_rank_groups(ordered, False)
    return {
        "cd": float(result.cd),
        "pvalue": float(result.pvalue),
        "meanranks": {str(k): float(v) for k, v in result.rankdf["meanrank"].items()},
        "groups": [sorted(str(n) for n in names[a : b + 1]) for a, b in groups],
    }


def store() -> None:
    """Print the stored results below (run with autorank installed)."""
    import pprint

    for name, frame in (("LETTERS", letters_scores()), ("BINARY", binary_scores())):
        print(f"{name} = ", end="")
        pprint.pprint(autorank_reference(frame), width=100, sort_dicts=True)


# ---- stored by store() with autorank 1.3.0
LETTERS = {
    "cd": 1.9168845030035278,
    "groups": [["s1", "s2", "s3"], ["s3", "s4", "s5", "s6"], ["s4", "s5", "s6", "s7", "s8"]],
    "meanranks": {
        "s1": 2.6333333333333333,
        "s2": 2.1666666666666665,
        "s3": 3.8666666666666667,
        "s4": 4.766666666666667,
        "s5": 5.2,
        "s6": 4.866666666666666,
        "s7": 5.866666666666666,
        "s8": 6.633333333333334,
    },
    "pvalue": 4.8478522322330606e-15,
}
BINARY = {
    "cd": 2.6348233341437064,
    "groups": [
        ["m00", "m01", "m02", "m03", "m04", "m05", "m06", "m07", "m09", "m10", "m11"],
        ["m01", "m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10", "m11"],
    ],
    "meanranks": {
        "m00": 4.8875,
        "m01": 5.6375,
        "m02": 5.0375,
        "m03": 5.1875,
        "m04": 6.2375,
        "m05": 6.9875,
        "m06": 7.1375,
        "m07": 7.2875,
        "m08": 7.7375,
        "m09": 7.4375,
        "m10": 7.4375,
        "m11": 6.9875,
    },
    "pvalue": 1.4591141484623836e-08,
}
