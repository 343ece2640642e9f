"""The exp, tanh and atanh links: derivatives, domains, closed forms, the logit identity."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.special import expit

from bayes_ir.errors import BayesIRError
from bayes_ir.frequentist.glm.links import (
    LINKS,
    Atanh,
    Exp,
    Tanh,
    UnknownLinkError,
    get_link,
    link_names,
)


@pytest.mark.parametrize("link", [Exp(), Tanh(), Atanh()], ids=["exp", "tanh", "atanh"])
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
    # the paper's tanh: g(mu) = tanh(mu) = (e^mu - e^-mu) / (e^mu + e^-mu)
    np.testing.assert_allclose(Tanh()(mu), (np.exp(mu) - np.exp(-mu)) / (np.exp(mu) + np.exp(-mu)))
    np.testing.assert_allclose(Atanh()(mu), 0.5 * np.log((1 + mu) / (1 - mu)))
    # the two are inverse functions of each other
    np.testing.assert_allclose(Tanh()(Atanh()(mu)), mu, rtol=1e-14)
    assert np.isnan(Exp().inverse(np.array([-1.0, 0.0]))).all()
    assert np.isnan(Tanh().inverse(np.array([-1.0, 1.0, 1.5]))).all()
    assert get_link("exp").eta_range == (0.0, np.inf)
    assert get_link("tanh").eta_range == (-1.0, 1.0)
    assert get_link("tanh").mean_range == (-np.inf, np.inf)
    assert get_link("atanh").mean_range == (-1.0, 1.0)
    assert get_link("tanh").valid_eta(np.array([-0.9, 0.99]))
    assert not get_link("tanh").valid_eta(np.array([0.5, 1.0]))
    assert not get_link("exp").valid_eta(np.array([0.5, 0.0]))
    assert not get_link("identity").valid_eta(np.array([0.5, np.nan]))


def test_half_shifted_tanh_is_logit_of_twice_eta():
    # why the comparison's tanh is mu = tanh(eta): (tanh(eta) + 1) / 2 is logit in disguise
    eta = np.linspace(-6, 6, 101)
    np.testing.assert_allclose((np.tanh(eta) + 1) / 2, expit(2 * eta), rtol=1e-14, atol=1e-15)


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.DomainWarning")
def test_links_work_inside_statsmodels_glm():
    rng = np.random.default_rng(4)
    x = np.column_stack([np.ones(60), rng.uniform(0, 1, 60)])
    for link, beta in ((Exp(), [1.2, 0.5]), (Tanh(), [0.2, 0.5]), (Atanh(), [0.2, 0.5])):
        family = sm.families.Gaussian(link=link, check_link=False)
        y = link.inverse(x @ np.array(beta)) + rng.normal(0, 0.01, 60)
        res = sm.GLM(y, x, family=family).fit()
        assert res.converged
        np.testing.assert_allclose(res.params, beta, atol=0.05)


def test_registry_and_errors():
    assert list(LINKS) == [
        "identity", "log", "exp", "tanh", "logit", "probit", "cauchit", "cloglog",
    ]  # fmt: skip
    assert link_names() == tuple(LINKS)
    assert link_names(extra=True) == (*LINKS, "atanh")
    assert get_link("ARTANH").name == "atanh" and get_link("tanh").factory is Tanh
    assert get_link("Cauchy").name == "cauchit"
    assert get_link(" LOGIT ").r_name == "logit"
    with pytest.raises(UnknownLinkError, match="unknown link 'sqrt'.*identity.*atanh"):
        get_link("sqrt")
    assert issubclass(UnknownLinkError, BayesIRError)
    assert issubclass(UnknownLinkError, ValueError)
