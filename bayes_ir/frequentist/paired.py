r"""Classical paired significance tests of each challenger against the champion.

For every challenger :math:`c` the per-topic differences :math:`\delta_t = x_{tc} - x_{th}`
over the topics both systems scored are tested for "no difference" with

=================  ================================================================
``t``              paired t-test, :func:`scipy.stats.ttest_rel` (Student 1908)
``randomization``  Fisher's randomisation (sign-flip permutation) test of the mean
                   difference, :func:`scipy.stats.permutation_test` with
                   ``permutation_type="samples"``: exact (all :math:`2^T` sign
                   patterns) when :math:`2^T \le` ``n_resamples``, else Monte Carlo
                   (Smucker, Allan and Carterette 2007)
``wilcoxon``       Wilcoxon signed-rank test, :func:`scipy.stats.wilcoxon`
``sign``           sign test: ties dropped, :func:`scipy.stats.binomtest` at 1/2
``bootstrap``      paired bootstrap test of the mean difference: the differences are
                   shifted to mean 0 and resampled; the p-value is the share of
                   resampled means at least as far from 0 as the observed one
                   (Efron and Tibshirani 1993, Section 16.4; Sakai 2006)
=================  ================================================================

The differences are rounded to :data:`bayes_ir.defaults.TIE_DIGITS` significant digits of
the larger of the two systems' largest absolute scores before any test, so that ties and
zero differences (which the Wilcoxon and sign tests count) do not depend on float noise:
``0.3 - 0.1`` and ``0.2`` give one difference and the same p-values.

The tests are two-sided by default, and the p-values of the challengers are adjusted for multiple
comparisons within each test with :func:`statsmodels.stats.multitest.multipletests`
(``holm``, ``bonferroni``, ``fdr_bh`` for Benjamini-Hochberg, or ``none``).

How this relates to the Bayesian answer: a p-value is the probability of a difference at
least as large as the observed one if the systems were equally good; it is not the
probability that the challenger is better. The hierarchical model's P(better) answers
that question directly; with many topics and weak priors the one-sided t-test p-value is
close to 1 - P(better), and the hierarchical model also shares information across
systems and reports how large the gain is likely to be.

References
----------
Efron, B., and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman &
Hall. Sakai, T. (2006). Evaluating evaluation metrics based on the bootstrap. *SIGIR '06*.
Smucker, M. D., Allan, J., and Carterette, B. (2007). A comparison of statistical
significance tests for information retrieval evaluation. *CIKM '07*, 623-632.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayes_ir import defaults, validate
from bayes_ir.errors import OptionError, RoleError
from bayes_ir.table import ScoreTable

__all__ = ["CORRECTIONS", "PAIRED_TEST_COLUMNS", "TESTS", "PairedTests", "paired_tests"]

#: The tests, in the order of the table.
TESTS: tuple[str, ...] = ("t", "randomization", "wilcoxon", "sign", "bootstrap")
#: Multiple-comparison corrections (statsmodels' method names) and their labels.
CORRECTIONS: dict[str, str] = {"holm": "Holm", "bonferroni": "Bonferroni",
                               "fdr_bh": "Benjamini-Hochberg", "none": "none"}  # fmt: skip
#: Columns of :meth:`PairedTests.to_frame`.
PAIRED_TEST_COLUMNS = (
    "challenger",
    "champion",
    "test",
    "topics",
    "mean_difference",
    "effect_size",
    "statistic",
    "p_value",
    "p_adjusted",
    "significant",
    "method",
)
_ALIASES = {"ttest": "t", "paired_t": "t", "permutation": "randomization",
            "fisher": "randomization", "signed_rank": "wilcoxon", "bh": "fdr_bh",
            "benjamini-hochberg": "fdr_bh"}  # fmt: skip


@dataclass(frozen=True)
class PairedTests:
    """Paired significance tests of each challenger against the champion.

    Attributes
    ----------
    frame
        One row per challenger and test, :data:`PAIRED_TEST_COLUMNS`; ``effect_size`` is
        Cohen's :math:`d_z` (mean difference over the SD of the differences).
    champion
        The reference system.
    correction
        The multiple-comparison correction applied within each test.
    alpha
        The significance level of ``significant``.
    alternative
        ``"two-sided"``, ``"greater"`` (challenger better) or ``"less"``.
    notes
        What the loader changed or left out in the table (the table's ``notes``).
    """

    frame: pd.DataFrame
    champion: str
    correction: str
    alpha: float
    alternative: str
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """Return the tests, one row per challenger and test (:data:`PAIRED_TEST_COLUMNS`)."""
        return self.frame.copy()

    def summary(self) -> str:
        """Return a ranx-style table: mean difference and adjusted p-values, marks (text)."""
        from bayes_ir.report.paired import paired_summary

        return paired_summary(self)

    def to_latex(self, **options: Any) -> str:
        """Return the table as LaTeX in the package's style (``caption``, ``label``, ``digits``).

        See :func:`bayes_ir.report.paired.paired_latex`.
        """
        from bayes_ir.report.paired import paired_latex

        return paired_latex(self, **options)

    def __str__(self) -> str:
        return self.summary()


def _canonical(name: str, known: Iterable[str], what: str) -> str:
    key = str(name).strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key not in known:
        raise OptionError(f"unknown {what} {name!r}: choose from {', '.join(known)}")
    return key


def _paired_differences(champion: np.ndarray, challenger: np.ndarray) -> np.ndarray:
    r"""Return ``challenger - champion`` rounded to the precision of the scores.

    With :math:`s = \max(|x|)` over both systems' scores and :math:`k` =
    :data:`bayes_ir.defaults.TIE_DIGITS`, each difference is rounded to
    :math:`k - \lceil \log_{10} s \rceil` decimals (9 decimals for scores in (0.1, 1]),
    a relative :math:`10^{-k}` of the scores: far below any real difference of two
    evaluation scores, far above the :math:`10^{-16}` noise of subtracting floats.
    """
    champion, challenger = np.asarray(champion, float), np.asarray(challenger, float)
    d = challenger - champion
    scale = float(max(np.max(np.abs(champion), initial=0), np.max(np.abs(challenger), initial=0)))
    if scale == 0 or not np.isfinite(scale):
        return d
    return np.round(d, defaults.TIE_DIGITS - int(np.ceil(np.log10(scale))))


#: Resamples x topics drawn at once by the bootstrap and randomisation tests (80 MB).
_BATCH_CELLS = 10_000_000


def _batch(n: int, size: int) -> int | None:
    """Resamples per batch so that one holds at most :data:`_BATCH_CELLS` (``None``: all)."""
    return None if n * size <= _BATCH_CELLS else max(1, _BATCH_CELLS // size)


def _bootstrap_p(d: np.ndarray, n: int, rng: np.random.Generator, alternative: str) -> float:
    centred = d - d.mean()
    step = _batch(n, d.size) or n
    means = np.concatenate([
        centred[rng.integers(0, d.size, size=(min(step, n - start), d.size))].mean(axis=1)
        for start in range(0, n, step)
    ])  # fmt: skip
    obs = d.mean()
    if alternative == "greater":
        hits = np.sum(means >= obs)
    elif alternative == "less":
        hits = np.sum(means <= obs)
    else:
        hits = np.sum(np.abs(means) >= abs(obs))
    return float((hits + 1) / (n + 1))


def _one_test(
    test: str, d: np.ndarray, *, alternative: str, n_resamples: int, rng: np.random.Generator
) -> tuple[float, float, str]:
    """Return ``(statistic, p_value, method)`` of one test on the differences ``d``."""
    if test == "t":
        res = stats.ttest_1samp(d, 0.0, alternative=alternative)
        return float(res.statistic), float(res.pvalue), f"paired t ({d.size - 1} df)"
    if test == "randomization":
        exact = 2**d.size <= n_resamples
        res = stats.permutation_test(
            (d,), np.mean, permutation_type="samples", alternative=alternative,
            n_resamples=n_resamples, rng=rng, batch=_batch(min(n_resamples, 2**d.size), d.size),
        )  # fmt: skip
        how = "exact, all sign flips" if exact else f"{n_resamples} random sign flips"
        return float(res.statistic), float(res.pvalue), f"randomisation ({how})"
    if test == "wilcoxon":
        res = stats.wilcoxon(d, alternative=alternative)
        return float(res.statistic), float(res.pvalue), "Wilcoxon signed-rank"
    if test == "sign":
        wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
        if wins + losses == 0:
            return float("nan"), 1.0, "sign test (every topic tied)"
        res = stats.binomtest(wins, wins + losses, 0.5, alternative=alternative)
        return float(wins), float(res.pvalue), f"sign test ({wins} wins, {losses} losses)"
    p = _bootstrap_p(d, n_resamples, rng, alternative)
    return float(d.mean()), p, f"bootstrap ({n_resamples} resamples)"


def paired_tests(
    table: ScoreTable,
    *,
    champion: str | None = None,
    challengers: str | Iterable[str] | None = None,
    test: str | Sequence[str] = TESTS,
    correction: str = "holm",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int | None = None,
) -> PairedTests:
    r"""Test each challenger against the champion with classical paired tests.

    Parameters
    ----------
    table
        Scores with roles (or pass ``champion`` and ``challengers``), one collection and
        one measure.
    champion, challengers
        Override the table's roles.
    test
        One test or several of :data:`TESTS` (aliases: ``ttest``, ``permutation``,
        ``signed_rank``).
    correction
        ``"holm"`` (default), ``"bonferroni"``, ``"fdr_bh"`` (Benjamini-Hochberg) or
        ``"none"``, applied over the challengers within each test.
    alpha
        Significance level of the ``significant`` column.
    alternative
        ``"two-sided"``, ``"greater"`` (the challenger is better) or ``"less"``.
    n_resamples
        Sign flips of the randomisation test (exact when :math:`2^T` is at most this)
        and resamples of the bootstrap test.
    seed
        Seed of the randomisation and bootstrap tests.

    Returns
    -------
    PairedTests

    Notes
    -----
    See the module docstring for each test; Cohen's :math:`d_z = \bar\delta / s_\delta`.
    """
    from statsmodels.stats.multitest import multipletests

    tests = [test] if isinstance(test, str) else list(test)
    tests = list(dict.fromkeys(_canonical(t, TESTS, "test") for t in tests))
    if not tests:
        raise OptionError("test: name at least one test")
    correction = _canonical(correction, CORRECTIONS, "correction")
    alternative = validate.choice("alternative", alternative, ("two-sided", "greater", "less"))
    alpha = validate.probability("alpha", alpha)
    n_resamples = validate.resamples("n_resamples", n_resamples, minimum=99)
    rng = np.random.default_rng(defaults.SEED if seed is None else validate.seed(seed))
    if champion is not None or challengers is not None:
        table = table.with_roles(champion=champion or table.champion, challengers=challengers)
    if table.champion is None or not table.challengers:
        raise RoleError("paired tests need a champion and at least one challenger")
    matrix: pd.DataFrame = table.matrix().to_pandas()
    rows = []
    for name in table.challengers:
        pair = matrix[[table.champion, name]].dropna()
        d = _paired_differences(pair[table.champion].to_numpy(), pair[name].to_numpy())
        validate.require_topics(
            d.size,
            defaults.MIN_TOPICS_PAIRED,
            method="a paired test",
            where=f"the pair {name!r}, {table.champion!r}",
            paired=True,
        )
        sd = d.std(ddof=1)
        for t in tests:
            if t in ("t", "wilcoxon") and np.all(d == d[0]):  # no spread: the test is undefined
                statistic, p, method = np.nan, np.nan, f"{t}: undefined, constant differences"
            else:
                statistic, p, method = _one_test(t, d, alternative=alternative,
                                                 n_resamples=n_resamples, rng=rng)  # fmt: skip
            rows.append({"challenger": name, "champion": table.champion, "test": t,
                         "topics": d.size, "mean_difference": d.mean(),
                         "effect_size": d.mean() / sd if sd > 0 else float("nan"),
                         "statistic": statistic, "p_value": p, "method": method})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["p_adjusted"] = frame["p_value"]
    if correction != "none":
        for _, idx in frame.groupby("test").groups.items():
            p = frame.loc[idx, "p_value"].to_numpy()
            ok = np.isfinite(p)
            if ok.any():
                adjusted = p.copy()
                adjusted[ok] = multipletests(p[ok], alpha=alpha, method=correction)[1]
                frame.loc[idx, "p_adjusted"] = adjusted
    frame["significant"] = frame["p_adjusted"] < alpha
    return PairedTests(
        frame=frame[list(PAIRED_TEST_COLUMNS)],
        champion=table.champion,
        correction=correction,
        alpha=alpha,
        alternative=alternative,
        notes=tuple(table.notes),
    )
