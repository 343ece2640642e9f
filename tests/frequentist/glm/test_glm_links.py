"""The exp and tanh links: derivatives against finite differences, domains, the logit identity."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.special import expit

from bayes_ir.errors import BayesIRError
from bayes_ir.frequentist.glm.links import LINKS, Exp, Tanh, UnknownLinkError, get_link


@pytest.mark.parametrize("link", [Exp(), Tanh()], ids=["exp", "tanh"])
def test_derivatives_match_finite_differences(link):
    mu = np.linspace(0.05, 0.95, 19)
    eta = link(mu)
    h = 1e-6
    np.testing.assert_allclose(link.inverse(eta), mu, rtol=1e-12)
    np.testing.assert_allclose(link.deriv(mu), (link(mu + h) - link(mu - h)) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(
        link.deriv2(mu), (link.deriv(mu + h) - link.deriv(mu - h)) / (2 * h), rtol=1e-6
    )
    np.testing.assert_allclose(
        link.inverse_deriv(eta),
        (link.inverse(eta + h) - link.inverse(eta - h)) / (2 * h),
        rtol=1e-7,
    )
    np.testing.assert_allclose(
        link.inverse_deriv2(eta),
        (link.inverse_deriv(eta + h) - link.inverse_deriv(eta - h)) / (2 * h),
        rtol=1e-5,
    )
    # the generic Link formulas agree with the analytic overrides
    np.testing.assert_allclose(link.inverse_deriv(eta), 1 / link.deriv(mu), rtol=1e-12)


def test_closed_forms():
    mu = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(Exp()(mu), np.exp(mu))
    np.testing.assert_allclose(Tanh()(mu), 0.5 * np.log((1 + mu) / (1 - mu)))
    assert np.isnan(Exp().inverse(np.array([-1.0, 0.0]))).all()


def test_half_shifted_tanh_is_logit_of_twice_eta():
    # why the comparison's tanh is mu = tanh(eta): (tanh(eta) + 1) / 2 is logit in disguise
    eta = np.linspace(-6, 6, 101)
    np.testing.assert_allclose((np.tanh(eta) + 1) / 2, expit(2 * eta), rtol=1e-14, atol=1e-15)


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.DomainWarning")
def test_links_work_inside_statsmodels_glm():
    rng = np.random.default_rng(4)
    x = np.column_stack([np.ones(60), rng.uniform(0, 1, 60)])
    for link in (Exp(), Tanh()):
        family = sm.families.Gaussian(link=link, check_link=False)
        y = link.inverse(x @ np.array([1.2, 0.5])) + rng.normal(0, 0.01, 60)
        res = sm.GLM(y, x, family=family).fit()
        assert res.converged
        np.testing.assert_allclose(res.params, [1.2, 0.5], atol=0.05)


def test_registry_and_errors():
    assert list(LINKS) == [
        "identity", "log", "exp", "tanh", "logit", "probit", "cauchit", "cloglog",
    ]  # fmt: skip
    assert get_link("Cauchy").name == "cauchit"
    assert get_link(" LOGIT ").r_name == "logit"
    with pytest.raises(UnknownLinkError, match="unknown link 'sqrt'.*identity"):
        get_link("sqrt")
    assert issubclass(UnknownLinkError, BayesIRError)
    assert issubclass(UnknownLinkError, ValueError)
