"""``bayes-ir glm``: tables printed, tidy output and Tukey pairs written, errors as one line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from bayes_ir.cli import app, main
from bayes_ir.frequentist.glm import fit_glm, tukey_hsd
from bayes_ir.readers import read_scores

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "example_scores.csv"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="data/example_scores.csv missing")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("glm")
    args = [
        "glm", str(EXAMPLE), "--links", "identity,logit", "--links", "exp",
        "--output", str(out / "links.csv"), "--pairs", str(out / "pairs.csv"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    return result, out


def test_prints_both_tables(run):
    result, _ = run
    assert result.exit_code == 0, result.output
    assert "Residual deviance" in result.output
    assert "Significantly different pairs" in result.output
    for link in ("identity", "logit", "exp"):
        assert link in result.output


def test_outputs_match_the_library(run):
    _, out = run
    links = pd.read_csv(out / "links.csv")
    assert list(links["link"]) == ["identity", "logit", "exp"]
    table = read_scores(EXAMPLE)
    fit = fit_glm(table, link="logit")
    row = links.set_index("link").loc["logit"]
    assert row["deviance"] == pytest.approx(fit.deviance, rel=1e-12)
    assert row["aic"] == pytest.approx(fit.aic, rel=1e-12)
    pairs = pd.read_csv(out / "pairs.csv")
    identity = pairs[pairs["link"] == "identity"].reset_index(drop=True)
    expected = tukey_hsd(table).to_frame()
    assert len(identity) == len(expected) == 45 * 44 // 2
    pd.testing.assert_series_equal(identity["p_adj"], expected["p_adj"], rtol=1e-12)
    assert row["n_significant"] == pairs[pairs["link"] == "logit"]["significant"].sum()


def test_papers_tanh_and_the_inverse_link_by_name(tmp_path):
    out = tmp_path / "links.csv"
    args = ["glm", str(EXAMPLE), "--links", "tanh,atanh", "--output", str(out)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    links = pd.read_csv(out).set_index("link")
    table = read_scores(EXAMPLE)
    for link in ("tanh", "atanh"):  # two different models: g = tanh and g = artanh
        fit = fit_glm(table, link=link)
        assert links.loc[link, "deviance"] == pytest.approx(fit.deviance, rel=1e-12)
    assert links.loc["tanh", "deviance"] != pytest.approx(links.loc["atanh", "deviance"])


def test_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["glm", str(EXAMPLE), "--links", "sqrt"])
    assert exc.value.code == 2
    assert "unknown link 'sqrt'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["glm", str(EXAMPLE), "--boundary", "winsor"])
    assert exc.value.code == 2
    assert "error: --boundary must be one of 'clip'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["glm", str(EXAMPLE), "--alpha", "nan"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip() == "error: --alpha must be a finite number, got nan"
    # -l is --likelihood in fit and risk: glm does not reuse it for another option
    result = CliRunner().invoke(app, ["glm", str(EXAMPLE), "-l", "logit"])
    assert result.exit_code == 2 and "-l" in result.output


def test_best_link_is_visible_without_colour():
    """The best link was only bold, invisible in a log or a pipe; ties were all "best"."""
    args = ["glm", str(ROOT / "data" / "example_trec_eval.txt"), "--links", "identity,logit"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    deviance, pairs = result.output.split("Significantly different pairs")
    assert deviance.count("◀") >= 3 and "◀ best link per column" in deviance
    assert "of 1 (Tukey HSD" in pairs  # two systems: one pair
    table = pairs.split("◀ best link per column")[0]
    assert "◀" not in table  # 0 significant pairs for both links: no best


def test_says_which_pairs_differ_under_the_best_link(run):
    """glm promised "which system pairs differ" and printed only their number."""
    result, out = run
    lines = result.output.splitlines()
    links = pd.read_csv(out / "links.csv").set_index("link")
    best = links["deviance"].idxmin()
    head = next(i for i, line in enumerate(lines) if line.startswith("Pairs that differ"))
    assert lines[head].startswith(f"Pairs that differ under the {best} link (lowest deviance)")
    pairs = pd.read_csv(out / "pairs.csv")
    pairs = pairs[(pairs["link"] == best) & pairs["significant"]]
    assert f"{len(pairs):,} of {45 * 44 // 2:,}" in lines[head]
    better = pairs["system_1"].where(pairs["diff"] > 0, pairs["system_2"])
    worse = pairs["system_2"].where(pairs["diff"] > 0, pairs["system_1"])
    shown = [line.strip() for line in lines[head + 1 : head + 11]]
    assert len(shown) == 10  # the ten systems that beat the most, the rest counted
    for line in shown:
        name, count = line.split(" > ")[0], int(line.split(" > ")[1].split(",")[0])
        assert count == (better == name).sum(), line
        listed = line.split("closest first: ")[1].split(" (+")[0].split(", ")
        assert set(listed) <= set(worse[better == name]), line
    assert (
        lines[head + 11].strip().startswith("(+")
        and "more systems that beat another" in (lines[head + 11])
    )
    full = CliRunner().invoke(
        app, ["glm", str(EXAMPLE), "--links", "identity,logit,exp", "--explain"],
        catch_exceptions=False,
    ).output  # fmt: skip
    listed = [line for line in full.splitlines() if " > " in line and "closest first" in line]
    assert len(listed) == better.nunique() and "(+" not in "".join(listed)
